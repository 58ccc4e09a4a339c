"""Transactions: records written in a committed transaction are read by a read_committed consumer.

    python examples/transactions.py 127.0.0.1:9092

A consume-transform-produce step: read from ``input``, write upper-cased values to ``output`` and
commit the consumed offsets in the same transaction, so the output and the group's progress move
together or not at all. (On Tansu, aborted records are not hidden from read_committed readers; on
noida-db and Kafka they are.) Exits 1 if the output is not what was committed.
"""

from __future__ import annotations

import asyncio
import sys
import uuid

import aiokafka_lite
from aiokafka_lite import NewTopic, TopicPartition


async def main(bootstrap: str) -> int:
    run = uuid.uuid4().hex[:8]
    source, sink, group = f"tx-in-{run}", f"tx-out-{run}", f"tx-group-{run}"
    async with aiokafka_lite.Admin(bootstrap_servers=bootstrap) as admin:
        await admin.create_topics([NewTopic(source, 1, 1), NewTopic(sink, 1, 1)])

    async with aiokafka_lite.Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(5):
            await producer.send(source, f"message {i}".encode())
        await producer.flush()

    async with (
        aiokafka_lite.Consumer(source, bootstrap_servers=bootstrap, group_id=group,
                               auto_offset_reset="earliest", enable_auto_commit=False,
                               isolation_level="read_committed") as consumer,
        aiokafka_lite.Producer(bootstrap_servers=bootstrap, transactional_id=f"tx-{run}") as producer,
    ):
        done = 0
        deadline = asyncio.get_running_loop().time() + 60  # joining a group can take a while
        while done < 5:
            batch = await consumer.poll(timeout_ms=1000)
            if not batch:
                if asyncio.get_running_loop().time() > deadline:
                    print("FAILED: input records did not arrive", file=sys.stderr)
                    return 1
                continue
            async with producer.transaction():  # commits on exit, aborts on error
                offsets: dict[TopicPartition, int] = {}
                for tp, records in batch.items():
                    for r in records:
                        await producer.send(sink, bytes(r.value).upper())
                        offsets[tp] = r.offset + 1
                        done += 1
                await producer.send_offsets_to_transaction(offsets, group)
        print(f"transformed {done} records in transactions")

    async with aiokafka_lite.Consumer(sink, bootstrap_servers=bootstrap, group_id=f"{group}-check",
                                      auto_offset_reset="earliest",
                                      isolation_level="read_committed") as reader:
        values: list[bytes] = []
        deadline = asyncio.get_running_loop().time() + 60
        while len(values) < 5 and asyncio.get_running_loop().time() < deadline:
            batch = await reader.poll(timeout_ms=1000)
            values += [bytes(r.value) for rs in batch.values() for r in rs]

    async with aiokafka_lite.Admin(bootstrap_servers=bootstrap) as admin:
        committed = await admin.list_consumer_group_offsets(group)
        await admin.delete_topics([source, sink])

    want = [f"MESSAGE {i}".encode() for i in range(5)]
    if values != want or committed.get(TopicPartition(source, 0), None) is None:
        print(f"FAILED: read {values!r}, committed {committed!r}", file=sys.stderr)
        return 1
    print(f"OK: read back {len(values)} committed records; group offset "
          f"{committed[TopicPartition(source, 0)].offset}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9092")))

"""Produce a few records and read them back: the api.md snippets as one runnable script.

    python -m aiokafka_lite.examples.produce_consume 127.0.0.1:9092   (or examples/produce_consume.py)

Exits 1 if a record does not come back.
"""

from __future__ import annotations

import asyncio
import sys
import uuid

import aiokafka_lite
from aiokafka_lite import NewTopic, RecordMetadata


async def main(bootstrap: str) -> int:
    topic = f"example-{uuid.uuid4().hex[:8]}"
    async with aiokafka_lite.Admin(bootstrap_servers=bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])

    async with aiokafka_lite.Producer(bootstrap_servers=bootstrap, acks="all", linger_ms=5,
                                      compression_type="lz4") as producer:
        fut = await producer.send(topic, b"value-0", key=b"key-0", headers=[("h", b"v")])
        md: RecordMetadata = await fut  # the broker's ack
        print(f"sent key-0 to partition {md.partition} at offset {md.offset}")
        for i in range(1, 10):
            await producer.send(topic, f"value-{i}".encode(), key=f"key-{i}".encode())
        md = await producer.send_and_wait(topic, b"value-10", key=b"key-10")
        await producer.flush()
        print(f"partitions of {topic}: {sorted(await producer.partitions_for(topic))}")

    expected = {f"key-{i}".encode(): f"value-{i}".encode() for i in range(11)}
    received: dict[bytes, bytes] = {}
    async with aiokafka_lite.Consumer(topic, bootstrap_servers=bootstrap, group_id=f"{topic}-group",
                                      auto_offset_reset="earliest",
                                      # Tansu holds a first join for half the session timeout; keep it short.
                                      session_timeout_ms=10000) as consumer:
        record = await asyncio.wait_for(consumer.getone(), 60)  # includes joining the group
        # Without deserializers keys and values are bytes (or None).
        assert isinstance(record.key, bytes) and isinstance(record.value, bytes)
        received[record.key] = record.value
        deadline = asyncio.get_running_loop().time() + 30
        while len(received) < len(expected) and asyncio.get_running_loop().time() < deadline:
            batch = await consumer.poll(timeout_ms=1000)
            for records in batch.values():
                for r in records:
                    assert isinstance(r.key, bytes) and isinstance(r.value, bytes)
                    received[r.key] = r.value
        await consumer.commit()

    async with aiokafka_lite.Admin(bootstrap_servers=bootstrap) as admin:
        await admin.delete_topics([topic])

    if received != expected:
        print(f"FAILED: {len(received)} of {len(expected)} records came back intact", file=sys.stderr)
        return 1
    print(f"OK: {len(received)} records produced and consumed through {topic}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9092")))

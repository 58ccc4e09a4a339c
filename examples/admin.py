"""The Admin client: topics, offsets, groups and the cluster.

    python examples/admin.py 127.0.0.1:9092
"""

from __future__ import annotations

import asyncio
import sys
import uuid

import aiokafka_lite
from aiokafka_lite import NewTopic, TopicPartition


async def main(bootstrap: str) -> int:
    topic = f"admin-example-{uuid.uuid4().hex[:8]}"
    async with aiokafka_lite.Admin(bootstrap_servers=bootstrap) as admin:
        cluster = await admin.describe_cluster()
        print(f"cluster {cluster.cluster_id}: controller {cluster.controller_id}, "
              f"brokers {[f'{b.host}:{b.port}' for b in cluster.brokers]}")

        await admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])
        assert topic in await admin.list_topics()
        (description,) = await admin.describe_topics([topic])
        for p in description.partitions:
            print(f"{topic}[{p.partition}] leader {p.leader} replicas {list(p.replicas)}")

        async with aiokafka_lite.Producer(bootstrap_servers=bootstrap) as producer:
            for i in range(6):  # one at a time: Tansu 0.6 reports "latest" wrongly after multi-record batches
                await producer.send_and_wait(topic, b"x", partition=i % 2)

        tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        earliest = await admin.list_offsets({tp: "earliest" for tp in tps})
        latest = await admin.list_offsets({tp: "latest" for tp in tps})
        for tp in tps:
            print(f"{tp.topic}[{tp.partition}] offsets {earliest[tp].offset}..{latest[tp].offset}")

        groups = await admin.list_groups()
        print(f"{len(groups)} consumer groups")
        await admin.delete_topics([topic])
        ok = all(latest[tp].offset - earliest[tp].offset == 3 for tp in tps)
    print("OK" if ok else "FAILED: unexpected offsets")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9092")))

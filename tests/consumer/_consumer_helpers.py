"""Shared helpers of the consumer's integration tests: topics and test data made with confluent-kafka
(a real peer client), and draining a consumer while checking that nothing arrives twice."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Any

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from aiokafka_lite.structs import ConsumerRecord, TopicPartition


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for fut in admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=10).values():
        fut.result(timeout=15)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        md = admin.list_topics(topic=topic, timeout=5)
        if topic in md.topics and len(md.topics[topic].partitions) == partitions:
            return
        time.sleep(0.05)
    raise AssertionError(f"topic {topic} did not appear with {partitions} partitions")


def produce(bootstrap: str, topic: str, count: int, partitions: int, start: int = 0,
            **conf: Any) -> list[tuple[int, bytes]]:
    """``count`` records valued b"<i>" for i in [start, start+count), partition i % partitions."""
    settings = {"bootstrap.servers": bootstrap, "linger.ms": 5, **conf}
    p = Producer(settings)
    errors: list[Any] = []
    sent = []
    for i in range(start, start + count):
        part = i % partitions
        p.produce(topic, value=b"%d" % i, key=b"k%d" % i, partition=part,
                  on_delivery=lambda err, _msg: errors.append(err) if err else None)
        sent.append((part, b"%d" % i))
        p.poll(0)
    remaining = p.flush(30)
    if remaining or errors:
        raise KafkaException(f"produce failed: {remaining} undelivered, errors {errors[:3]}")
    return sent


async def aproduce(bootstrap: str, topic: str, count: int, partitions: int, start: int = 0,
                   **conf: Any) -> list[tuple[int, bytes]]:
    """:func:`produce` in a thread, so that heartbeats keep flowing meanwhile."""
    return await asyncio.to_thread(produce, bootstrap, topic, count, partitions, start, **conf)


async def drain(consumers: Iterable[Any], want: int, timeout: float,
                seen: dict[bytes, tuple[int, ConsumerRecord]] | None = None,
                max_records: int | None = None) -> dict[bytes, tuple[int, ConsumerRecord]]:
    """Poll every consumer until ``want`` distinct values arrived; fails on a value seen twice."""
    seen = {} if seen is None else seen
    consumers = list(consumers)
    deadline = time.monotonic() + timeout

    async def one(i: int, c: Any) -> None:
        while len(seen) < want and time.monotonic() < deadline:
            batch = await c.poll(timeout_ms=100, max_records=max_records)
            for recs in batch.values():
                for r in recs:
                    assert r.value not in seen, f"{r.value!r} read twice: {seen[r.value]} and {(i, r)}"
                    seen[r.value] = (i, r)

    await asyncio.gather(*(one(i, c) for i, c in enumerate(consumers)))
    assert len(seen) == want, f"only {len(seen)} of {want} records arrived within {timeout}s"
    return seen


async def wait_assigned(consumers: list[Any], sizes: list[int], timeout: float,
                        seen: dict[bytes, tuple[int, ConsumerRecord]] | None = None) -> None:
    """Poll all until their assignment sizes are ``sizes`` (sorted) and cover distinct partitions.

    Records polled meanwhile go into ``seen`` (checked for duplicates), so none is lost to the wait.
    """
    deadline = time.monotonic() + timeout
    seen = {} if seen is None else seen

    async def one(i: int, c: Any) -> None:
        for recs in (await c.poll(timeout_ms=50)).values():
            for r in recs:
                assert r.value not in seen, f"{r.value!r} read twice: {seen[r.value]} and {(i, r)}"
                seen[r.value] = (i, r)

    while True:
        got = sorted(len(c.assignment()) for c in consumers)
        union: set[TopicPartition] = set()
        total = 0
        for c in consumers:
            union |= c.assignment()
            total += len(c.assignment())
        if got == sorted(sizes) and len(union) == total:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"assignment sizes {got}, wanted {sorted(sizes)}: "
                                 f"{[sorted(tp.partition for tp in c.assignment()) for c in consumers]}")
        await asyncio.gather(*(one(i, c) for i, c in enumerate(consumers)))

"""Test-side Kafka plumbing for the Spark tests: topics, producing and reading back.

Setup and verification go through confluent-kafka (librdkafka), an independent client, so that a bug in
our client cannot hide a bug in the Spark bridge (or the other way round).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
    futures[topic].result(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        md = admin.list_topics(topic, timeout=10)
        t = md.topics.get(topic)
        if t is not None and t.error is None and len(t.partitions) == partitions:
            return
        time.sleep(0.1)
    raise AssertionError(f"topic {topic} did not get {partitions} partitions")


def add_partitions(bootstrap: str, topic: str, total: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_partitions([NewPartitions(topic, total)])[topic].result(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        t = admin.list_topics(topic, timeout=10).topics.get(topic)
        if t is not None and len(t.partitions) == total:
            return
        time.sleep(0.1)
    raise AssertionError(f"topic {topic} did not grow to {total} partitions")


def produce(bootstrap: str, topic: str, records: Iterable[tuple[Any, ...]], **conf: Any) -> int:
    """Send ``(partition, key, value[, headers[, timestamp_ms]])`` tuples; wait for every acknowledgement."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True, **conf})
    errors: list[Any] = []

    def done(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(err)

    n = 0
    for rec in records:
        partition, key, value = rec[:3]
        headers = rec[3] if len(rec) > 3 else None
        extra = {"timestamp": rec[4]} if len(rec) > 4 else {}
        while True:
            try:
                producer.produce(topic, value=value, key=key, partition=partition, headers=headers,
                                 on_delivery=done, **extra)
                break
            except BufferError:
                producer.poll(0.05)
        n += 1
    assert producer.flush(60) == 0
    assert not errors, errors[:3]
    return n


def delete_records(bootstrap: str, topic: str, partition: int, before: int) -> None:
    """Delete the records of a partition below ``before`` (DeleteRecords; noida-db, Kafka)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.delete_records([TopicPartition(topic, partition, before)])
    for fut in futures.values():
        fut.result(30)


def transactional_produce(bootstrap: str, topic: str, txn_id: str,
                          batches: list[tuple[bool, list[tuple[int, bytes, bytes]]]]) -> None:
    """Each ``(commit, records)`` becomes one transaction, committed or aborted."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    producer.init_transactions(30)
    for commit, records in batches:
        producer.begin_transaction()
        for partition, key, value in records:
            producer.produce(topic, value=value, key=key, partition=partition)
        producer.flush(30)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)


def read_all(bootstrap: str, topic: str, *, read_committed: bool = False,
             timeout: float = 60.0) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """Every record of ``topic`` as ``(partition, offset, key, value)``, up to the current ends."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"verify-{time.time_ns()}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "isolation.level": "read_committed" if read_committed else "read_uncommitted"})
    try:
        md = consumer.list_topics(topic, timeout=10).topics[topic]
        ends: dict[int, int] = {}
        for p in md.partitions:
            _lo, hi = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            ends[p] = hi
        consumer.assign([TopicPartition(topic, p, 0) for p in md.partitions])
        out: list[tuple[int, int, bytes | None, bytes | None]] = []
        deadline = time.monotonic() + timeout
        done = {p for p, hi in ends.items() if hi == 0}
        while len(done) < len(ends):
            if time.monotonic() > deadline:
                raise AssertionError(f"read_all timed out: {len(out)} records, partitions done {done}")
            for msg in consumer.consume(10_000, 0.5):
                if msg.error():
                    raise KafkaException(msg.error())
                out.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
            for p, hi in ends.items():
                pos = consumer.position([TopicPartition(topic, p)])[0].offset
                if pos >= hi:
                    done.add(p)
        return out
    finally:
        consumer.close()

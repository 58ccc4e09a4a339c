"""aiokafka's documented examples, rewritten by us from their descriptions, as aiokafka code whose only
change is the import: each runs through ``aiokafka_lite.compat`` against Tansu and noida-db.

Each example is a coroutine taking the bootstrap address and a fresh topic, as a user script would take
them from its configuration, and returns what it saw so the test can check it.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

import aiokafka_lite.compat as aiokafka
from aiokafka_lite.compat import (
    AIOKafkaAdminClient,
    AIOKafkaConsumer,
    AIOKafkaProducer,
    ConsumerRebalanceListener,
    OffsetAndMetadata,
    TopicPartition,
)
from aiokafka_lite.compat import errors as kafka_errors

GROUP = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 300}


async def _create(bootstrap: str, topic: str, partitions: int) -> None:
    from aiokafka_lite import NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
    finally:
        await admin.close()


# -- produce ----------------------------------------------------------------------------------------------
async def example_produce(bootstrap: str, topic: str) -> list[Any]:
    """Start a producer, send one message and wait for its delivery, stop."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, client_id=None)
    await producer.start()
    try:
        md = await producer.send_and_wait(topic, b"Super message")
        fut = await producer.send(topic, b"another", key=b"k")
        md2 = await fut
    finally:
        await producer.stop()
    return [md, md2]


async def test_produce(broker: Any, new_topic: Any) -> None:
    topic = new_topic()
    md, md2 = await example_produce(broker.bootstrap, topic)
    assert md.topic == topic and md.offset >= 0 and md.timestamp_type in (0, 1)
    assert md.topic_partition == aiokafka.TopicPartition(topic, md.partition)
    assert md.log_start_offset == -1
    assert md2.offset >= 0


# -- consume ----------------------------------------------------------------------------------------------
async def example_consume(bootstrap: str, topic: str, group: str, want: int) -> list[Any]:
    """A group consumer that reads from the beginning with `async for` until it has `want` messages."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                auto_offset_reset="earliest", max_poll_records=None, **GROUP)
    await consumer.start()
    got = []
    try:
        async for msg in consumer:
            got.append((msg.topic, msg.partition, msg.offset, msg.key, msg.value, msg.timestamp))
            if len(got) == want:
                break
    finally:
        await consumer.stop()
    return got


async def _produce_values(bootstrap: str, topic: str, values: list[bytes], partition: int | None = None
                          ) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    await producer.start()
    try:
        futs = [await producer.send(topic, v, partition=partition) for v in values]
        await asyncio.gather(*futs)
    finally:
        await producer.stop()


async def test_consume(broker: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _produce_values(broker.bootstrap, topic, [b"m%d" % i for i in range(10)])
    got = await asyncio.wait_for(example_consume(broker.bootstrap, topic, new_topic("g"), 10), 60)
    assert sorted(v for *_, v, _ts in got) == sorted(b"m%d" % i for i in range(10))


# -- manual commit ----------------------------------------------------------------------------------------
async def example_manual_commit(bootstrap: str, topic: str, group: str, batches: int) -> int:
    """enable_auto_commit=False; process each getmany() batch, then commit per partition the offset after
    the last message processed (OffsetAndMetadata, as aiokafka documents)."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                enable_auto_commit=False, auto_offset_reset="earliest", **GROUP)
    await consumer.start()
    processed = 0
    try:
        while processed < batches:
            result = await consumer.getmany(timeout_ms=1000)
            for tp, messages in result.items():
                if messages:
                    processed += len(messages)
                    await consumer.commit({tp: OffsetAndMetadata(messages[-1].offset + 1, "")})
    finally:
        await consumer.stop()
    return processed


async def test_manual_commit(broker: Any, new_topic: Any) -> None:
    topic, group = new_topic(), new_topic("g")
    await _create(broker.bootstrap, topic, 1)
    await _produce_values(broker.bootstrap, topic, [b"%d" % i for i in range(5)], partition=0)
    assert await asyncio.wait_for(example_manual_commit(broker.bootstrap, topic, group, 5), 60) == 5
    check = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, **GROUP)
    await check.start()
    try:
        assert await check.committed(TopicPartition(topic, 0)) == 5
    finally:
        await check.stop()


# -- group consumer with a rebalance listener -------------------------------------------------------------
class CommitOnRevoke(ConsumerRebalanceListener):
    """Commits what was processed before partitions go, and logs what comes and goes."""

    def __init__(self, consumer: Any) -> None:
        self.consumer = consumer
        self.events: list[tuple[str, set[Any]]] = []

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self.events.append(("revoked", set(revoked)))
        if revoked:
            await self.consumer.commit()

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.events.append(("assigned", set(assigned)))


async def example_group_listener(bootstrap: str, topic: str, group: str, want: int) -> tuple[int, Any]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                **GROUP)
    listener = CommitOnRevoke(consumer)
    consumer.subscribe(topics=[topic], listener=listener)
    await consumer.start()
    n = 0
    try:
        while n < want:
            batch = await consumer.getmany(timeout_ms=500)
            n += sum(len(v) for v in batch.values())
    finally:
        await consumer.stop()
    return n, listener.events


async def test_group_consumer_with_rebalance_listener(broker: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _create(broker.bootstrap, topic, 2)
    await _produce_values(broker.bootstrap, topic, [b"%d" % i for i in range(20)])
    n, events = await asyncio.wait_for(
        example_group_listener(broker.bootstrap, topic, new_topic("g"), 20), 60)
    assert n == 20
    assigned = [e for kind, e in events if kind == "assigned"]
    assert assigned and assigned[0] == {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    assert events[-1] == ("revoked", {TopicPartition(topic, 0), TopicPartition(topic, 1)})


# -- batch produce ----------------------------------------------------------------------------------------
async def example_batch_produce(bootstrap: str, topic: str, count: int) -> tuple[Any, int]:
    """Fill a batch with create_batch() until append() refuses, pick a partition with partitions_for(),
    and send it with send_batch()."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, max_batch_size=16384)
    await producer.start()
    try:
        batch = producer.create_batch()
        i = 0
        while i < count:
            meta = batch.append(key=None, value=b"batched %d" % i, timestamp=None)
            if meta is None:
                break
            i += 1
        partitions = await producer.partitions_for(topic)
        partition = sorted(partitions)[0]
        fut = await producer.send_batch(batch, topic, partition=partition)
        record = await fut
    finally:
        await producer.stop()
    return record, batch.record_count()


async def test_batch_produce(broker: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _create(broker.bootstrap, topic, 2)
    record, n = await example_batch_produce(broker.bootstrap, topic, 10)
    assert n == 10 and record.partition == 0 and record.offset == 0
    # a batch stops taking records at max_batch_size
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, max_batch_size=1000)
    batch = producer.create_batch()
    appended = 0
    while batch.append(key=None, value=b"x" * 100, timestamp=None) is not None:
        appended += 1
    assert 5 <= appended < 10 and batch.size() <= 1000
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        got: list[bytes] = []
        deadline = time.monotonic() + 20
        while len(got) < 10 and time.monotonic() < deadline:
            got += [m.value for m in (await consumer.getmany(tp, timeout_ms=500)).get(tp, [])]
        assert got == [b"batched %d" % i for i in range(10)]
    finally:
        await consumer.stop()


# -- transactional consume-process-produce ----------------------------------------------------------------
async def example_transactional(bootstrap: str, in_topic: str, out_topic: str, group: str, want: int) -> int:
    """Read from in_topic, write each value upper-cased to out_topic, and commit the consumer's offsets in
    the same transaction (send_offsets_to_transaction)."""
    consumer = AIOKafkaConsumer(in_topic, bootstrap_servers=bootstrap, group_id=group,
                                enable_auto_commit=False, auto_offset_reset="earliest",
                                isolation_level="read_committed", **GROUP)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"txn-{group}")
    await consumer.start()
    await producer.start()
    done = 0
    try:
        while done < want:
            batch = await consumer.getmany(timeout_ms=1000)
            if not batch:
                continue
            async with producer.transaction():
                commit_offsets = {}
                for tp, msgs in batch.items():
                    for msg in msgs:
                        await producer.send(out_topic, msg.value.upper())
                    commit_offsets[tp] = msgs[-1].offset + 1
                    done += len(msgs)
                await producer.send_offsets_to_transaction(commit_offsets, group)
    finally:
        await producer.stop()
        await consumer.stop()
    return done


async def test_transactional_consume_process_produce(noida: Any, new_topic: Any) -> None:
    """noida-db only: Tansu does not hide aborted records nor fully support transactions (brokers.md)."""
    src, dst, group = new_topic("in"), new_topic("out"), new_topic("g")
    await _create(noida.bootstrap, src, 1)
    await _create(noida.bootstrap, dst, 1)
    await _produce_values(noida.bootstrap, src, [b"a", b"b", b"c"], partition=0)
    assert await asyncio.wait_for(example_transactional(noida.bootstrap, src, dst, group, 3), 60) == 3
    got = await asyncio.wait_for(example_consume(noida.bootstrap, dst, new_topic("g2"), 3), 60)
    assert sorted(v for *_, v, _ts in got) == [b"A", b"B", b"C"]
    check = AIOKafkaConsumer(bootstrap_servers=noida.bootstrap, group_id=group, **GROUP)
    await check.start()
    try:
        assert await check.committed(TopicPartition(src, 0)) == 3
    finally:
        await check.stop()


# -- local-state consumer ---------------------------------------------------------------------------------
class LocalState:
    """Counts of keys per partition, saved and loaded around rebalances (here in a dict standing in for
    a file), with the offset they were computed up to."""

    def __init__(self, store: dict[TopicPartition, tuple[dict[bytes, int], int]]) -> None:
        self.store = store
        self.counts: dict[TopicPartition, dict[bytes, int]] = {}
        self.offsets: dict[TopicPartition, int] = {}

    def load(self, tps: set[TopicPartition]) -> None:
        for tp in tps:
            counts, offset = self.store.get(tp, ({}, -1))
            self.counts[tp], self.offsets[tp] = dict(counts), offset

    def dump(self, tps: set[TopicPartition]) -> None:
        for tp in tps:
            self.store[tp] = (dict(self.counts.pop(tp, {})), self.offsets.pop(tp, -1))


class RebalanceWithState(ConsumerRebalanceListener):
    def __init__(self, consumer: Any, state: LocalState) -> None:
        self.consumer, self.state = consumer, state

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self.state.dump(set(revoked))

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.state.load(set(assigned))
        for tp in assigned:
            last = self.state.offsets[tp]
            if last >= 0:
                self.consumer.seek(tp, last + 1)  # resume after what the state already holds


async def example_local_state(bootstrap: str, topic: str, group: str, store: Any, want: int) -> None:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                enable_auto_commit=False, **GROUP)
    state = LocalState(store)
    consumer.subscribe([topic], listener=RebalanceWithState(consumer, state))
    await consumer.start()
    seen = 0
    try:
        while seen < want:
            for tp, msgs in (await consumer.getmany(timeout_ms=500)).items():
                for msg in msgs:
                    counts = state.counts[tp]
                    counts[msg.key] = counts.get(msg.key, 0) + 1
                    state.offsets[tp] = msg.offset
                    seen += 1
    finally:
        await consumer.stop()  # revokes: the state is dumped


async def test_local_state_consumer(broker: Any, new_topic: Any) -> None:
    topic, group = new_topic(), new_topic("g")
    await _create(broker.bootstrap, topic, 1)
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await producer.start()
    try:
        for key in (b"a", b"b", b"a"):
            await producer.send_and_wait(topic, b"v", key=key, partition=0)
    finally:
        await producer.stop()
    store: dict[Any, Any] = {}
    await asyncio.wait_for(example_local_state(broker.bootstrap, topic, group, store, 3), 60)
    tp = TopicPartition(topic, 0)
    assert store[tp] == ({b"a": 2, b"b": 1}, 2)
    # Nothing was committed: a second run resumes from the state's offset, not from the beginning.
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"v", key=b"b", partition=0)
    finally:
        await producer.stop()
    await asyncio.wait_for(example_local_state(broker.bootstrap, topic, group, store, 1), 60)
    assert store[tp] == ({b"a": 2, b"b": 2}, 3)


# -- custom partitioner -----------------------------------------------------------------------------------
def vowel_partitioner(key_bytes: bytes | None, all_partitions: list[int], available: list[int]) -> int:
    """Keys starting with a vowel go to the first partition, everything else to the last."""
    if key_bytes and key_bytes[:1].lower() in b"aeiou":
        return all_partitions[0]
    return all_partitions[-1]


async def example_custom_partitioner(bootstrap: str, topic: str) -> list[int]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, partitioner=vowel_partitioner)
    await producer.start()
    try:
        return [(await producer.send_and_wait(topic, b"v", key=k)).partition
                for k in (b"apple", b"kiwi", b"orange", b"plum")]
    finally:
        await producer.stop()


async def test_custom_partitioner(broker: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _create(broker.bootstrap, topic, 3)
    assert await example_custom_partitioner(broker.bootstrap, topic) == [0, 2, 0, 2]


# -- serialization ----------------------------------------------------------------------------------------
def serializer(value: Any) -> bytes:
    return json.dumps(value).encode()


def deserializer(data: bytes) -> Any:
    return json.loads(data.decode())


async def example_serialization(bootstrap: str, topic: str) -> Any:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, value_serializer=serializer,
                                key_serializer=lambda k: k.encode(), compression_type="gzip")
    await producer.start()
    try:
        await producer.send_and_wait(topic, {"a": 1, "b": [2, 3]}, key="json")
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                value_deserializer=deserializer, key_deserializer=lambda b: b.decode())
    await consumer.start()
    try:
        msg = await consumer.getone()
        return msg.key, msg.value
    finally:
        await consumer.stop()


async def test_serialization(broker: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _create(broker.bootstrap, topic, 1)
    assert await asyncio.wait_for(example_serialization(broker.bootstrap, topic), 30) == (
        "json", {"a": 1, "b": [2, 3]})


# -- seek right after start, last_poll_timestamp, error names ---------------------------------------------
async def test_groupless_seek_after_start_and_last_poll_timestamp(broker: Any, new_topic: Any) -> None:
    """aiokafka assigns a group-less consumer's partitions at start(): seek() works right away."""
    topic = new_topic()
    await _create(broker.bootstrap, topic, 1)
    await _produce_values(broker.bootstrap, topic, [b"0", b"1", b"2"], partition=0)
    tp = TopicPartition(topic, 0)
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap, client_id=None)
    await consumer.start()
    try:
        consumer.seek(tp, 2)
        msg = await asyncio.wait_for(consumer.getone(), 20)
        assert msg.value == b"2"
        assert abs(consumer.last_poll_timestamp(tp) - time.time() * 1000) < 60000
    finally:
        await consumer.stop()


async def test_message_size_too_large_is_catchable_by_aiokafkas_name(tansu: Any, new_topic: Any) -> None:
    """aiokafka code catches errors.MessageSizeTooLargeError; ours refuses too large a record before
    sending (RecordTooLargeError) and the broker's MESSAGE_TOO_LARGE is the same class as aiokafka's name."""
    assert kafka_errors.MessageSizeTooLargeError is kafka_errors.for_code(10)
    assert issubclass(kafka_errors.KafkaConnectionError, kafka_errors.KafkaError)
    with pytest.raises(kafka_errors.KafkaConfigurationError):
        AIOKafkaProducer(bootstrap_servers=tansu.bootstrap, acks="some")


# -- SSL ------------------------------------------------------------------------------------------------
async def example_ssl(bootstrap: str, cafile: str, topic: str) -> Any:
    """Produce and consume over TLS with a context from create_ssl_context(cafile=...)."""
    context = aiokafka.create_ssl_context(cafile=cafile)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, security_protocol="SSL", ssl_context=context)
    await producer.start()
    try:
        md = await producer.send_and_wait(topic, b"over tls", partition=0)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, security_protocol="SSL",
                                ssl_context=context, auto_offset_reset="earliest")
    await consumer.start()
    try:
        consumer.seek(TopicPartition(topic, 0), md.offset)
        msg = await consumer.getone()
        return msg.value
    finally:
        await consumer.stop()


async def test_ssl(new_topic: Any) -> None:
    """TLS goes through a terminator (stunnel4) in front of Tansu: neither broker serves TLS itself
    (brokers.md), so this example runs once."""
    from aiokafka_lite.testing.tls import TlsBroker

    with TlsBroker("stunnel") as tls:
        topic = new_topic()
        await _create_tls(tls, topic)
        value = await asyncio.wait_for(example_ssl(tls.bootstrap, str(tls.certs.ca_cert), topic), 30)
    assert value == b"over tls"


async def _create_tls(tls: Any, topic: str) -> None:
    from aiokafka_lite import NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=tls.bootstrap, security_protocol="SSL",
                                ssl_context=tls.client_context())
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    finally:
        await admin.close()

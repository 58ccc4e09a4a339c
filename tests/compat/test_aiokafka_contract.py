"""aiokafka's contract on ``aiokafka_lite.compat`` (issue 25, items 4-9): the exception types aiokafka's
users catch, the values its calls return, its warnings and constructor checks, its admin answers and its
structs. Written by us from aiokafka 0.14's documented and observed behaviour; brokers are real.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import gc
import logging
import warnings
import weakref
from typing import Any

import pytest

from aiokafka_lite import errors
from aiokafka_lite.compat import (
    AIOKafkaAdminClient,
    AIOKafkaConsumer,
    AIOKafkaProducer,
    ConsumerRebalanceListener,
    ConsumerRecord,
    OffsetAndMetadata,
    OffsetAndTimestamp,
    RecordMetadata,
    TopicPartition,
)
from aiokafka_lite.compat.admin import ConfigResource, ConfigResourceType, NewTopic, RecordsToDelete

GROUP = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 300}


async def _admin(bootstrap: str) -> AIOKafkaAdminClient:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    return admin


async def _one_partition(bootstrap: str, topic: str, *values: bytes) -> list[Any]:
    """Create ``topic`` with one partition holding ``values``; their RecordMetadata."""
    admin = await _admin(bootstrap)
    try:
        await admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        await admin.close()
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        return [await producer.send_and_wait(topic, v, partition=0) for v in values]


# -- item 4: exception types -------------------------------------------------------------------------------
async def test_str_value_without_serializer_is_a_type_error(tansu: Any, new_topic: Any) -> None:
    async with AIOKafkaProducer(bootstrap_servers=tansu.bootstrap) as producer:
        with pytest.raises(TypeError):
            await producer.send(new_topic(), "text, not bytes")
        with pytest.raises(TypeError):
            await producer.send(new_topic(), b"v", key="text key")


async def test_record_over_max_request_size_is_message_size_too_large(tansu: Any, new_topic: Any) -> None:
    async with AIOKafkaProducer(bootstrap_servers=tansu.bootstrap, max_request_size=1000) as producer:
        with pytest.raises(errors.MessageSizeTooLargeError):
            await producer.send(new_topic(), b"x" * 2000)
        # still the native error too, for code written against aiokafka_lite's names
        with pytest.raises(errors.RecordTooLargeError):
            await producer.send_and_wait(new_topic(), b"x" * 2000)


async def test_seek_to_with_something_not_a_partition_is_a_type_error(tansu: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _one_partition(tansu.bootstrap, topic)
    async with AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        for seek in (consumer.seek_to_beginning, consumer.seek_to_end, consumer.seek_to_committed):
            with pytest.raises(TypeError):
                await seek(1)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            consumer.seek(TopicPartition(topic, 0), -5)


async def test_subscribe_misuse_is_a_type_or_value_error(tansu: Any) -> None:
    consumer = AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap, group_id="g-misuse")
    with pytest.raises(TypeError):
        consumer.subscribe("topic")  # a bare str: aiokafka wants a list
    with pytest.raises(TypeError):
        consumer.subscribe()
    with pytest.raises(TypeError):
        consumer.subscribe(["t"], pattern="t.*")
    with pytest.raises(TypeError):
        consumer.subscribe(["t"], listener=object())
    with pytest.raises(ValueError):
        consumer.subscribe(pattern="[unclosed")
    consumer.subscribe(["t"])
    assert consumer.subscription() == {"t"}


async def test_send_offsets_outside_a_transaction_is_illegal_operation_first(noida: Any,
                                                                            new_topic: Any) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=noida.bootstrap, transactional_id=new_topic("txn"))
    await producer.start()
    try:
        # aiokafka checks the transaction before the arguments: an empty group id still says "no transaction"
        with pytest.raises(errors.IllegalOperation):
            await producer.send_offsets_to_transaction({TopicPartition("t", 0): 1}, "")
        async with producer.transaction():
            with pytest.raises(ValueError):
                await producer.send_offsets_to_transaction({TopicPartition("t", 0): 1}, "")
            await producer.send(new_topic(), b"v")
    finally:
        await producer.stop()


# -- item 5: acks=0 ----------------------------------------------------------------------------------------
async def test_acks_zero_future_resolves_to_none(tansu: Any, new_topic: Any) -> None:
    async with AIOKafkaProducer(bootstrap_servers=tansu.bootstrap, acks=0) as producer:
        fut = await producer.send(new_topic(), b"fire and forget")
        assert isinstance(fut, asyncio.Future)
        assert await fut is None
        assert await producer.send_and_wait(new_topic(), b"again") is None


async def test_send_is_a_coroutine_that_create_task_takes(broker: Any, new_topic: Any) -> None:
    """aiokafka's ``send`` is an ``async def`` (aiokafka/producer/producer.py), so code may hand its call to
    ``asyncio.create_task``, which takes only coroutines: ours (the compiled fast path included) must stay
    one, native and compat alike."""
    from aiokafka_lite import Producer

    topic = new_topic()
    for client in (AIOKafkaProducer, Producer):
        async with client(bootstrap_servers=broker.bootstrap) as producer:
            call = producer.send(topic, b"v", partition=0)
            assert asyncio.iscoroutine(call)
            fut = await asyncio.create_task(call)
            assert (await fut).topic == topic


# -- item 6: warnings --------------------------------------------------------------------------------------
async def test_unclosed_started_clients_warn_when_dropped(tansu: Any, new_topic: Any) -> None:
    """A client started and dropped without stop() is collected at once, its background tasks still
    running, and warns then (as aiokafka's): its tasks and callbacks hold it only weakly."""
    makers = {"AIOKafkaProducer": lambda: AIOKafkaProducer(bootstrap_servers=tansu.bootstrap),
              "AIOKafkaConsumer": lambda: AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap),
              "AIOKafkaConsumer in a group": lambda: AIOKafkaConsumer(
                  new_topic(), bootstrap_servers=tansu.bootstrap, group_id=new_topic("g"), **GROUP)}
    for name, make in makers.items():
        client = make()
        await client.start()
        await asyncio.sleep(1.5)  # the metrics task has sampled the client at least once
        ref = weakref.ref(client)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            del client
            gc.collect()
        assert ref() is None, name
        kind = name.split()[0]
        assert any(w.category is ResourceWarning and f"Unclosed {kind}" in str(w.message) for w in seen), seen


def test_stopped_or_never_started_clients_are_quiet(tansu: Any) -> None:
    async def start_and_stop(make: Any) -> None:
        client = make()
        await client.start()
        await client.stop()

    makers = {"AIOKafkaProducer": lambda: AIOKafkaProducer(bootstrap_servers=tansu.bootstrap),
              "AIOKafkaConsumer": lambda: AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap)}
    for name, make in makers.items():
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            threading_run(start_and_stop(make))
            make()
            gc.collect()
        assert not [w for w in seen if f"Unclosed {name}" in str(w.message)]


def threading_run(coro: Any) -> None:
    """Run ``coro`` on a loop of its own (in a thread, as pytest's loop is running here) to its end."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coro).result(60)


async def test_loop_argument_is_deprecated() -> None:
    loop = asyncio.get_running_loop()
    for cls in (AIOKafkaProducer, AIOKafkaConsumer):
        with pytest.warns(DeprecationWarning, match="loop"):
            cls(bootstrap_servers="127.0.0.1:9", loop=loop)


# -- item 7: constructor checks ----------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [AIOKafkaProducer, AIOKafkaConsumer, AIOKafkaAdminClient])
def test_security_settings_refused_at_construction(cls: Any) -> None:
    with pytest.raises(ValueError, match="ssl_context"):
        cls(bootstrap_servers="127.0.0.1:9", security_protocol="SSL")
    with pytest.raises(ValueError, match="ssl_context"):
        cls(bootstrap_servers="127.0.0.1:9", security_protocol="SASL_SSL", sasl_plain_username="u",
            sasl_plain_password="p")
    with pytest.raises(ValueError, match="sasl_plain_username"):
        cls(bootstrap_servers="127.0.0.1:9", security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN")
    with pytest.raises(ValueError):
        cls(bootstrap_servers="127.0.0.1:9", security_protocol="TLS")
    cls(bootstrap_servers="127.0.0.1:9", security_protocol="SASL_PLAINTEXT", sasl_plain_username="u",
        sasl_plain_password="p")


# -- item 8: admin under aiokafka's names ------------------------------------------------------------------
async def test_admin_topics_answers_as_aiokafka(tansu: Any, new_topic: Any) -> None:
    topic = new_topic()
    admin = await _admin(tansu.bootstrap)
    try:
        resp = await admin.create_topics([NewTopic(topic, 2, 1)])
        assert resp.topic_errors == [(topic, 0, None)]
        again = await admin.create_topics([NewTopic(topic, 2, 1)])  # reported, not raised
        [(name, code, message)] = again.topic_errors
        assert (name, code) == (topic, errors.TopicAlreadyExistsError.errno) and message
        [desc] = await admin.describe_topics([topic])
        assert desc["topic"] == topic and desc["error_code"] == 0
        assert sorted(p["partition"] for p in desc["partitions"]) == [0, 1]
        cluster = await admin.describe_cluster()
        assert [b["node_id"] for b in cluster["brokers"]] == [111]  # Tansu's node id
        assert "cluster_id" in cluster and "controller_id" in cluster
        assert topic in await admin.list_topics()
        deleted = await admin.delete_topics([topic])
        assert deleted.topic_error_codes == [(topic, 0)]
    finally:
        await admin.close()


async def test_admin_groups_answers_as_aiokafka(tansu: Any, new_topic: Any) -> None:
    topic, group = new_topic(), new_topic("g")
    await _one_partition(tansu.bootstrap, topic, b"m")
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=tansu.bootstrap, group_id=group,
                                auto_offset_reset="earliest", enable_auto_commit=False, **GROUP)
    await consumer.start()
    admin = await _admin(tansu.bootstrap)
    try:
        msg = await asyncio.wait_for(consumer.getone(), 60)
        await consumer.commit()
        assert isinstance(await admin.find_coordinator(group), int)
        assert (group, "consumer") in await admin.list_consumer_groups()
        [resp] = await admin.describe_consumer_groups([group])
        [(code, group_id, state, protocol_type, _protocol, members, _ops)] = resp.groups
        assert (code, group_id, protocol_type) == (0, group, "consumer") and state
        assert len(members) == 1
        offsets = await admin.list_consumer_group_offsets(group)
        offset, metadata = offsets[TopicPartition(topic, 0)]  # aiokafka's 2-tuple
        assert offset == msg.offset + 1 and metadata == ""
    finally:
        await admin.close()
        await consumer.stop()


async def test_admin_configs_and_delete_records_as_aiokafka(noida: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _one_partition(noida.bootstrap, topic)
    admin = await _admin(noida.bootstrap)
    try:
        await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                  {"retention.ms": "86400001"})])
        [resp] = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                              {"retention.ms": None})])
        [(code, _msg, rtype, name, entries)] = resp.resources
        assert (code, rtype, name) == (0, ConfigResourceType.TOPIC, topic)
        assert [(e[0], e[1]) for e in entries] == [("retention.ms", "86400001")]
        assert ConfigResource("topic", topic).resource_type is ConfigResourceType.TOPIC
        async with AIOKafkaProducer(bootstrap_servers=noida.bootstrap) as producer:
            first = await producer.send_and_wait(topic, b"a", partition=0)
            await producer.send_and_wait(topic, b"b", partition=0)
        tp = TopicPartition(topic, 0)
        low = await admin.delete_records({tp: RecordsToDelete(before_offset=first.offset + 1)})
        assert low == {tp: first.offset + 1}
    finally:
        await admin.close()


# -- item 9: structs ---------------------------------------------------------------------------------------
async def test_structs_are_aiokafka_shaped(noida: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _one_partition(noida.bootstrap, topic)
    async with AIOKafkaProducer(bootstrap_servers=noida.bootstrap) as producer:
        md = await producer.send_and_wait(topic, b"v", key=b"k", partition=0)
    assert isinstance(md, RecordMetadata)
    t, partition, tp, offset, timestamp, timestamp_type, log_start_offset = md  # aiokafka's order
    assert (t, partition, tp, timestamp_type) == (topic, 0, TopicPartition(topic, 0), 0)
    assert offset >= 0 and timestamp > 0 and log_start_offset == -1
    async with AIOKafkaConsumer(bootstrap_servers=noida.bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([tp])
        record = await asyncio.wait_for(consumer.getone(), 30)
        assert isinstance(record, ConsumerRecord) and not isinstance(record, tuple)
        assert dataclasses.is_dataclass(record) and record.checksum is None
        assert (record.key, record.value, record.offset) == (b"k", b"v", offset)
        assert record.serialized_value_size == 1 and list(record.headers) == []
        found = await consumer.offsets_for_times({tp: timestamp})
        off, ts = found[tp]  # a 2-tuple
        assert isinstance(found[tp], OffsetAndTimestamp) and off == offset and ts == timestamp
    off, meta = OffsetAndMetadata(5, "m")
    assert (off, meta) == (5, "m")
    # aiokafka's fields, by keyword (FastStream builds records this way)
    made = ConsumerRecord(topic="t", partition=0, offset=1, timestamp=2, timestamp_type=0, key=None,
                          value=b"", checksum=None, serialized_key_size=-1, serialized_value_size=0,
                          headers=[])
    assert made.value == b""


# -- what frameworks need (item 10) ------------------------------------------------------------------------
class _Recorder(ConsumerRebalanceListener):
    def __init__(self, fail: bool = False) -> None:
        self.calls: list[str] = []
        self.fail = fail

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self.calls.append("revoked")
        if self.fail:
            raise RuntimeError("listener broke")

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.calls.append("assigned")
        if self.fail:
            raise RuntimeError("listener broke")


async def test_groupless_consumer_never_calls_its_listener(tansu: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _one_partition(tansu.bootstrap, topic, b"m")
    listener = _Recorder()
    async with AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.subscribe([topic], listener=listener)
        assert (await asyncio.wait_for(consumer.getone(), 30)).value == b"m"
    assert listener.calls == []


async def test_listener_exception_is_logged_not_raised(tansu: Any, new_topic: Any,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    topic = new_topic()
    await _one_partition(tansu.bootstrap, topic, b"m")
    listener = _Recorder(fail=True)
    consumer = AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap, group_id=new_topic("g"),
                                auto_offset_reset="earliest", **GROUP)
    await consumer.start()
    try:
        consumer.subscribe([topic], listener=listener)
        with caplog.at_level(logging.ERROR, logger="aiokafka_lite.compat.consumer.consumer"):
            assert (await asyncio.wait_for(consumer.getone(), 60)).value == b"m"
        assert "assigned" in listener.calls
        assert "listener broke" in caplog.text
        # aiokafka's privates that frameworks read
        assert consumer._group_id == consumer.config.group_id
        assert consumer._subscription.topics == {topic}
        assert consumer._coordinator is not None and consumer._coordinator.member_id
    finally:
        await consumer.stop()


async def test_seek_keywords_and_getmany_on_stop(tansu: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _one_partition(tansu.bootstrap, topic, b"0", b"1")
    consumer = AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap)
    await consumer.start()
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek(partition=tp, offset=1)
    assert (await asyncio.wait_for(consumer.getone(), 30)).value == b"1"
    waiting = asyncio.ensure_future(consumer.getmany(timeout_ms=30000))
    await asyncio.sleep(0.2)
    await consumer.stop()
    assert await asyncio.wait_for(waiting, 10) == {}  # aiokafka's answer to a stop() mid-wait
    with pytest.raises(errors.ConsumerStoppedError):
        async for _ in consumer:
            pass


async def test_settings_aiokafka_passes_through(tansu: Any, new_topic: Any) -> None:
    from aiokafka_lite.compat.partitioner import DefaultPartitioner, murmur2
    from aiokafka_lite.compat.producer.producer import _missing

    async with AIOKafkaProducer(bootstrap_servers=tansu.bootstrap, acks=_missing,
                                partitioner=DefaultPartitioner()) as producer:
        assert producer.config.acks == -1  # the default
        md = await producer.send_and_wait(new_topic(), b"v", key=b"key")
        assert md.offset >= 0
    assert murmur2(b"a") == 2731586172  # aiokafka's unsigned value
    assert DefaultPartitioner()(b"a", [0, 1, 2], [0, 1, 2]) == (2731586172 & 0x7FFFFFFF) % 3


async def test_group_start_returns_assigned_and_latest_is_as_of_start(tansu: Any, new_topic: Any) -> None:
    """aiokafka's start() waits for the first assignment; the topic, missing until then, is created by the
    consumer's Metadata request; a record sent right after start() is read with auto_offset_reset="latest"."""
    topic = new_topic()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=tansu.bootstrap, group_id=new_topic("g"),
                                auto_offset_reset="latest", **GROUP)
    await asyncio.wait_for(consumer.start(), 60)
    try:
        assert consumer.assignment() and {tp.topic for tp in consumer.assignment()} == {topic}
        tp = next(iter(consumer.assignment()))
        assert await consumer.position(tp) == 0
        async with AIOKafkaProducer(bootstrap_servers=tansu.bootstrap) as producer:
            await producer.send_and_wait(topic, b"right after start", partition=tp.partition)
        assert (await asyncio.wait_for(consumer.getone(), 30)).value == b"right after start"
    finally:
        await consumer.stop()


async def test_listener_revoked_with_nothing_before_the_first_assignment(tansu: Any, new_topic: Any) -> None:
    """aiokafka's classic-group member calls on_partitions_revoked(set()) before its first join, so a
    listener sees revoked, then assigned, before start() returns."""
    calls: list[tuple[str, set[TopicPartition]]] = []

    class Listener(ConsumerRebalanceListener):
        async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            calls.append(("revoked", set(revoked)))

        async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            calls.append(("assigned", set(assigned)))

    topic = new_topic()
    consumer = AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap, group_id=new_topic("g"), **GROUP)
    consumer.subscribe([topic], listener=Listener())
    await asyncio.wait_for(consumer.start(), 60)
    try:
        assert calls[:2] == [("revoked", set()), ("assigned", consumer.assignment())], calls
    finally:
        await consumer.stop()


async def test_groupless_start_owns_a_new_topic_and_latest_is_as_of_start(tansu: Any, new_topic: Any) -> None:
    """Without a group, start() returns owning every partition of the subscribed topic (created by the
    consumer's Metadata request), positions known: a record sent right after start() is read."""
    topic = new_topic()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=tansu.bootstrap, auto_offset_reset="latest")
    await asyncio.wait_for(consumer.start(), 60)
    try:
        assert {tp.topic for tp in consumer.assignment()} == {topic}
        async with AIOKafkaProducer(bootstrap_servers=tansu.bootstrap) as producer:
            await producer.send_and_wait(topic, b"right after start")
        assert (await asyncio.wait_for(consumer.getone(), 30)).value == b"right after start"
    finally:
        await consumer.stop()


async def test_commit_checks_as_aiokafka(tansu: Any, new_topic: Any) -> None:
    topic = new_topic()
    await _one_partition(tansu.bootstrap, topic)
    tp = TopicPartition(topic, 0)
    with pytest.raises(ValueError, match="isolation level"):
        AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap, isolation_level="READ_CCC")
    async with AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap) as groupless:
        groupless.assign([tp])
        with pytest.raises(errors.IllegalOperation):
            await groupless.commit({tp: 1})
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=tansu.bootstrap, group_id=new_topic("g"), **GROUP)
    await asyncio.wait_for(consumer.start(), 60)
    try:
        for bad in ({}, "something", {tp: (1, "m", 100)}):
            with pytest.raises(ValueError):
                await consumer.commit(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="Key should be TopicPartition"):
            await consumer.commit({"t": 1})  # type: ignore[dict-item]
        with pytest.raises(TypeError, match="Metadata should be a string"):
            await consumer.commit({tp: (1, b"m")})
        with pytest.raises(errors.IllegalStateError, match="is not assigned"):
            await consumer.commit({TopicPartition(topic, 10): 1})
        await consumer.commit({tp: OffsetAndMetadata(0, "m")})
        consumer.unsubscribe()
        with pytest.raises(errors.IllegalStateError, match="Not subscribed"):
            await consumer.commit({tp: 1})
    finally:
        await consumer.stop()


async def test_start_leaves_no_offset_to_the_first_read(tansu: Any, new_topic: Any) -> None:
    """auto_offset_reset="none" with nothing committed: aiokafka's start() succeeds and reading raises."""
    topic = new_topic()
    await _one_partition(tansu.bootstrap, topic)
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=tansu.bootstrap, group_id=new_topic("g"),
                                auto_offset_reset="none", **GROUP)
    await asyncio.wait_for(consumer.start(), 60)
    try:
        with pytest.raises(errors.NoOffsetForPartitionError):
            async for _ in consumer:
                pass
    finally:
        await consumer.stop()


async def test_an_explicit_commit_is_not_overtaken_by_a_due_auto_commit(tansu: Any, new_topic: Any) -> None:
    """aiokafka's test_consumer_commit with auto-commit due at the read: the auto-commit that read starts
    (the position before it) goes in turn with commit() (aiokafka's commit lock) and leaves a partition
    committed since alone, so committed() reads what commit() just wrote, not the older position."""
    topic = new_topic()
    await _one_partition(tansu.bootstrap, topic, *(b"%d" % i for i in range(6)))
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=tansu.bootstrap, group_id=new_topic("g"),
                                auto_offset_reset="earliest", auto_commit_interval_ms=20, **GROUP)
    await asyncio.wait_for(consumer.start(), 60)
    tp = TopicPartition(topic, 0)
    try:
        for _ in range(6):
            await asyncio.sleep(0.05)  # the auto-commit is due when getone() polls
            msg = await consumer.getone()
            await consumer.commit({tp: (msg.offset + 1, "m")})
            assert await consumer.committed(tp) == msg.offset + 1
    finally:
        await consumer.stop()

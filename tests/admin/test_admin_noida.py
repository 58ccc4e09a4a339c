"""Admin operations Tansu 0.6 cannot serve, proven on noida-db: CreatePartitions (Tansu does not
offer it), DeleteRecords (Tansu drops the connection), DescribeConfigs (Tansu answers no configs),
validate-only CreateTopics (Tansu creates the topic anyway) and ListOffsets by timestamp (Tansu
always answers offset 0). The last test pins what a user sees on Tansu: a clear error within seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from aiokafka import AIOKafkaProducer

from aiokafka_lite import Admin, NewTopic, TopicPartition, errors
from aiokafka_lite.admin import ConfigResource, NewPartitions
from aiokafka_lite.embedded import EmbeddedBroker


async def test_create_partitions(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    a, b = new_topic("a"), new_topic("b")
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(a, 1, 1), NewTopic(b, 2, 1)])
        await admin.create_partitions({a: 3, b: NewPartitions(4)})
        da, db = await admin.describe_topics([a, b])
        assert (len(da.partitions), len(db.partitions)) == (3, 4)
        await admin.create_partitions({a: 5}, validate_only=True)
        (da,) = await admin.describe_topics([a])
        assert len(da.partitions) == 3
        with pytest.raises(errors.InvalidPartitionsError, match=a):
            await admin.create_partitions({a: 2})  # shrinking is refused, naming the topic
        with pytest.raises(errors.UnknownTopicOrPartitionError, match="nope"):
            await admin.create_partitions({new_topic("nope"): 2})
        with pytest.raises(errors.IllegalArgumentError, match=a):
            await admin.create_partitions({a: 0})
        await admin.delete_topics([a, b])


async def test_delete_records(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    name = new_topic()
    tp0, tp1 = TopicPartition(name, 0), TopicPartition(name, 1)
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(name, 2, 1)])
        async with AIOKafkaProducer(bootstrap_servers=noida.bootstrap) as producer:
            for i in range(10):
                await producer.send(name, b"x%d" % i, partition=i % 2)
            await producer.flush()
        low = await admin.delete_records({tp0: 3, tp1: -1})
        assert low == {tp0: 3, tp1: 5}
        earliest = await admin.list_offsets({tp0: "earliest", tp1: "earliest"})
        assert {tp: r.offset for tp, r in earliest.items()} == {tp0: 3, tp1: 5}
        with pytest.raises(errors.OffsetOutOfRangeError, match=rf"{name}\[0\]"):
            await admin.delete_records({tp0: 99})
        await admin.delete_topics([name])


async def test_describe_configs(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    name = new_topic()
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(name, 1, 1, topic_configs={"retention.ms": "3600000"})])
        resource = ConfigResource("topic", name)
        configs = (await admin.describe_configs([resource]))[resource]
        assert configs["retention.ms"].value == "3600000"
        assert configs["retention.ms"].is_default is False
        assert configs["cleanup.policy"].value == "delete"
        assert configs["cleanup.policy"].is_default is True
        missing = ConfigResource("topic", new_topic("missing"))
        with pytest.raises(errors.UnknownTopicOrPartitionError, match=missing.name):
            await admin.describe_configs([missing])
        await admin.delete_topics([name])


async def test_validate_only_creates_nothing(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    name = new_topic()
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(name, 2, 1)], validate_only=True)
        assert name not in await admin.list_topics()


async def test_list_offsets_by_timestamp(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    name = new_topic()
    tp = TopicPartition(name, 0)
    now = int(time.time() * 1000)  # noida-db expires records stamped more than 7 days ago
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(name, 1, 1)])
        async with AIOKafkaProducer(bootstrap_servers=noida.bootstrap) as producer:
            for i in range(4):
                await producer.send_and_wait(name, b"v", partition=0, timestamp_ms=now + i * 1000)
        found = await admin.list_offsets({tp: now + 1500})
        assert found[tp].offset == 2 and found[tp].timestamp == now + 2000
        assert (await admin.list_offsets({tp: now + 10_000}))[tp].offset == -1
        await admin.delete_topics([name])


async def test_what_tansu_cannot_do_fails_fast_and_clearly(tansu: EmbeddedBroker,
                                                           new_topic: Callable[..., str]) -> None:
    name = new_topic()
    async with Admin(bootstrap_servers=tansu.bootstrap, request_timeout_ms=10_000) as admin:
        await admin.create_topics([NewTopic(name, 1, 1)])
        started = time.monotonic()
        with pytest.raises(errors.UnsupportedVersionError, match="CreatePartitions"):
            await admin.create_partitions({name: 2})
        with pytest.raises(errors.KafkaConnectionError, match="DeleteRecords"):
            await admin.delete_records({TopicPartition(name, 0): 0})
        assert time.monotonic() - started < 5
        await admin.delete_topics([name])

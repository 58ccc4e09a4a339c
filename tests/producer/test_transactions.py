"""Transactions on noida-db (Tansu does not hide aborted records, see shared/brokers.md); a
read_committed confluent-kafka consumer is the judge of what became visible."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import confluent_kafka
import pytest
from _producer_peers import aread_confluent, create_topic

from aiokafka_lite import Producer, TopicPartition
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import IllegalStateError, ProducerFenced


async def test_committed_visible_aborted_invisible(noida: EmbeddedBroker,
                                                   new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 2)
    async with Producer(bootstrap_servers=noida.bootstrap, transactional_id=new_topic("txn"),
                        compression_type="lz4") as p:
        await p.begin_transaction()
        for i in range(50):
            await p.send(topic, b"committed-%d" % i, key=b"%d" % i)
        await p.commit_transaction()

        await p.begin_transaction()
        futs = [await p.send(topic, b"aborted-%d" % i, key=b"%d" % i) for i in range(30)]
        await p.flush()  # these reach the log; the abort marker must hide them
        assert all(f.done() and f.exception() is None for f in futs)
        await p.abort_transaction()

        async with p.transaction():
            await p.send(topic, b"ctx-committed", key=b"x")
        with pytest.raises(RuntimeError, match="boom"):
            async with p.transaction():
                await p.send(topic, b"ctx-aborted", key=b"x")
                raise RuntimeError("boom")
        with pytest.raises(IllegalStateError, match="open transaction"):
            await p.send(topic, b"outside a transaction")
    got = await aread_confluent(noida.bootstrap, topic, 51, isolation="read_committed", settle=1.0)
    values = sorted(g.value for g in got)  # type: ignore[type-var]
    assert values == sorted([b"committed-%d" % i for i in range(50)] + [b"ctx-committed"])
    # 50 committed + 30 aborted + 1; "ctx-aborted" was still queued at the abort and never sent.
    everything = await aread_confluent(noida.bootstrap, topic, 81, isolation="read_uncommitted", settle=0.5)
    assert len(everything) == 81
    assert sum(1 for g in everything if g.value.startswith(b"aborted-")) == 30  # type: ignore[union-attr]


async def test_send_offsets_to_transaction(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    src, dst, group = new_topic("src"), new_topic("dst"), new_topic("group")
    await asyncio.to_thread(create_topic, noida.bootstrap, dst, 1)
    async with Producer(bootstrap_servers=noida.bootstrap, transactional_id=new_topic("txn")) as p:
        async with p.transaction():
            await p.send(dst, b"out")
            await p.send_offsets_to_transaction({TopicPartition(src, 0): 42}, group)

    def committed() -> int:
        c = confluent_kafka.Consumer({"bootstrap.servers": noida.bootstrap, "group.id": group})
        try:
            return c.committed([confluent_kafka.TopicPartition(src, 0)], timeout=10)[0].offset
        finally:
            c.close()

    assert await asyncio.to_thread(committed) == 42


async def test_fencing(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic, txn_id = new_topic(), new_topic("txn")
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 1)
    old = Producer(bootstrap_servers=noida.bootstrap, transactional_id=txn_id)
    await old.start()
    try:
        await old.begin_transaction()
        await old.send_and_wait(topic, b"zombie")
        async with Producer(bootstrap_servers=noida.bootstrap, transactional_id=txn_id) as new:
            # The new producer's InitProducerId bumped the epoch: the old one is a zombie now.
            with pytest.raises(ProducerFenced):
                await old.commit_transaction()
            with pytest.raises(ProducerFenced):
                await old.begin_transaction()
            async with new.transaction():
                await new.send(topic, b"alive")
    finally:
        await old.stop()
    got = await aread_confluent(noida.bootstrap, topic, 1, isolation="read_committed", settle=1.0)
    assert [g.value for g in got] == [b"alive"]


async def test_transactional_settings_checked(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    from aiokafka_lite.errors import ConfigError

    with pytest.raises(ConfigError, match="acks"):
        Producer(bootstrap_servers=noida.bootstrap, transactional_id="x", acks=1)
    async with Producer(bootstrap_servers=noida.bootstrap) as p:
        with pytest.raises(IllegalStateError, match="transactional_id"):
            await p.begin_transaction()
    async with Producer(bootstrap_servers=noida.bootstrap, transactional_id=new_topic("txn")) as p:
        with pytest.raises(IllegalStateError, match="open transaction"):
            await p.commit_transaction()
        await p.begin_transaction()
        with pytest.raises(IllegalStateError, match="ready state"):
            await p.begin_transaction()
        await p.abort_transaction()  # nothing sent: no EndTxn needed


async def test_a_fenced_producer_fails_its_send_and_stops_at_once(noida: EmbeddedBroker,
                                                                  new_topic: Callable[..., str]) -> None:
    """Issue 24.1: the older of two producers with one transactional_id learns that it is fenced from
    its first transactional request (AddPartitionsToTxn), through the send's future, and stop() returns."""
    import time

    topic, txn_id = new_topic(), new_topic("txn")
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 1)
    old = Producer(bootstrap_servers=noida.bootstrap, transactional_id=txn_id, request_timeout_ms=5000)
    await old.start()
    try:
        async with Producer(bootstrap_servers=noida.bootstrap, transactional_id=txn_id) as new:
            async with new.transaction():
                await new.send(topic, b"alive")
        t0 = time.monotonic()
        with pytest.raises(ProducerFenced):
            async with old.transaction():
                await asyncio.wait_for(await old.send(topic, b"zombie"), 5)
        assert time.monotonic() - t0 < 5
        with pytest.raises(ProducerFenced):  # every later call answers from the state, at once
            await old.send(topic, b"again")
        with pytest.raises(ProducerFenced):
            await old.begin_transaction()
    finally:
        t0 = time.monotonic()
        await asyncio.wait_for(old.stop(), 10)
        assert time.monotonic() - t0 < 5
    got = await aread_confluent(noida.bootstrap, topic, 1, isolation="read_committed", settle=1.0)
    assert [g.value for g in got] == [b"alive"]

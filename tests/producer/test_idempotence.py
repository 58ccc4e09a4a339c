"""Idempotence against brokers that check sequence numbers (Tansu and noida-db), with faults injected
by a proxy in front of them: order kept through refused requests, no duplicate when a written
batch's answer is lost, and recovery from UNKNOWN_PRODUCER_ID (the broker lost our producer state) by an
epoch bump, as the Java client does for an idempotent producer (KIP-360)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from _kafka_proxy import KafkaProxy
from _producer_peers import aread_confluent, create_topic

from aiokafka_lite import Producer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import NotLeaderOrFollowerError, UnknownProducerIdError


async def test_order_kept_through_refused_requests(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    n = 3000
    async with KafkaProxy(broker.bootstrap) as proxy:
        async with Producer(bootstrap_servers=proxy.bootstrap, batch_size=1024, linger_ms=0,
                            max_batch_bytes=0, retry_backoff_ms=10) as p:
            await p.send_and_wait(topic, b"warm-up")
            # Refuse two produce requests: their batches are retried before anything behind them goes.
            proxy.faults.extend([None, None, ("error", NotLeaderOrFollowerError.errno), None, None,
                                 ("error", NotLeaderOrFollowerError.errno)])
            futs = [await p.send(topic, b"%06d" % i) for i in range(n)]
            mds = [await f for f in futs]
            metrics = p.metrics()
        assert proxy.injected == 2
    assert metrics["batch-retry-total"] >= 2
    assert [md.offset for md in mds] == list(range(1, n + 1))
    got = await aread_confluent(broker.bootstrap, topic, n + 1)
    values = [g.value for g in sorted(got, key=lambda g: g.offset)][1:]
    assert values == [b"%06d" % i for i in range(n)]


async def test_lost_answer_does_not_duplicate(broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    n = 2000
    async with KafkaProxy(broker.bootstrap) as proxy:
        async with Producer(bootstrap_servers=proxy.bootstrap, batch_size=2048, linger_ms=0,
                            max_batch_bytes=0, retry_backoff_ms=10, reconnect_backoff_ms=10) as p:
            await p.send_and_wait(topic, b"warm-up")
            # The broker writes these requests, but the producer never hears back (connection closed).
            proxy.faults.extend([None, "drop", None, None, "drop"])
            futs = [await p.send(topic, b"%06d" % i) for i in range(n)]
            for f in futs:
                await f
            metrics = p.metrics()
        assert proxy.injected == 2
    assert metrics["batch-retry-total"] >= 2
    got = await aread_confluent(broker.bootstrap, topic, n + 1, settle=0.5)
    values = [g.value for g in sorted(got, key=lambda g: g.offset)]
    assert values == [b"warm-up"] + [b"%06d" % i for i in range(n)]  # each exactly once, in order


async def test_unknown_producer_id_bumps_the_epoch_and_resends_in_order(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """UNKNOWN_PRODUCER_ID on a batch that was certainly not written (rule I5c): the producer bumps its
    epoch once nothing is out, restarts the partition at sequence 0 and re-sends everything
    unacknowledged, in order -- the broker checks each sequence."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    n = 3000
    async with KafkaProxy(broker.bootstrap) as proxy:
        async with Producer(bootstrap_servers=proxy.bootstrap, batch_size=1024, linger_ms=0,
                            max_batch_bytes=0, retry_backoff_ms=10) as p:
            await p.send_and_wait(topic, b"warm-up")
            proxy.faults.extend([None, None, ("error", UnknownProducerIdError.errno)])
            futs = [await p.send(topic, b"%06d" % i) for i in range(n)]
            mds = [await f for f in futs]
            metrics = p.metrics()
        assert proxy.injected == 1
    assert metrics["epoch-bump-total"] == 1
    assert metrics["record-error-total"] == 0
    assert [md.offset for md in mds] == list(range(1, n + 1))
    got = await aread_confluent(broker.bootstrap, topic, n + 1, settle=0.5)
    values = [g.value for g in sorted(got, key=lambda g: g.offset)]
    assert values == [b"warm-up"] + [b"%06d" % i for i in range(n)]  # each exactly once, in order


async def test_unknown_producer_id_on_the_mock_cluster(mock_cluster: Callable[..., Any],
                                                       new_topic: Callable[..., str]) -> None:
    """The same through librdkafka's mock (``push_request_errors``): one bump, nothing lost or doubled."""
    mc = mock_cluster(1)
    topic = new_topic()
    mc.create_topic(topic, partitions=2, replication_factor=1)
    n = 500
    async with Producer(bootstrap_servers=mc.bootstrap, linger_ms=5, retry_backoff_ms=10,
                        max_in_flight_requests_per_connection=1) as p:
        await p.send_and_wait(topic, b"warm-up", partition=0)
        mc.push_request_errors(0, [UnknownProducerIdError])
        futs = [await p.send(topic, b"%04d" % i, partition=i % 2) for i in range(n)]
        mds = [await f for f in futs]
        metrics = p.metrics()
    assert metrics["epoch-bump-total"] == 1
    assert metrics["batch-retry-total"] >= 1
    got = await aread_confluent(mc.bootstrap, topic, n + 1, settle=0.3)
    assert len(got) == n + 1
    for part in (0, 1):
        values = [g.value for g in sorted(got, key=lambda g: g.offset) if g.partition == part]
        assert values == [b"warm-up"] * (part == 0) + [b"%04d" % i for i in range(part, n, 2)]
    assert all(md.offset >= 0 for md in mds)

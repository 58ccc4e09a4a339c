"""Idempotence against brokers that check sequence numbers (Tansu and noida-db), with faults injected
by a proxy in front of them: order kept with 5 batches in flight, and no duplicate when a written
batch's answer is lost."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from _kafka_proxy import KafkaProxy
from _producer_peers import aread_confluent, create_topic

from aiokafka_lite import Producer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import NotLeaderOrFollowerError


async def test_order_kept_with_five_in_flight_through_out_of_order_answers(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    n = 3000
    async with KafkaProxy(broker.bootstrap) as proxy:
        async with Producer(bootstrap_servers=proxy.bootstrap, batch_size=1024, linger_ms=0,
                            retry_backoff_ms=10) as p:
            await p.send_and_wait(topic, b"warm-up")
            # Fail the 3rd produce request while later ones are already in flight: the broker refuses
            # those with OUT_OF_ORDER_SEQUENCE_NUMBER and they must follow the retried one.
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
                            retry_backoff_ms=10, reconnect_backoff_ms=10) as p:
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

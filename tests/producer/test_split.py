"""Batches the broker refuses as too large (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE) are split in
halves and retried, as the Java client does; only a single record still too large fails its future.

On librdkafka's mock cluster ``push_request_errors`` makes Produce requests fail with error 10; on Tansu
and noida-db, which check idempotent sequence numbers, the fault-injecting proxy answers a request
with the error itself, so the halves must carry sequences the broker accepts (the refused batch's
range, taken in place) while later batches already in flight are refused out of order and follow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from _kafka_proxy import KafkaProxy
from _producer_peers import aread_confluent, create_topic

from aiokafka_lite import Producer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import MessageTooLargeError, RecordListTooLargeError

PRODUCE = 0


@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotent", "plain"])
async def test_multi_record_batch_is_split_and_delivered_once_in_order(
        mock_cluster: Callable[..., Any], new_topic: Callable[..., str], idempotent: bool) -> None:
    mc = mock_cluster(1)
    topic = new_topic()
    mc.create_topic(topic, partitions=1, replication_factor=1)
    n = 10
    async with Producer(bootstrap_servers=mc.bootstrap, linger_ms=10_000, enable_idempotence=idempotent,
                        acks="all", compression_type="lz4") as p:
        await p.send(topic, b"warm-up")
        await p.flush()
        mc.push_request_errors(PRODUCE, [MessageTooLargeError])
        futs = [await p.send(topic, b"%03d" % i, key=b"k%d" % i, headers=[("h", b"%d" % i)])
                for i in range(n)]
        await p.flush()  # one batch of 10 records: refused, split 5 + 5, both delivered
        mds = [f.result() for f in futs]
        metrics = p.metrics()
    assert metrics["batch-split-total"] == 1
    assert metrics["record-error-total"] == 0
    assert [md.offset for md in mds] == list(range(1, n + 1))
    got = await aread_confluent(mc.bootstrap, topic, n + 1, settle=0.3)
    assert [(g.offset, g.key, g.value, g.headers) for g in got] == [(0, None, b"warm-up", [])] + [
        (i + 1, b"k%d" % i, b"%03d" % i, [("h", b"%d" % i)]) for i in range(n)]


async def test_single_record_still_too_large_fails_only_its_future(mock_cluster: Callable[..., Any],
                                                                    new_topic: Callable[..., str]) -> None:
    mc = mock_cluster(1)
    topic = new_topic()
    mc.create_topic(topic, partitions=1, replication_factor=1)
    async with Producer(bootstrap_servers=mc.bootstrap, linger_ms=10_000) as p:
        await p.send(topic, b"warm-up")
        await p.flush()
        # 4 records refused -> [0, 1] refused -> [0] refused: it alone fails; 1, 2, 3 are delivered.
        mc.push_request_errors(PRODUCE, [MessageTooLargeError, RecordListTooLargeError, MessageTooLargeError])
        bulk = await p.send_many(topic, [b"r0", b"r1", b"r2", b"r3"])
        await p.flush()
        with pytest.raises(MessageTooLargeError, match="MESSAGE_TOO_LARGE"):
            await bulk
        results = bulk.metadata()
        assert isinstance(results[0], MessageTooLargeError)
        assert [r.offset for r in results[1:]] == [1, 2, 3]  # type: ignore[union-attr]
        assert p.metrics()["batch-split-total"] == 2
        after = await p.send(topic, b"after")
        await p.flush()
        assert after.result().offset == 4
    got = await aread_confluent(mc.bootstrap, topic, 5, settle=0.3)
    assert [g.value for g in got] == [b"warm-up", b"r1", b"r2", b"r3", b"after"]


async def test_split_halves_are_accepted_by_brokers_that_check_sequences(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    n = 2000
    async with KafkaProxy(broker.bootstrap) as proxy:
        async with Producer(bootstrap_servers=proxy.bootstrap, batch_size=1024, linger_ms=0,
                            max_batch_bytes=0, retry_backoff_ms=10) as p:
            await p.send_and_wait(topic, b"warm-up")
            # Requests 2 and 5 are refused as too large while later ones are in flight.
            proxy.faults.extend([None, ("error", MessageTooLargeError.errno), None, None,
                                 ("error", RecordListTooLargeError.errno)])
            futs = [await p.send(topic, b"%06d" % i) for i in range(n)]  # all queued before any drain
            mds = [await f for f in futs]
            metrics = p.metrics()
        assert proxy.injected == 2
    assert metrics["batch-split-total"] >= 2
    assert metrics["epoch-bump-total"] == 0  # the halves took the refused batch's sequences: no gap
    assert [md.offset for md in mds] == list(range(1, n + 1))
    got = await aread_confluent(broker.bootstrap, topic, n + 1, settle=0.5)
    assert [g.value for g in sorted(got, key=lambda g: g.offset)] == [b"warm-up"] + [b"%06d" % i
                                                                                    for i in range(n)]

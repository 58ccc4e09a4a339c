"""Faults on librdkafka's mock cluster (3 brokers): leader moves, a broker down, injected errors.

The mock checks idempotent sequence numbers only for transactional producers
(``rd_kafka_mock_validate_records`` in rdkafka_mock.c returns before any check when the request has no
TransactionalId), so an idempotent producer's order must come from the producer alone: one batch per
partition in flight (idempotence.py, rule I2), with the default five requests in flight per connection.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from _producer_peers import aread_confluent

from aiokafka_lite import Producer
from aiokafka_lite.errors import KafkaTimeoutError, MessageTooLargeError
from aiokafka_lite.testing import TRANSPORT_ERROR

PRODUCE = 0


async def test_idempotent_records_survive_faults_exactly_once_in_order(
        mock_cluster: Callable[..., Any], new_topic: Callable[..., str]) -> None:
    mc = mock_cluster(3)
    topic = new_topic()
    mc.create_topic(topic, partitions=6, replication_factor=3)
    total, chunk = 100_000, 2000
    stop_faults = asyncio.Event()

    async def faults() -> None:
        await asyncio.sleep(0.2)
        mc.set_leader(topic, 0, 2)
        mc.set_leader(topic, 1, 3)
        await asyncio.sleep(0.2)
        mc.push_request_errors(PRODUCE, [6, 7, 13, 6, TRANSPORT_ERROR, 7, 13])
        await asyncio.sleep(0.2)
        mc.set_down(2)  # leader of several partitions, for 3 s
        await asyncio.sleep(3.0)
        mc.set_up(2)
        mc.set_leader(topic, 2, 1)
        mc.push_request_errors(PRODUCE, [13, 7, 6])
        stop_faults.set()

    async with Producer(bootstrap_servers=mc.bootstrap, linger_ms=5,
                        retry_backoff_ms=20, reconnect_backoff_ms=20, request_timeout_ms=5000,
                        delivery_timeout_ms=60_000) as p:
        fault_task = asyncio.ensure_future(faults())
        futs = []
        t0 = time.monotonic()
        for start in range(0, total, chunk):
            for i in range(start, start + chunk):
                futs.append(await p.send(topic, b"%07d" % i, key=b"%d" % (i % 97)))
            await asyncio.sleep(0.03)  # spread the records over the faults
        await fault_task
        await p.flush()
        elapsed = time.monotonic() - t0
        metrics = p.metrics()
    assert stop_faults.is_set()
    mds = [f.result() for f in futs]  # every record acknowledged (none failed)
    assert metrics["record-retry-total"] > 0  # the faults really hit us
    # Offsets: per partition, in send order and without gaps.
    per_part: dict[int, list[int]] = {}
    for md in mds:
        per_part.setdefault(md.partition, []).append(md.offset)
    for offsets in per_part.values():
        assert offsets == list(range(len(offsets)))
    # Read back: each record exactly once, at the offset we were told, in send order per partition.
    got = await aread_confluent(mc.bootstrap, topic, total, timeout=30, settle=0.5)
    assert len(got) == total
    values = {(g.partition, g.offset): int(g.value) for g in got}  # type: ignore[arg-type]
    assert sorted(values.values()) == list(range(total))
    for i, md in enumerate(mds):
        assert values[(md.partition, md.offset)] == i
    assert elapsed < 30


async def test_message_too_large_reaches_the_callers_future(mock_cluster: Callable[..., Any],
                                                            new_topic: Callable[..., str]) -> None:
    mc = mock_cluster(3)
    topic = new_topic()
    mc.create_topic(topic, partitions=1, replication_factor=1)
    async with Producer(bootstrap_servers=mc.bootstrap) as p:
        await p.send_and_wait(topic, b"warm-up")
        mc.push_request_errors(PRODUCE, [MessageTooLargeError])
        fut = await p.send(topic, b"refused")
        with pytest.raises(MessageTooLargeError, match="MESSAGE_TOO_LARGE"):
            await fut
        # The producer carries on (an idempotent producer bumps its epoch past the gap).
        md = await p.send_and_wait(topic, b"after")
        assert md.offset >= 1


async def test_backpressure_bounded_memory_and_max_block(mock_cluster: Callable[..., Any],
                                                         new_topic: Callable[..., str]) -> None:
    mc = mock_cluster(3)
    topic = new_topic()
    mc.create_topic(topic, partitions=3, replication_factor=1)
    value = b"v" * 1000
    async with Producer(bootstrap_servers=mc.bootstrap, buffer_memory=1 << 20,
                        max_block_ms=700, linger_ms=1) as p:
        await p.send_and_wait(topic, b"warm-up")
        mc.set_down()  # every broker: nothing drains any more
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        sent = 0
        with pytest.raises(KafkaTimeoutError, match="max_block_ms"):
            while True:
                # Only the send() that found the buffer full is timed: filling it is CPU work (slow on
                # the pure-Python twin under tracemalloc on a loaded machine), not part of max_block_ms.
                t0 = time.monotonic()
                await p.send(topic, value)
                sent += 1
        blocked = time.monotonic() - t0
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        m = p.metrics()
        # ~1 MiB of records went into the buffer, then send() waited max_block_ms and gave up.
        assert 700 <= sent <= 1100
        assert 0.65 < blocked < 3.0
        assert m["buffer-available-bytes"] < 32 * 1024 and m["waiting-threads"] == 0
        assert peak < 3 * (1 << 20), f"memory grew by {peak} bytes"
        t1 = time.monotonic()
        with pytest.raises(KafkaTimeoutError):
            await p.send(topic, value)  # still full: waits again, then the same clear error
        assert time.monotonic() - t1 > 0.65
        mc.set_up()
        await p.flush()
        assert p.metrics()["buffer-available-bytes"] == 1 << 20


async def test_undeliverable_records_expire_and_stop_fails_the_rest(mock_cluster: Callable[..., Any],
                                                                    new_topic: Callable[..., str]) -> None:
    mc = mock_cluster(3)
    topic = new_topic()
    mc.create_topic(topic, partitions=1, replication_factor=1)
    async with Producer(bootstrap_servers=mc.bootstrap, request_timeout_ms=400,
                        delivery_timeout_ms=1000, linger_ms=0) as p:
        await p.send_and_wait(topic, b"warm-up")
        mc.set_down()
        t0 = time.monotonic()
        fut = await p.send(topic, b"lost")
        with pytest.raises(KafkaTimeoutError, match="delivery_timeout_ms=1000"):
            await fut
        assert 0.9 < time.monotonic() - t0 < 5
        pending = [await p.send(topic, b"at stop %d" % i) for i in range(10)]
        t1 = time.monotonic()
    # stop() waited for them, then they failed with a clear error instead of hanging.
    assert time.monotonic() - t1 < 5
    for f in pending:
        with pytest.raises(KafkaTimeoutError, match=r"not delivered|expired"):
            f.result()


async def test_a_dead_sender_reaches_the_caller(mock_cluster: Callable[..., Any],
                                                new_topic: Callable[..., str]) -> None:
    from aiokafka_lite.errors import ClusterAuthorizationFailedError

    mc = mock_cluster(1)
    topic = new_topic()
    mc.create_topic(topic, partitions=1, replication_factor=1)
    # InitProducerId is answered after 300 ms with a fatal error: records sent meanwhile are pending.
    mc.push_request_error_rtts(1, 22, [(ClusterAuthorizationFailedError, 300)])
    p = Producer(bootstrap_servers=mc.bootstrap)
    await p.start()
    try:
        futs = [await p.send(topic, b"x%d" % i) for i in range(5)]
        assert not any(f.done() for f in futs)
        for f in futs:
            with pytest.raises(ClusterAuthorizationFailedError):
                await asyncio.wait_for(f, 10)  # the pending records fail with the cause
        with pytest.raises(ClusterAuthorizationFailedError):
            await p.send(topic, b"y")  # and so does the next send
        with pytest.raises(ClusterAuthorizationFailedError):
            await p.flush()
    finally:
        await p.stop()
    async with Producer(bootstrap_servers=mc.bootstrap) as q:
        assert (await q.send_and_wait(topic, b"z")).offset == 0


async def test_without_idempotence_one_in_flight_mutes_the_partition(mock_cluster: Callable[..., Any],
                                                                     new_topic: Callable[..., str]) -> None:
    """Seed 000's guaranteeMessageOrder: no sequence numbers, so order through retries comes from sending
    a partition's next batch only after the previous one was answered."""
    mc = mock_cluster(3)
    topic = new_topic()
    mc.create_topic(topic, partitions=2, replication_factor=3)
    total = 20_000
    async with Producer(bootstrap_servers=mc.bootstrap, enable_idempotence=False,
                        acks=1, max_in_flight_requests_per_connection=1, batch_size=2000, linger_ms=1,
                        retry_backoff_ms=10) as p:
        futs = []
        for i in range(total):
            futs.append(await p.send(topic, b"%06d" % i, key=b"%d" % (i % 2)))
            if i == 5000:
                mc.push_request_errors(PRODUCE, [6, 7, 13, TRANSPORT_ERROR, 6, 7])
            if i == 12000:
                mc.set_leader(topic, 0, 3)
                mc.push_request_errors(PRODUCE, [13, 6])
            if i % 1000 == 0:
                await asyncio.sleep(0.01)
        mds = [await f for f in futs]
        assert p.metrics()["batch-retry-total"] > 0
    got = await aread_confluent(mc.bootstrap, topic, total, timeout=30, settle=0.3)
    assert len(got) == total
    for part in (0, 1):
        values = [int(g.value) for g in sorted(got, key=lambda g: g.offset) if g.partition == part]  # type: ignore[arg-type]
        assert values == sorted(values)
    assert all(md.offset >= 0 for md in mds)


async def test_order_on_a_broker_that_does_not_check_sequences(
        mock_cluster: Callable[..., Any], new_topic: Callable[..., str]) -> None:
    """One partition, small batches sent back to back, and produce requests refused now and then with
    retriable errors. The mock writes a later batch even when the one before it was refused (it checks no
    sequences for an idempotent producer), so only rule I2 -- one batch of a partition in flight -- keeps
    the order. With five batches of the partition in flight this reorders records."""
    mc = mock_cluster(1)
    topic = new_topic()
    mc.create_topic(topic, partitions=1, replication_factor=1)
    n = 4000
    async with Producer(bootstrap_servers=mc.bootstrap, batch_size=1024, linger_ms=0, max_batch_bytes=0,
                        retry_backoff_ms=5) as p:
        await p.send_and_wait(topic, b"warm-up")
        mc.set_rtt(1, 20)  # answers take 20 ms: several batches would be in flight without rule I2
        mc.push_request_errors(PRODUCE, [0, 0, 6, 0, 0, 7, 0, 56, 0, 0, 19, 0, 6])
        futs = []
        for i in range(n):
            futs.append(await p.send(topic, b"%06d" % i))
            if i % 10 == 9:
                await asyncio.sleep(0.0005)  # a steady stream: new batches while others are in flight
        for f in futs:
            await f
    got = await aread_confluent(mc.bootstrap, topic, n + 1, settle=0.5)
    values = [g.value for g in sorted(got, key=lambda g: g.offset)]
    assert values == [b"warm-up"] + [b"%06d" % i for i in range(n)]


@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotent", "plain"])
async def test_a_backlog_to_one_partition_goes_in_few_requests_on_a_far_link(
        mock_cluster: Callable[..., Any], new_topic: Callable[..., str], idempotent: bool) -> None:
    """With one batch of a partition in flight (I2), a burst of 3,000 records to one partition through a
    broker answering after 20 ms goes as a few grown batches (accumulator: growth), not as ~22 batches
    of batch_size one round trip after another. Without idempotence the same: once every request slot
    is busy, the waiting batch grows instead of queueing batch_size pieces behind it."""
    mc = mock_cluster(1)
    topic = new_topic()
    mc.create_topic(topic, partitions=1, replication_factor=1)
    settings: dict[str, Any] = {} if idempotent else {"enable_idempotence": False, "acks": 1}
    async with Producer(bootstrap_servers=mc.bootstrap, linger_ms=5, **settings) as p:
        await p.send_and_wait(topic, b"warm-up")
        mc.set_rtt(1, 20)
        before = p.metrics()["request-total"]
        futs = [await p.send(topic, b"x" * 100, partition=0) for _ in range(3000)]
        mds = [await f for f in futs]
        requests = p.metrics()["request-total"] - before
    assert [m.offset for m in mds] == list(range(1, 3001))
    assert requests <= 5, f"{requests} produce requests for a 300 KB backlog"


async def test_transaction_coordinator_moves_to_a_broker_never_connected(
        mock_cluster: Callable[..., Any], new_topic: Callable[..., str]) -> None:
    """The transaction coordinator moves to a broker this producer has never talked to (it leads no
    partition, and was not the bootstrap). AddPartitionsToTxn and EndTxn connect to it before asking its
    API versions; CI once saw AddPartitionsToTxn retry for 90 s on "node 2 has not been connected yet"."""
    mc = mock_cluster(5)
    topic = new_topic()
    mc.create_topic(topic, partitions=1, replication_factor=3)
    mc.set_leader(topic, 0, 1)
    tid = new_topic("txn")
    mc.set_coordinator("transaction", tid, 1)
    host, port = mc.broker_address(1)
    async with Producer(bootstrap_servers=f"{host}:{port}", transactional_id=tid,
                        transaction_timeout_ms=10_000, request_timeout_ms=3000) as p:
        await p.begin_transaction()
        await p.send_and_wait(topic, b"one")
        await p.commit_transaction()
        pool = p._client._pool
        # Metadata may have gone to a random broker: move to two that no connection has reached yet.
        fresh = [n for n in mc.broker_ids if pool.api_versions(n) is None]
        assert len(fresh) >= 2, fresh
        mc.set_coordinator("transaction", tid, fresh[0])
        await p.begin_transaction()
        await asyncio.wait_for(p.send_and_wait(topic, b"two"), 15)
        fresh = [n for n in mc.broker_ids if pool.api_versions(n) is None]
        assert fresh
        mc.set_coordinator("transaction", tid, fresh[0])
        await asyncio.wait_for(p.commit_transaction(), 15)
    got = await aread_confluent(mc.bootstrap, topic, 2, isolation="read_committed")
    assert [g.value for g in got] == [b"one", b"two"]


async def test_reconnecting_to_a_leader_waits_reconnect_backoff_not_retry_backoff(
        mock_cluster: Callable[..., Any], new_topic: Callable[..., str]) -> None:
    """A leader that was down is reconnected on ``reconnect_backoff_ms`` (the connection pool's own backoff),
    so records flow again soon after it is back; ``retry_backoff_ms`` governs retried requests, and stacking
    it on every failed connect held the node for that long after each attempt."""
    mc = mock_cluster(1)
    topic = new_topic()
    mc.create_topic(topic, partitions=1, replication_factor=1)
    async with Producer(bootstrap_servers=mc.bootstrap, linger_ms=0, retry_backoff_ms=10_000,
                        reconnect_backoff_ms=20, reconnect_backoff_max_ms=50,
                        delivery_timeout_ms=60_000) as p:
        await p.send_and_wait(topic, b"warm-up")
        mc.set_down()
        await asyncio.sleep(0.3)  # the producer sees its connection closed: the record below finds none
        fut = await p.send(topic, b"while down")
        await asyncio.sleep(0.5)  # connect attempts fail meanwhile (the record is never in flight)
        assert not fut.done()
        mc.set_up()
        md = await asyncio.wait_for(fut, 3.0)
        assert md.offset == 1

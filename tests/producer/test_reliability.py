"""Regression tests for the idempotent producer's reliability rules (idempotence.py, I1-I8), on real
brokers that check sequences (Tansu and noida-db) behind the fault-injecting proxy, and for the
producer's shutdown bounds.

Each test is one defect of issue 9: a refused retry of unknown outcome must neither stall the partition
nor be resent under a new epoch (duplicate); an OUT_OF_ORDER_SEQUENCE_NUMBER for the very next sequence
means the broker lost acknowledged records and must reach the caller; stop() must honour
delivery_timeout_ms with the broker gone and leave nothing running when it is cancelled.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from _kafka_proxy import KafkaProxy
from _producer_peers import aread_confluent, create_topic

from aiokafka_lite import Producer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import (
    KafkaTimeoutError,
    OutOfOrderSequenceNumberError,
    ProducerClosedError,
    UnknownProducerIdError,
)


async def _outcomes(futs: list[asyncio.Future[object]]) -> tuple[list[int], dict[int, BaseException]]:
    ok: list[int] = []
    failed: dict[int, BaseException] = {}
    for i, f in enumerate(futs):
        try:
            await f
            ok.append(i)
        except Exception as exc:  # every failure is collected and asserted on by the caller
            failed[i] = exc
    return ok, failed


async def test_refused_retry_of_unknown_outcome_is_reported_not_stalled_nor_duplicated(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """I5a + I7: a batch is written but its answer is lost (unknown outcome); its retry is refused with
    UNKNOWN_PRODUCER_ID. That batch fails saying it may have been written, is never resent (it is in the
    log exactly once, from the lost attempt), and everything behind it is delivered at once under a
    bumped epoch -- nothing waits for delivery_timeout_ms."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    n = 2000
    async with KafkaProxy(broker.bootstrap) as proxy:
        async with Producer(bootstrap_servers=proxy.bootstrap, batch_size=2048, linger_ms=0,
                            retry_backoff_ms=10, reconnect_backoff_ms=10, request_timeout_ms=5000,
                            delivery_timeout_ms=20_000) as p:
            await p.send_and_wait(topic, b"warm-up")
            proxy.faults.extend(["drop", ("error", UnknownProducerIdError.errno)])
            t0 = time.monotonic()
            futs = [await p.send(topic, b"%06d" % i) for i in range(n)]
            _ok, failed = await _outcomes(futs)
            elapsed = time.monotonic() - t0
            bumps = p.metrics()["epoch-bump-total"]
        assert proxy.injected == 2
    assert failed, "the refused batch of unknown outcome must fail"
    assert all(isinstance(e, UnknownProducerIdError) and "may or may not have been written" in str(e)
               for e in failed.values()), failed
    assert sorted(failed) == list(range(min(failed), max(failed) + 1))  # one batch
    assert elapsed < 15, f"stalled for {elapsed:.1f} s (delivery_timeout_ms is 20 s)"
    assert bumps == 1
    got = await aread_confluent(broker.bootstrap, topic, n + 1, settle=0.5)
    values = [g.value for g in sorted(got, key=lambda g: g.offset)]
    # The lost attempt was written once; nothing was written twice; order kept.
    assert values == [b"warm-up"] + [b"%06d" % i for i in range(n)]


async def test_out_of_order_for_the_next_sequence_reports_lost_records(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """I5b: OUT_OF_ORDER_SEQUENCE_NUMBER for exactly the sequence after the last acknowledged one means
    the broker lost acknowledged records. The refused batch fails with OutOfOrderSequenceNumberError
    (the application learns of the loss); later records still go under a bumped epoch."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    n = 1000
    async with KafkaProxy(broker.bootstrap) as proxy:
        async with Producer(bootstrap_servers=proxy.bootstrap, batch_size=2048, linger_ms=0,
                            retry_backoff_ms=10) as p:
            await p.send_and_wait(topic, b"warm-up")
            proxy.faults.append(("error", OutOfOrderSequenceNumberError.errno))
            futs = [await p.send(topic, b"%06d" % i) for i in range(n)]
            ok, failed = await _outcomes(futs)
        assert proxy.injected == 1
    assert failed and all(isinstance(e, OutOfOrderSequenceNumberError) and "lost acknowledged" in str(e)
                          for e in failed.values()), failed
    assert min(failed) == 0 and sorted(failed) == list(range(len(failed)))
    got = await aread_confluent(broker.bootstrap, topic, 1 + len(ok), settle=0.5)
    values = [g.value for g in sorted(got, key=lambda g: g.offset)]
    assert values == [b"warm-up"] + [b"%06d" % i for i in ok]


async def test_stop_with_the_broker_gone_honours_delivery_timeout(tansu: EmbeddedBroker) -> None:
    """stop() with the broker unreachable returns once delivery_timeout_ms has passed (not later: the
    Sender used to sleep with no timer after expiring the last batches), and every record fails with a
    timeout that says why."""
    proxy = KafkaProxy(tansu.bootstrap)
    await proxy.start()
    p = Producer(bootstrap_servers=proxy.bootstrap, linger_ms=0, request_timeout_ms=1000,
                 delivery_timeout_ms=2500, reconnect_backoff_ms=50, retry_backoff_ms=50)
    await p.start()
    await p.send_and_wait("reliability-stop", b"warm-up")
    await proxy.stop()
    # The broker's address now accepts connections and never answers (a hung broker): every reconnect
    # hangs in its handshake until socket_connection_setup_timeout_ms (10 s), far past the deadline.
    silent_conns: list[asyncio.StreamWriter] = []

    async def hold(_r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        silent_conns.append(w)

    silent = await asyncio.start_server(hold, "127.0.0.1", proxy.port)
    try:
        futs = [await p.send("reliability-stop", b"x") for _ in range(10)]
        t0 = time.monotonic()
        await p.stop()
        took = time.monotonic() - t0
    finally:
        silent.close()
        for w in silent_conns:
            w.close()
    ok, failed = await _outcomes(futs)
    assert not ok and len(failed) == 10
    assert all(isinstance(e, KafkaTimeoutError) and "delivery_timeout_ms=2500" in str(e)
               for e in failed.values()), failed
    assert took < 2.5 + 1.5, f"stop() took {took:.1f} s with delivery_timeout_ms=2500"


async def test_cancelled_stop_leaves_nothing_running(tansu: EmbeddedBroker) -> None:
    """A stop() cancelled by wait_for fails what was pending with ProducerClosedError and stops the
    Sender and its helpers; a second stop() returns."""
    proxy = KafkaProxy(tansu.bootstrap)
    await proxy.start()
    p = Producer(bootstrap_servers=proxy.bootstrap, linger_ms=0, request_timeout_ms=5000,
                 delivery_timeout_ms=60_000)
    await p.start()
    await p.send_and_wait("reliability-stop", b"warm-up")
    await proxy.stop()
    futs = [await p.send("reliability-stop", b"x") for _ in range(5)]
    before = {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(p.stop(), 0.5)
    ok, failed = await _outcomes(futs)
    assert not ok and all(isinstance(e, ProducerClosedError) for e in failed.values()), failed
    await asyncio.sleep(0.05)
    left = [t for t in before if not t.done()]
    assert not left, f"still running after a cancelled stop(): {left}"
    await asyncio.wait_for(p.stop(), 2)


async def test_expiry_names_the_last_error_the_broker_gave(tansu: EmbeddedBroker) -> None:
    """A broker that answers UNKNOWN_TOPIC_OR_PARTITION every time: the records expire with that error in
    the message, not a guess that the broker was unreachable."""
    async with KafkaProxy(tansu.bootstrap) as proxy:
        async with Producer(bootstrap_servers=proxy.bootstrap, linger_ms=0, request_timeout_ms=500,
                            delivery_timeout_ms=1500, retry_backoff_ms=20) as p:
            await p.send_and_wait("reliability-expiry", b"warm-up")
            proxy.faults.extend([("error", 3)] * 1000)
            fut = await p.send("reliability-expiry", b"x")
            with pytest.raises(KafkaTimeoutError) as info:
                await fut
    msg = str(info.value)
    assert "delivery_timeout_ms=1500" in msg and "UNKNOWN_TOPIC_OR_PARTITION" in msg, msg
    assert "unreachable" not in msg, msg


async def test_a_second_stop_returns_only_when_the_producer_is_stopped(tansu: EmbeddedBroker) -> None:
    """Issue 24.5: with 100 records waiting behind a slow answer, a second concurrent stop() waits for the
    first: when it returns, every record has its outcome and the producer is stopped."""
    async with KafkaProxy(tansu.bootstrap) as proxy:
        p = Producer(bootstrap_servers=proxy.bootstrap, linger_ms=0, request_timeout_ms=5000)
        await p.start()
        await p.send_and_wait("reliability-stop2", b"warm-up")
        proxy.faults.append(("delay", 1.0))
        futs = [await p.send("reliability-stop2", b"%d" % i) for i in range(100)]
        first = asyncio.ensure_future(p.stop())
        await asyncio.sleep(0.05)
        assert not first.done()
        t0 = time.monotonic()
        await p.stop()
        took = time.monotonic() - t0
        assert all(f.done() for f in futs), f"second stop() returned after {took:.2f} s with records pending"
        assert "stopped" in repr(p)
        await asyncio.wait_for(first, 1)
        ok, failed = await _outcomes(futs)  # type: ignore[arg-type]
        assert len(ok) == 100 and not failed, failed
        assert took > 0.5  # it waited for the delayed answer


async def test_stop_wakes_a_start_waiting_for_a_hung_broker() -> None:
    """stop() while start() waits on a broker that accepts and never answers: start() fails at once, stop()
    returns with the producer stopped, and a later start() says it was stopped."""
    conns: list[asyncio.StreamWriter] = []

    async def hold(_r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        conns.append(w)

    hung = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = hung.sockets[0].getsockname()[1]
    try:
        p = Producer(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=5000)
        start = asyncio.ensure_future(p.start())
        await asyncio.sleep(0.2)
        t0 = time.monotonic()
        await asyncio.wait_for(p.stop(), 5)
        assert time.monotonic() - t0 < 1.0
        assert "stopped" in repr(p)
        with pytest.raises(Exception):  # noqa: B017 - the client's closed-while-connecting error
            await asyncio.wait_for(start, 1)
        with pytest.raises(ProducerClosedError):
            await p.start()
    finally:
        hung.close()
        for w in conns:
            w.close()

"""The record future's asyncio contract: timeouts and cancellation end the wait on a record at once.

``send()`` returns a RecordFuture that must behave as aiokafka's ``asyncio.Future`` does under
``asyncio.wait_for``, ``asyncio.timeout``, ``cancel()``, ``asyncio.shield``, ``asyncio.gather`` and a
cancelled awaiting task: the handle is cancelled for its awaiters and callbacks at once, other records of
the same batch (and ``flush()``) keep waiting for the batch, and the record is still delivered.
The unit tests run on both forms of ``_handles.py`` (compiled and Python); the broker tests use the
build selected by ``AIOKAFKA_LITE_PURE``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from _producer_peers import aread_confluent, create_topic

from aiokafka_lite import Producer
from aiokafka_lite._native import pure_module
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.producer import _handles, handles
from aiokafka_lite.structs import RecordMetadata

_pure = pure_module("aiokafka_lite.producer._handles")
IMPLS = [pytest.param(_pure, id="python")]
if not handles.PURE:
    IMPLS.append(pytest.param(_handles, id="compiled"))

#: How long a wait given up after 0.2 s may take on a loaded machine (the record itself takes 3 s).
BOUND = 1.5


class _LoopErrors:
    """Collects what the loop's exception handler would log (InvalidStateError in a callback, ...)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.seen: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _loop, ctx: self.seen.append(ctx))


def _batch(impl: ModuleType, n: int) -> tuple[Any, list[Any]]:
    b = impl.BatchResult("t", 0, asyncio.get_running_loop())
    return b, [impl.make_future(b, i, 100 + i) for i in range(n)]


@pytest.mark.parametrize("impl", IMPLS)
async def test_wait_for_times_out_and_cancels_only_that_record(impl: ModuleType) -> None:
    loop = asyncio.get_running_loop()
    errors = _LoopErrors(loop)
    b, (f, g) = _batch(impl, 2)
    loop.call_later(3.0, b.set_result, 10)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(f, 0.2)
    assert time.monotonic() - started < BOUND
    assert f.done() and f.cancelled() and not g.done()
    with pytest.raises(asyncio.CancelledError):
        f.result()
    b.set_result(10)  # the batch's outcome comes later: no InvalidStateError, nothing logged
    assert await g == RecordMetadata("t", 0, 11, 101, -1)
    assert f.cancelled() and repr(f).endswith("cancelled>")
    await asyncio.sleep(0)
    assert errors.seen == []


@pytest.mark.parametrize("impl", IMPLS)
async def test_asyncio_timeout_cancels_the_awaited_record(impl: ModuleType) -> None:
    b, (f, g) = _batch(impl, 2)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await f
    assert time.monotonic() - started < BOUND
    assert f.cancelled() and not g.done()
    b.set_result(0)
    assert (await g).offset == 1


@pytest.mark.parametrize("impl", IMPLS)
async def test_cancel_of_a_pending_record(impl: ModuleType) -> None:
    loop = asyncio.get_running_loop()
    errors = _LoopErrors(loop)
    b, (f, g) = _batch(impl, 2)
    seen: list[tuple[str, Any]] = []
    f.add_done_callback(lambda h: seen.append(("f", h)))
    g.add_done_callback(lambda h: seen.append(("g", h)))
    waiting = asyncio.ensure_future(_await(f))
    await asyncio.sleep(0)
    assert f.cancel("enough") is True
    assert f.cancel() is False and f.done() and f.cancelled()
    await asyncio.sleep(0)
    assert seen == [("f", f)]  # at once, not at the batch's outcome; g still pending
    with pytest.raises(asyncio.CancelledError):
        await waiting
    with pytest.raises(asyncio.CancelledError, match="enough"):
        f.exception()
    late: list[Any] = []
    f.add_done_callback(late.append)
    await asyncio.sleep(0)
    assert late == [f]
    b.set_exception(RuntimeError("batch failed later"))
    await asyncio.sleep(0)
    assert seen == [("f", f), ("g", g)] and isinstance(g.exception(), RuntimeError)
    assert errors.seen == []
    # A record with an outcome cannot be cancelled.
    assert g.cancel() is False and not g.cancelled()


@pytest.mark.parametrize("impl", IMPLS)
async def test_shield_gives_up_the_wait_not_the_record(impl: ModuleType) -> None:
    """A timeout around a shielded and an unshielded record of one batch ends at once; it cancels the
    unshielded one only."""
    b, (f, g) = _batch(impl, 2)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.gather(asyncio.shield(f), g), 0.2)
    assert time.monotonic() - started < BOUND
    assert not f.done() and g.cancelled()
    b.set_result(7)
    assert (await f).offset == 7


@pytest.mark.parametrize("impl", IMPLS)
async def test_gather_return_exceptions_with_a_cancelled_record(impl: ModuleType) -> None:
    b, (f, g) = _batch(impl, 2)
    gathered = asyncio.gather(f, g, return_exceptions=True)
    await asyncio.sleep(0)
    f.cancel("stop")
    asyncio.get_running_loop().call_later(0.01, b.set_result, 3)
    out = await gathered
    assert isinstance(out[0], asyncio.CancelledError) and out[0].args == ("stop",)
    assert out[1].offset == 4
    # Cancelling the gather cancels its pending children, as with asyncio futures.
    _b2, (h,) = _batch(impl, 1)
    outer = asyncio.gather(h)
    await asyncio.sleep(0)
    assert outer.cancel() is True and h.cancelled()
    with pytest.raises(asyncio.CancelledError):
        await outer


@pytest.mark.parametrize("impl", IMPLS)
async def test_cancelled_task_cancels_its_record_only(impl: ModuleType) -> None:
    b, (f, g) = _batch(impl, 2)
    cancelled = asyncio.ensure_future(_await(f))
    other = asyncio.ensure_future(_await(g))
    flushing = asyncio.ensure_future(b.waiter())
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert f.cancelled()
    await asyncio.sleep(0.01)
    # The batch's other waits are untouched: they still wait for its outcome.
    assert not other.done() and not flushing.done() and not g.done()
    b.set_result(20)
    assert (await other).offset == 21
    await flushing


@pytest.mark.parametrize("impl", IMPLS)
async def test_a_cancelled_batch_wait_leaves_the_others(impl: ModuleType) -> None:
    """``BatchResult.waiter()`` (what ``await bulk`` and ``flush()`` wait on) is one future per wait."""
    b, _ = _batch(impl, 1)
    first, second = b.waiter(), b.waiter()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(first, 0.05)
    assert first.cancelled() and not second.done()
    b.set_result(1)
    await second
    assert b.waiter().done()


async def _await(f: Any) -> RecordMetadata:
    return await f  # type: ignore[no-any-return]


async def test_broker_wait_for_and_cancel_keep_records_and_producer(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """On a broker: each way of giving up a record's wait ends at once; every record is still delivered
    and the producer keeps working."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    async with Producer(bootstrap_servers=broker.bootstrap, linger_ms=3000) as p:
        await (await p.send(topic, b"warm-up", partition=0))
        futs = [await p.send(topic, b"r%d" % i, partition=0) for i in range(6)]
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(futs[0], 0.2)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await futs[1]
        task = asyncio.ensure_future(_await(futs[2]))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.shield(futs[3]), 0.2)
        futs[4].cancel()
        assert time.monotonic() - started < 3 * BOUND
        assert [f.cancelled() for f in futs] == [True] * 3 + [False, True, False]
        gathered = await asyncio.gather(*futs, return_exceptions=True)
        assert [type(x) for x in gathered] == [asyncio.CancelledError] * 3 + [RecordMetadata,
                                                                              asyncio.CancelledError,
                                                                              RecordMetadata]
        assert gathered[5].offset == gathered[3].offset + 2 == 6
        md = await (await p.send(topic, b"after", partition=0))
        assert md.offset == 7
    got = await aread_confluent(broker.bootstrap, topic, 8)
    assert [g.value for g in got] == [b"warm-up", *(b"r%d" % i for i in range(6)), b"after"]


async def test_broker_bulk_wait_timeout_leaves_flush_waiting(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """A wait on ``send_many``'s future given up after 0.2 s ends then and leaves the batch's other waits
    (``flush()``, the next ``await bulk``) waiting for the records' outcome."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    async with Producer(bootstrap_servers=broker.bootstrap, linger_ms=3000) as p:
        await (await p.send(topic, b"warm-up", partition=0))
        bulk = await p.send_many(topic, [b"a", b"b", b"c"], partition=0)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(bulk, 0.2)
        assert time.monotonic() - started < BOUND
        await p.flush()
        assert bulk.done()
        assert await bulk == 3
        assert [m.offset for m in bulk.metadata()] == [1, 2, 3]  # type: ignore[union-attr]


async def test_broker_interceptor_sees_a_cancelled_record_delivered(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """Cancelling the caller's future does not change what interceptors learn: the record's metadata."""
    topic = new_topic()
    acks: list[tuple[RecordMetadata | None, BaseException | None]] = []

    class Recorder:
        def on_send(self, record: Any) -> Any:
            return record

        def on_acknowledgement(self, md: RecordMetadata | None, exc: BaseException | None) -> None:
            acks.append((md, exc))

    async with Producer(bootstrap_servers=broker.bootstrap, linger_ms=3000, interceptors=[Recorder()]) as p:
        fut = await p.send(topic, b"x", partition=0)
        assert fut.cancel() is True
        await p.flush()
    assert len(acks) == 1 and acks[0][1] is None and acks[0][0] is not None and acks[0][0].offset == 0

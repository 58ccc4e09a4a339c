"""Producer contract clauses that fail on this branch and wait for their owner's change (findings file):
a second concurrent stop() returns only once the producer is stopped (issue 24, item 5); flush() after
stop() raises ProducerClosedError like every other call. Both pass once `txn`'s lifecycle is merged."""

from __future__ import annotations

from _contract import raises_at_once, second_stop_waits, within
from test_producer_contract import STOP_TIMEOUT, VALUE, Ctx, _started, ctx  # noqa: F401 - ctx: fixture

from aiokafka_lite.errors import ProducerClosedError


async def test_second_stop_returns_when_stopped(ctx: Ctx) -> None:  # noqa: F811 - the fixture
    p = await _started(ctx)
    await p.send(ctx.topic, VALUE, partition=0)
    await second_stop_waits(lambda: p.stop(timeout=STOP_TIMEOUT), ctx.broker.pid)


async def test_flush_after_stop_raises_at_once(ctx: Ctx) -> None:  # noqa: F811 - the fixture
    p = await _started(ctx)
    await within(p.stop(), "stop()")
    await raises_at_once(p.flush, ProducerClosedError)

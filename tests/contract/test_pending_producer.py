"""Producer contract clauses that fail on main and wait for their owner's fix (contract-findings.md):
a second concurrent stop() returns only once the producer is stopped (issue 24, item 5)."""

from __future__ import annotations

import asyncio

from _contract import frozen, within
from test_producer_contract import STOP_TIMEOUT, VALUE, Ctx, _started, ctx  # noqa: F401 - ctx: fixture


async def test_second_stop_returns_when_stopped(ctx: Ctx) -> None:  # noqa: F811 - the fixture
    p = await _started(ctx)
    with frozen(ctx.broker.pid):
        fut = await p.send(ctx.topic, VALUE, partition=0)
        first = asyncio.ensure_future(p.stop(timeout=STOP_TIMEOUT))
        await asyncio.sleep(0)
        await within(p.stop(timeout=STOP_TIMEOUT), "a second stop()")
        assert first.done(), "the second stop() returned while the first was still stopping"
        assert fut.done()
    await within(first, "the first stop()")

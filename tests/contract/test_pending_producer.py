"""Producer contract clauses that fail on main and wait for their owner's fix (contract-findings.md):
a second concurrent stop() returns only once the producer is stopped (issue 24, item 5)."""

from __future__ import annotations

from _contract import second_stop_waits
from test_producer_contract import STOP_TIMEOUT, VALUE, Ctx, _started, ctx  # noqa: F401 - ctx: fixture


async def test_second_stop_returns_when_stopped(ctx: Ctx) -> None:  # noqa: F811 - the fixture
    p = await _started(ctx)
    await p.send(ctx.topic, VALUE, partition=0)
    await second_stop_waits(lambda: p.stop(timeout=STOP_TIMEOUT), ctx.broker.pid)

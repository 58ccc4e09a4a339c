"""ShareConsumer contract clauses that fail on main and wait for their owner's fix (contract-findings.md):
stop() while commit() waits for its ShareAcknowledge answer wakes it with ConsumerStoppedError."""

from __future__ import annotations

from _contract import frozen, stop_wakes
from test_share_contract import Ctx, _commit, _consumer, ckp, ctx, mc  # noqa: F401 - fixtures

from aiokafka_lite.errors import ConsumerStoppedError


async def test_stop_wakes_a_waiting_commit(ctx: Ctx) -> None:  # noqa: F811 - the fixture
    c = await _consumer(ctx, acknowledgement_mode="explicit")
    with frozen(ctx.mc.pid):
        await stop_wakes(lambda: _commit(c), c.stop, ConsumerStoppedError)

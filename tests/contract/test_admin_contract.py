"""The contract of every public async call of ``Admin`` (docs/contract.md), on Tansu and noida-db (the
calls Tansu does not offer -- CreatePartitions, DeleteRecords, IncrementalAlterConfigs -- on noida-db).

Every admin call waits for a broker's answer, so each is made to wait by a broker that stopped
answering. ``Admin`` documents no error of its own for a stopped client: it raises ``IllegalStateError``
(``ClientClosedError``, the class every stopped client's calls raise) during and after ``stop()``.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from _contract import (
    CANCEL_POINTS,
    LIFECYCLE,
    REQUEST_TIMEOUT_MS,
    STOPPERS,
    cancel_at,
    cancel_waiting,
    cancelled_stop_then_stop,
    frozen,
    raises_at_once,
    stop_wakes,
    stopper_after_stop_returns,
    within,
)

from aiokafka_lite import Admin, NewTopic, TopicPartition
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import BrokerResponseError, ClientClosedError, IllegalStateError

_names = itertools.count()


@dataclass
class Ctx:
    broker: EmbeddedBroker
    topic: str

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, 0)

    def fresh(self) -> str:
        return f"{self.topic}-{next(_names)}"


async def _delete_topics(a: Admin, ctx: Ctx) -> Any:
    name = ctx.fresh()
    await a.create_topics([NewTopic(name, num_partitions=1, replication_factor=1)])
    return await a.delete_topics([name])


@dataclass(frozen=True)
class Row:
    name: str
    call: Callable[[Admin, Ctx], Awaitable[Any]]
    brokers: tuple[str, ...] = ("tansu", "noida")

    def __str__(self) -> str:
        return self.name


ROWS = [
    Row("create_topics", lambda a, c: a.create_topics([NewTopic(c.fresh(), num_partitions=1,
                                                                replication_factor=1)])),
    Row("delete_topics", _delete_topics),
    Row("create_partitions", lambda a, c: a.create_partitions({c.topic: 8}), ("noida",)),
    Row("delete_records", lambda a, c: a.delete_records({c.tp: 0}), ("noida",)),
    Row("describe_configs", lambda a, c: a.describe_configs([("topic", c.topic)])),
    Row("incremental_alter_configs",
        lambda a, c: a.incremental_alter_configs({("topic", c.topic): {"retention.ms": "86400000"}}),
        ("noida",)),
    Row("describe_groups", lambda a, c: a.describe_groups([f"{c.topic}-g"])),
    Row("delete_groups", lambda a, c: a.delete_groups([f"{c.topic}-g"])),
    Row("list_consumer_group_offsets", lambda a, c: a.list_consumer_group_offsets(f"{c.topic}-g")),
    Row("list_groups", lambda a, c: a.list_groups()),
    Row("list_offsets", lambda a, c: a.list_offsets({c.tp: "latest"})),
    Row("list_topics", lambda a, c: a.list_topics()),
    Row("describe_topics", lambda a, c: a.describe_topics([c.topic])),
    Row("describe_cluster", lambda a, c: a.describe_cluster()),
]
CASES = [pytest.param(kind, row, id=f"{kind}-{row}") for row in ROWS for kind in row.brokers]
#: The calls this module holds to the contract (tests/contract/test_coverage.py checks none is missing).
COVERED = frozenset(r.name for r in ROWS) | LIFECYCLE


@pytest.fixture
def ctx(request: pytest.FixtureRequest, new_topic: Callable[..., str]) -> Ctx:
    kind = request.node.callspec.params["kind"]
    return Ctx(request.getfixturevalue(kind), new_topic())


async def _started(ctx: Ctx) -> Admin:
    a = Admin(bootstrap_servers=ctx.broker.bootstrap, request_timeout_ms=REQUEST_TIMEOUT_MS)
    await within(a.start(), "start()")
    await within(a.create_topics([NewTopic(ctx.topic, num_partitions=1, replication_factor=1)]),
                 "create_topics")
    return a


async def _usable(a: Admin, ctx: Ctx, row: Row) -> None:
    """The same call gets the broker's answer (an error code is an answer: the client works)."""
    try:
        await within(row.call(a, ctx), f"{row} after the cancel")
    except BrokerResponseError:
        pass
    assert ctx.topic in await within(a.list_topics(), "list_topics")


@pytest.mark.parametrize("point", CANCEL_POINTS)
@pytest.mark.parametrize(("kind", "row"), CASES)
async def test_cancelled_call_leaves_the_admin_usable(ctx: Ctx, kind: str, row: Row, point: str) -> None:
    a = await _started(ctx)
    try:
        await cancel_at(lambda: row.call(a, ctx), point)
        await _usable(a, ctx, row)
    finally:
        await within(a.stop(), "stop()")


@pytest.mark.parametrize(("kind", "row"), CASES)
async def test_call_cancelled_while_waiting_leaves_the_admin_usable(ctx: Ctx, kind: str, row: Row) -> None:
    a = await _started(ctx)
    try:
        with frozen(ctx.broker.pid):
            await cancel_waiting(lambda: row.call(a, ctx))
        await _usable(a, ctx, row)
    finally:
        await within(a.stop(), "stop()")


@pytest.mark.parametrize(("kind", "row"), CASES)
async def test_stop_wakes_a_waiting_call(ctx: Ctx, kind: str, row: Row) -> None:
    a = await _started(ctx)
    with frozen(ctx.broker.pid):
        await stop_wakes(lambda: row.call(a, ctx), a.stop, ClientClosedError)


@pytest.mark.parametrize(("kind", "row"), CASES)
async def test_call_after_stop_raises_at_once(ctx: Ctx, kind: str, row: Row) -> None:
    a = await _started(ctx)
    await within(a.stop(), "stop()")
    await raises_at_once(lambda: row.call(a, ctx), IllegalStateError)


# --- the lifecycle calls ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_stop_wakes_a_start_waiting_for_the_broker(ctx: Ctx, kind: str) -> None:
    a = Admin(bootstrap_servers=ctx.broker.bootstrap, request_timeout_ms=REQUEST_TIMEOUT_MS)
    with frozen(ctx.broker.pid):
        await stop_wakes(a.start, a.stop, ClientClosedError)


@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_cancelled_start_leaves_an_admin_that_starts(ctx: Ctx, kind: str) -> None:
    a = Admin(bootstrap_servers=ctx.broker.bootstrap, request_timeout_ms=REQUEST_TIMEOUT_MS)
    with frozen(ctx.broker.pid):
        await cancel_waiting(a.start)
    await within(a.start(), "start() after a cancelled start()")
    try:
        await within(a.list_topics(), "list_topics")
    finally:
        await within(a.stop(), "stop()")


@pytest.mark.parametrize("point", CANCEL_POINTS)
@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_cancelled_stop_then_stop_again_stops(ctx: Ctx, kind: str, point: str) -> None:
    a = await _started(ctx)
    await cancelled_stop_then_stop(a, point, a.list_topics, IllegalStateError)


@pytest.mark.parametrize("name", STOPPERS)
@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_stop_after_stop_returns_at_once(ctx: Ctx, kind: str, name: str) -> None:
    await stopper_after_stop_returns(await _started(ctx), name)


@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_start_after_stop_starts_again(ctx: Ctx, kind: str) -> None:
    """Admin holds no state worth keeping across a stop (unlike a producer's or a consumer's): as before
    this contract, start() after stop() connects again."""
    a = await _started(ctx)
    await within(a.stop(), "stop()")
    async with a:
        assert ctx.topic in await within(a.list_topics(), "list_topics after a restart")

"""The contract of every public async call of ``Consumer`` (docs/contract.md), on Tansu and noida-db.

Each row names a call, how it is made to wait for real (``empty``: no record to hand out; ``frozen``: the
broker stopped answering; ``None``: the call never waits on the broker), and the documented outcomes.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from _contract import (
    BOUND,
    CANCEL_POINTS,
    LIFECYCLE,
    REQUEST_TIMEOUT_MS,
    STARTERS,
    STOPPERS,
    cancel_at,
    cancel_waiting,
    cancelled_stop_then_stop,
    frozen,
    raises_at_once,
    second_stop_waits,
    starter_after_stop,
    stop_wakes,
    stopper_after_stop_returns,
    within,
)

from aiokafka_lite import Admin, Consumer, NewTopic, Producer, TopicPartition
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import ConsumerStoppedError

C = Consumer[bytes, bytes]


@dataclass
class Ctx:
    broker: EmbeddedBroker
    topic: str
    tp: TopicPartition
    producer: Producer

    async def produce(self) -> None:
        await within(self.producer.send_and_wait(self.topic, b"v", partition=0), "producing a record")


async def _anext(c: C, tp: TopicPartition) -> Any:
    return await c.__anext__()


async def _async_for(c: C, tp: TopicPartition) -> Any:
    async for record in c:
        return record
    return None


@dataclass(frozen=True)
class Row:
    name: str
    call: Callable[[C, TopicPartition], Awaitable[Any]]
    wait: str | None  # "empty" | "frozen" | None
    on_stop: type[BaseException] | None = ConsumerStoppedError
    after_stop: type[BaseException] | None = ConsumerStoppedError

    def __str__(self) -> str:
        return self.name


ROWS = [
    Row("getone", lambda c, tp: c.getone(), "empty"),
    Row("getmany", lambda c, tp: c.getmany(timeout_ms=60_000), "empty"),
    Row("poll", lambda c, tp: c.poll(timeout_ms=60_000), "empty"),
    Row("poll_arrow", lambda c, tp: c.poll_arrow(timeout_ms=60_000), "empty"),
    # __anext__ ends the iteration (StopAsyncIteration) rather than raising ConsumerStoppedError.
    Row("__anext__", _anext, "empty", on_stop=StopAsyncIteration, after_stop=StopAsyncIteration),
    # async for ends (StopAsyncIteration inside the loop) on a stop() during it; begun on a stopped
    # consumer it raises (docs/consumer.md).
    Row("async for", _async_for, "empty", on_stop=None),
    Row("commit", lambda c, tp: c.commit({tp: 1}), "frozen"),
    Row("committed", lambda c, tp: c.committed(tp), "frozen"),
    Row("position", lambda c, tp: c.position(tp), "frozen"),
    Row("beginning_offsets", lambda c, tp: c.beginning_offsets([tp]), "frozen"),
    Row("end_offsets", lambda c, tp: c.end_offsets([tp]), "frozen"),
    Row("offsets_for_times", lambda c, tp: c.offsets_for_times({tp: int(time.time() * 1000) - 60_000}),
        "frozen"),
    Row("seek_to_beginning", lambda c, tp: c.seek_to_beginning(tp), "frozen"),
    Row("seek_to_end", lambda c, tp: c.seek_to_end(tp), "frozen"),
    Row("seek_to_committed", lambda c, tp: c.seek_to_committed(tp), "frozen"),
    Row("topics", lambda c, tp: c.topics(), "frozen"),
    # After assign() it returns at once; a group member's wait is held by the subscribed tests below.
    Row("wait_for_assignment", lambda c, tp: c.wait_for_assignment(), None),
]
WAITING = [r for r in ROWS if r.wait]
#: The calls this module holds to the contract (tests/contract/test_coverage.py checks none is missing).
COVERED = frozenset(r.name for r in ROWS if not r.name.startswith("async ")) | LIFECYCLE


@pytest_asyncio.fixture(loop_scope="function")
async def ctx(broker: EmbeddedBroker, new_topic: Callable[..., str]) -> AsyncIterator[Ctx]:
    topic = new_topic()
    async with Admin(bootstrap_servers=broker.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    producer = Producer(bootstrap_servers=broker.bootstrap, linger_ms=0)
    await producer.start()
    c = Ctx(broker, topic, TopicPartition(topic, 0), producer)
    await c.produce()
    try:
        yield c
    finally:
        await producer.stop()


async def _consumer(ctx: Ctx) -> C:
    """A started consumer reading ``ctx.tp`` from its end (so a poll waits), its position known."""
    c: C = Consumer(bootstrap_servers=ctx.broker.bootstrap, group_id=f"{ctx.topic}-g",
                    auto_offset_reset="latest", request_timeout_ms=REQUEST_TIMEOUT_MS,
                    enable_auto_commit=False)
    await within(c.start(), "start()")
    c.assign([ctx.tp])
    return c


async def _usable(c: C, ctx: Ctx, row: Row | None) -> None:
    """The consumer still works: the same call (when it ends by itself) and a fresh record arrives."""
    if row is not None and row.wait != "empty":
        await within(row.call(c, ctx.tp), f"{row} after the cancel")
    await within(c.seek_to_end(ctx.tp), "seek_to_end")
    await ctx.produce()
    record = await within(c.getone(), "getone() of a new record")
    assert record.value == b"v"


@pytest.mark.parametrize("point", CANCEL_POINTS)
@pytest.mark.parametrize("row", ROWS, ids=str)
async def test_cancelled_call_leaves_the_consumer_usable(ctx: Ctx, row: Row, point: str) -> None:
    c = await _consumer(ctx)
    try:
        await cancel_at(lambda: row.call(c, ctx.tp), point)
        await _usable(c, ctx, row)
    finally:
        await within(c.stop(), "stop()")


@pytest.mark.parametrize("row", WAITING, ids=str)
async def test_call_cancelled_while_waiting_leaves_the_consumer_usable(ctx: Ctx, row: Row) -> None:
    c = await _consumer(ctx)
    try:
        if row.wait == "frozen":
            with frozen(ctx.broker.pid):
                await cancel_waiting(lambda: row.call(c, ctx.tp))
        else:
            await cancel_waiting(lambda: row.call(c, ctx.tp))
        await _usable(c, ctx, row)
    finally:
        await within(c.stop(), "stop()")


@pytest.mark.parametrize("row", WAITING, ids=str)
async def test_stop_wakes_a_waiting_call(ctx: Ctx, row: Row) -> None:
    c = await _consumer(ctx)
    if row.wait == "frozen":
        with frozen(ctx.broker.pid):
            await stop_wakes(lambda: row.call(c, ctx.tp), c.stop, row.on_stop)
    else:
        await stop_wakes(lambda: row.call(c, ctx.tp), c.stop, row.on_stop)


@pytest.mark.parametrize("row", ROWS, ids=str)
async def test_call_after_stop_raises_at_once(ctx: Ctx, row: Row) -> None:
    c = await _consumer(ctx)
    await within(c.stop(), "stop()")
    await raises_at_once(lambda: row.call(c, ctx.tp), row.after_stop)


# --- wait_for_assignment() of a group member: it waits for the group ----------------------------------


async def _member(ctx: Ctx) -> C:
    """A started consumer subscribed to ``ctx.topic`` in a fresh group, not yet joined (no await since
    subscribe(), so the caller can freeze the broker before the join goes out).

    Tansu holds a new member's JoinGroup for half its session timeout (22.5 s with the default 45 s;
    aiokafka's member waits alike, 5 s with its 10 s), so the session is Kafka's minimum, 6 s."""
    c: C = Consumer(bootstrap_servers=ctx.broker.bootstrap, group_id=f"{ctx.topic}-member",
                    auto_offset_reset="latest", request_timeout_ms=REQUEST_TIMEOUT_MS,
                    enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=2000)
    await within(c.start(), "start()")
    c.subscribe([ctx.topic])
    return c


async def test_stop_wakes_a_member_waiting_for_its_assignment(ctx: Ctx) -> None:
    c = await _member(ctx)
    with frozen(ctx.broker.pid):
        await stop_wakes(c.wait_for_assignment, c.stop, ConsumerStoppedError)


async def test_cancelled_wait_for_assignment_leaves_the_member_usable(ctx: Ctx) -> None:
    c = await _member(ctx)
    try:
        with frozen(ctx.broker.pid):
            await cancel_waiting(c.wait_for_assignment)
        assert await within(c.wait_for_assignment(), "wait_for_assignment() after the cancel") == {ctx.tp}
        await _usable(c, ctx, None)
    finally:
        await within(c.stop(), "stop()")


# --- the lifecycle calls: start, stop, close, async with --------------------------------------------


async def test_stop_wakes_a_start_waiting_for_the_broker(ctx: Ctx) -> None:
    c: C = Consumer(bootstrap_servers=ctx.broker.bootstrap, group_id=f"{ctx.topic}-g",
                    request_timeout_ms=REQUEST_TIMEOUT_MS)
    with frozen(ctx.broker.pid):
        await stop_wakes(c.start, c.stop, ConsumerStoppedError)


async def test_cancelled_start_leaves_a_consumer_that_starts(ctx: Ctx) -> None:
    c: C = Consumer(bootstrap_servers=ctx.broker.bootstrap, group_id=f"{ctx.topic}-g",
                    request_timeout_ms=REQUEST_TIMEOUT_MS, auto_offset_reset="latest")
    with frozen(ctx.broker.pid):
        await cancel_waiting(c.start)
    await within(c.start(), "start() after a cancelled start()")
    try:
        c.assign([ctx.tp])
        await _usable(c, ctx, None)
    finally:
        await within(c.stop(), "stop()")


@pytest.mark.parametrize("point", CANCEL_POINTS)
async def test_cancelled_stop_then_stop_again_stops(ctx: Ctx, point: str) -> None:
    c = await _consumer(ctx)
    await cancelled_stop_then_stop(c, point, c.getone, ConsumerStoppedError)


async def test_second_stop_returns_when_stopped(ctx: Ctx) -> None:
    c = await _consumer(ctx)
    await second_stop_waits(c.stop, ctx.broker.pid)


@pytest.mark.parametrize("name", STOPPERS)
async def test_stop_after_stop_returns_at_once(ctx: Ctx, name: str) -> None:
    await stopper_after_stop_returns(await _consumer(ctx), name)


@pytest.mark.parametrize("name", STARTERS)
async def test_start_after_stop_raises(ctx: Ctx, name: str) -> None:
    """A stopped consumer is not restarted: its group membership and fetch state are gone."""
    await starter_after_stop(await _consumer(ctx), name, ConsumerStoppedError)


async def test_stop_bounded_while_the_broker_hangs(ctx: Ctx) -> None:
    c = await _consumer(ctx)
    with frozen(ctx.broker.pid):
        t0 = time.monotonic()
        await within(c.stop(), "stop() with the broker hung")
        assert time.monotonic() - t0 < BOUND

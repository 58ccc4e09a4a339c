"""The contract of every public async call of ``ShareConsumer`` (docs/contract.md), on librdkafka's mock
cluster (Tansu and noida-db have no share groups).

The mock hands out a share-partition's later records only if its log held one when the group first
fetched, and ends every share session when any connection to it closes (see
tests/consumer/test_share_consumer.py): each test writes a record before its consumer starts, through one
confluent-kafka producer kept open. ``poll()`` waits for real once that record is taken; ``commit()``
waits for the answer of a mock that stopped answering (SIGSTOP of its process).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
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
from confluent_kafka import Producer as CKProducer

from aiokafka_lite import ShareConsumer
from aiokafka_lite.errors import ConsumerStoppedError
from aiokafka_lite.testing import MockCluster

S = ShareConsumer[bytes, bytes]


@pytest.fixture(scope="module")
def mc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockCluster]:
    cluster = MockCluster(1, log_dir=tmp_path_factory.mktemp("mockshare-contract"))
    cluster.start()
    try:
        cluster.set_share_groups(heartbeat_interval_ms=200, auto_offset_reset="earliest")
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def ckp(mc: MockCluster) -> Iterator[CKProducer]:
    p = CKProducer({"bootstrap.servers": mc.bootstrap, "linger.ms": 0})
    yield p
    p.flush(10)
    p.close()  # now, not whenever it is collected: its broker stops with this module


@dataclass
class Ctx:
    mc: MockCluster
    producer: CKProducer
    topic: str
    group: str

    async def produce(self, value: bytes = b"v") -> None:
        def run() -> None:
            self.producer.produce(self.topic, value=value, partition=0)
            assert self.producer.flush(10) == 0

        await asyncio.to_thread(run)


@pytest_asyncio.fixture(loop_scope="function")
async def ctx(mc: MockCluster, ckp: CKProducer, new_topic: Callable[..., str]) -> Ctx:
    topic = new_topic()
    mc.create_topic(topic, 1, 1)
    c = Ctx(mc, ckp, topic, f"{topic}-sg")
    await c.produce(b"first")
    return c


async def _consumer(ctx: Ctx, **extra: Any) -> S:
    """A started member that took the topic's first record, so the next poll() waits for real (in
    explicit mode the record stays unacknowledged: ``_commit`` acknowledges it)."""
    c: S = ShareConsumer(ctx.topic, group_id=ctx.group, bootstrap_servers=ctx.mc.bootstrap,
                         request_timeout_ms=REQUEST_TIMEOUT_MS, **extra)
    await within(c.start(), "start()")
    record = await _receive(c)
    assert record.value == b"first"
    _held[id(c)] = record
    return c


_held: dict[int, Any] = {}


async def _receive(c: S) -> Any:
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        for records in (await c.poll(timeout_ms=200)).values():
            return records[0]
    raise AssertionError(f"no record within {BOUND} s")


async def _commit(c: S) -> Any:
    """Acknowledge the held record, then commit(): it waits for the ShareAcknowledge answer."""
    record = _held.pop(id(c), None)
    if record is not None:
        c.acknowledge(record)
    return await c.commit()


async def _usable(c: S, ctx: Ctx) -> None:
    if id(c) in _held and c.config.acknowledgement_mode == "explicit":
        c.acknowledge(_held.pop(id(c)))
    await ctx.produce(b"again")
    record = await within(_receive(c), "a poll() for a new record")
    assert record.value == b"again"


async def _anext(c: S) -> Any:
    return await c.__anext__()


async def _async_for(c: S) -> Any:
    async for record in c:
        return record
    return None


@dataclass(frozen=True)
class Row:
    name: str
    call: Callable[[S], Awaitable[Any]]
    wait: str  # "empty" | "frozen"
    on_stop: type[BaseException] | None = ConsumerStoppedError
    after_stop: type[BaseException] | None = ConsumerStoppedError

    def __str__(self) -> str:
        return self.name


ROWS = [
    Row("poll", lambda c: c.poll(timeout_ms=60_000), "empty"),
    Row("poll_arrow", lambda c: c.poll_arrow(timeout_ms=60_000), "empty"),
    # Iteration ends instead of raising, as Consumer's does.
    Row("__anext__", _anext, "empty", on_stop=StopAsyncIteration, after_stop=StopAsyncIteration),
    Row("async for", _async_for, "empty", on_stop=None, after_stop=None),
    # explicit mode: the first record is acknowledged and not sent yet; commit() sends it (ShareAcknowledge)
    Row("commit", _commit, "frozen"),
]

#: The calls this module holds to the contract (tests/contract/test_coverage.py checks none is missing).
COVERED = frozenset(r.name for r in ROWS if not r.name.startswith("async ")) | LIFECYCLE


def _extra(row: Row) -> dict[str, Any]:
    return {"acknowledgement_mode": "explicit"} if row.name == "commit" else {}


@pytest.mark.parametrize("point", CANCEL_POINTS)
@pytest.mark.parametrize("row", ROWS, ids=str)
async def test_cancelled_call_leaves_the_share_consumer_usable(ctx: Ctx, row: Row, point: str) -> None:
    c = await _consumer(ctx, **_extra(row))
    try:
        await cancel_at(lambda: row.call(c), point)
        await _usable(c, ctx)
    finally:
        await within(c.stop(), "stop()")


@pytest.mark.parametrize("row", ROWS, ids=str)
async def test_call_cancelled_while_waiting_leaves_the_share_consumer_usable(ctx: Ctx, row: Row) -> None:
    c = await _consumer(ctx, **_extra(row))
    try:
        if row.wait == "frozen":
            with frozen(ctx.mc.pid):
                await cancel_waiting(lambda: row.call(c))
        else:
            await cancel_waiting(lambda: row.call(c))
        await _usable(c, ctx)
    finally:
        await within(c.stop(), "stop()")


@pytest.mark.parametrize("row", ROWS, ids=str)
async def test_stop_wakes_a_waiting_call(ctx: Ctx, row: Row) -> None:
    c = await _consumer(ctx, **_extra(row))
    if row.wait == "frozen":
        with frozen(ctx.mc.pid):
            await stop_wakes(lambda: row.call(c), c.stop, row.on_stop)
    else:
        await stop_wakes(lambda: row.call(c), c.stop, row.on_stop)


@pytest.mark.parametrize("row", ROWS, ids=str)
async def test_call_after_stop_raises_at_once(ctx: Ctx, row: Row) -> None:
    c = await _consumer(ctx, **_extra(row))
    await within(c.stop(), "stop()")
    await raises_at_once(lambda: row.call(c), row.after_stop)


# --- the lifecycle calls ------------------------------------------------------------------------------


async def test_stop_wakes_a_start_waiting_for_the_broker(ctx: Ctx) -> None:
    c: S = ShareConsumer(ctx.topic, group_id=ctx.group, bootstrap_servers=ctx.mc.bootstrap,
                         request_timeout_ms=REQUEST_TIMEOUT_MS)
    with frozen(ctx.mc.pid):
        await stop_wakes(c.start, c.stop, ConsumerStoppedError)


async def test_cancelled_start_leaves_a_share_consumer_that_starts(ctx: Ctx) -> None:
    c: S = ShareConsumer(ctx.topic, group_id=ctx.group, bootstrap_servers=ctx.mc.bootstrap,
                         request_timeout_ms=REQUEST_TIMEOUT_MS)
    with frozen(ctx.mc.pid):
        await cancel_waiting(c.start)
    await within(c.start(), "start() after a cancelled start()")
    try:
        assert (await _receive(c)).value == b"first"
    finally:
        await within(c.stop(), "stop()")


@pytest.mark.parametrize("point", CANCEL_POINTS)
async def test_cancelled_stop_then_stop_again_stops(ctx: Ctx, point: str) -> None:
    c = await _consumer(ctx)
    await cancelled_stop_then_stop(c, point, lambda: c.poll(timeout_ms=0), ConsumerStoppedError)


@pytest.mark.parametrize("name", STOPPERS)
async def test_stop_after_stop_returns_at_once(ctx: Ctx, name: str) -> None:
    await stopper_after_stop_returns(await _consumer(ctx), name)


@pytest.mark.parametrize("name", STARTERS)
async def test_start_after_stop_raises(ctx: Ctx, name: str) -> None:
    await starter_after_stop(await _consumer(ctx), name, ConsumerStoppedError)


async def test_second_stop_returns_when_stopped(ctx: Ctx) -> None:
    c = await _consumer(ctx)
    await second_stop_waits(c.stop, ctx.mc.pid)


async def test_stop_bounded_while_the_broker_hangs(ctx: Ctx) -> None:
    c = await _consumer(ctx)
    with frozen(ctx.mc.pid):
        await within(c.stop(), "stop() with the broker hung")

"""The contract of every public async call of ``Producer`` (docs/contract.md): plain calls on Tansu and
noida-db, transactional calls on noida-db (Tansu refuses old InitProducerId versions and does not hide
aborted records).

A call is made to wait for real: ``full`` sends until the buffer is full while the broker does not
answer (send() then waits for memory); ``frozen`` makes the call wait for an answer from a broker that
stopped answering; ``None``: the call never waits on the broker.
"""

from __future__ import annotations

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

from aiokafka_lite import Admin, NewTopic, Producer, TopicPartition
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import IllegalStateError, ProducerClosedError

VALUE = b"x" * 1024
#: stop(timeout=STOP_TIMEOUT): what cannot be delivered by then fails with ProducerClosedError.
STOP_TIMEOUT = 1.0
#: Longer than BOUND: a call that only wakes when stop() gives up fails the clause.
LONG_STOP_TIMEOUT = BOUND + 1


@dataclass
class Ctx:
    broker: EmbeddedBroker
    topic: str
    tp: TopicPartition
    transactional: bool = False

    def producer(self, **extra: Any) -> Producer:
        settings: dict[str, Any] = dict(
            bootstrap_servers=self.broker.bootstrap, request_timeout_ms=REQUEST_TIMEOUT_MS,
            delivery_timeout_ms=60_000, max_block_ms=60_000, linger_ms=0,
            buffer_memory=64 * 1024, batch_size=16 * 1024, retry_backoff_ms=50)
        if self.transactional:
            settings["transactional_id"] = f"{self.topic}-txn"
        settings.update(extra)
        return Producer(**settings)


async def _fill(p: Producer, ctx: Ctx) -> Any:
    """send() until the buffer is full and one send() waits for memory (the broker does not answer)."""
    for _ in range(10_000):
        await p.send(ctx.topic, VALUE, partition=0)
    raise AssertionError("the buffer never filled")


async def _fill_many(p: Producer, ctx: Ctx) -> Any:
    for _ in range(10_000):
        await p.send_many(ctx.topic, [VALUE] * 8, partition=0)
    raise AssertionError("the buffer never filled")


async def _flush(p: Producer, ctx: Ctx) -> Any:
    await p.send(ctx.topic, VALUE, partition=0)
    return await p.flush()


@dataclass(frozen=True)
class Row:
    name: str
    call: Callable[[Producer, Ctx], Awaitable[Any]]
    wait: str | None  # "full" | "frozen" | None
    on_stop: type[BaseException] | None = ProducerClosedError
    after_stop: type[BaseException] | None = ProducerClosedError
    #: After a cancel, this call must succeed (None: the row's own call).
    probe: Callable[[Producer, Ctx], Awaitable[Any]] | None = None
    #: The call made after stop() (None: the row's own call).
    after: Callable[[Producer, Ctx], Awaitable[Any]] | None = None

    def __str__(self) -> str:
        return self.name


def _send_one(p: Producer, ctx: Ctx) -> Awaitable[Any]:
    return p.send_and_wait(ctx.topic, b"probe", partition=0)


ROWS = [
    Row("send", _fill, "full", probe=_send_one),
    Row("send_and_wait", lambda p, ctx: p.send_and_wait(ctx.topic, VALUE, partition=0), "frozen"),
    Row("send_many", _fill_many, "full",
        probe=lambda p, ctx: _await_bulk(p.send_many(ctx.topic, [b"a", b"b"], partition=0))),
    # flush waits for outcomes; the records' futures carry the error, flush itself returns.
    # After stop() flush() raises like every other call.
    Row("flush", _flush, "frozen", on_stop=None, after=lambda p, ctx: p.flush()),
    Row("partitions_for", lambda p, ctx: p.partitions_for(ctx.topic + "-unknown"), "frozen",
        probe=lambda p, ctx: p.partitions_for(ctx.topic)),
]


async def _await_bulk(aw: Awaitable[Any]) -> Any:
    bulk = await aw
    return await bulk


@pytest_asyncio.fixture(loop_scope="function")
async def ctx(broker: EmbeddedBroker, new_topic: Callable[..., str]) -> AsyncIterator[Ctx]:
    topic = new_topic()
    async with Admin(bootstrap_servers=broker.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    yield Ctx(broker, topic, TopicPartition(topic, 0))


async def _started(ctx: Ctx) -> Producer:
    p = ctx.producer()
    await within(p.start(), "start()")
    await within(_send_one(p, ctx), "a first send")  # metadata and connections in place
    return p


async def _usable(p: Producer, ctx: Ctx, row: Row) -> None:
    await within((row.probe or row.call)(p, ctx), f"{row} after the cancel")
    await within(_send_one(p, ctx), "send_and_wait after the cancel")


@pytest.mark.parametrize("point", CANCEL_POINTS)
@pytest.mark.parametrize("row", ROWS, ids=str)
async def test_cancelled_call_leaves_the_producer_usable(ctx: Ctx, row: Row, point: str) -> None:
    p = await _started(ctx)
    try:
        if row.wait == "full":
            with frozen(ctx.broker.pid):
                await cancel_at(lambda: row.call(p, ctx), point)
        else:
            await cancel_at(lambda: row.call(p, ctx), point)
        await _usable(p, ctx, row)
    finally:
        await within(p.stop(), "stop()")


@pytest.mark.parametrize("row", ROWS, ids=str)
async def test_call_cancelled_while_waiting_leaves_the_producer_usable(ctx: Ctx, row: Row) -> None:
    p = await _started(ctx)
    try:
        with frozen(ctx.broker.pid):
            await cancel_waiting(lambda: row.call(p, ctx))
        await _usable(p, ctx, row)
    finally:
        await within(p.stop(), "stop()")


@pytest.mark.parametrize("row", ROWS, ids=str)
async def test_stop_wakes_a_waiting_call(ctx: Ctx, row: Row) -> None:
    """A record handed over waits for its outcome until stop()'s timeout; a send() waiting for memory has
    handed nothing over and wakes at once (the stop timeout here is longer than the bound)."""
    p = await _started(ctx)
    timeout = LONG_STOP_TIMEOUT if row.wait == "full" else STOP_TIMEOUT
    with frozen(ctx.broker.pid):
        await stop_wakes(lambda: row.call(p, ctx), lambda: p.stop(timeout=timeout), row.on_stop,
                         stop_bound=timeout + BOUND)


@pytest.mark.parametrize("row", ROWS, ids=str)
async def test_call_after_stop_raises_at_once(ctx: Ctx, row: Row) -> None:
    p = await _started(ctx)
    await within(p.stop(), "stop()")
    await raises_at_once(lambda: (row.after or row.call)(p, ctx), row.after_stop)


# --- the lifecycle calls: start, stop, close, async with --------------------------------------------


async def test_stop_wakes_a_start_waiting_for_the_broker(ctx: Ctx) -> None:
    p = ctx.producer()
    with frozen(ctx.broker.pid):
        await stop_wakes(p.start, p.stop, ProducerClosedError)


async def test_cancelled_start_leaves_a_producer_that_starts(ctx: Ctx) -> None:
    p = ctx.producer()
    with frozen(ctx.broker.pid):
        await cancel_waiting(p.start)
    await within(p.start(), "start() after a cancelled start()")
    try:
        await within(_send_one(p, ctx), "send_and_wait")
    finally:
        await within(p.stop(), "stop()")


@pytest.mark.parametrize("point", CANCEL_POINTS)
async def test_cancelled_stop_then_stop_again_stops(ctx: Ctx, point: str) -> None:
    p = await _started(ctx)
    await p.send(ctx.topic, VALUE, partition=0)
    await cancelled_stop_then_stop(p, point, lambda: p.send(ctx.topic, VALUE), ProducerClosedError)


async def test_second_stop_returns_when_stopped(ctx: Ctx) -> None:
    """Issue 24, item 5: a second stop() while the first still stops, a record pending, returns only once
    the producer is stopped."""
    p = await _started(ctx)
    await p.send(ctx.topic, VALUE, partition=0)
    await second_stop_waits(lambda: p.stop(timeout=STOP_TIMEOUT), ctx.broker.pid)


@pytest.mark.parametrize("name", STOPPERS)
async def test_stop_after_stop_returns_at_once(ctx: Ctx, name: str) -> None:
    await stopper_after_stop_returns(await _started(ctx), name)


@pytest.mark.parametrize("name", STARTERS)
async def test_start_after_stop_raises(ctx: Ctx, name: str) -> None:
    """A stopped producer is not restarted (as in Java and aiokafka): start() says so."""
    await starter_after_stop(await _started(ctx), name, ProducerClosedError)


async def test_stop_returns_within_its_timeout_while_the_broker_hangs(ctx: Ctx) -> None:
    p = await _started(ctx)
    with frozen(ctx.broker.pid):
        fut = await p.send(ctx.topic, VALUE, partition=0)
        await within(p.stop(timeout=STOP_TIMEOUT), "stop(timeout) with the broker hung")
        assert isinstance(fut.exception(), ProducerClosedError)


# --- transactional calls (noida-db) -------------------------------------------------------------------


@pytest_asyncio.fixture(loop_scope="function")
async def tctx(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> AsyncIterator[Ctx]:
    topic = new_topic()
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    yield Ctx(noida, topic, TopicPartition(topic, 0), transactional=True)


async def _in_txn(p: Producer, ctx: Ctx) -> None:
    """An open transaction that already wrote a record (so commit/abort have work on the broker)."""
    await p.begin_transaction()
    await within(_send_one(p, ctx), "a transactional send")


async def _commit(p: Producer, ctx: Ctx) -> None:
    await p.commit_transaction()


async def _abort(p: Producer, ctx: Ctx) -> None:
    await p.abort_transaction()


async def _send_offsets(p: Producer, ctx: Ctx) -> None:
    await p.send_offsets_to_transaction({ctx.tp: 1}, f"{ctx.topic}-g")


async def _txn_enter(p: Producer, ctx: Ctx) -> None:
    # The open transaction of _in_txn is aborted first, so this one enters a fresh one.
    await p.abort_transaction()
    cm = p.transaction()
    await cm.__aenter__()


async def _txn_exit(p: Producer, ctx: Ctx) -> None:
    await p.abort_transaction()
    cm = p.transaction()
    await cm.__aenter__()
    await p.send(ctx.topic, b"in-cm", partition=0)
    await cm.__aexit__(None, None, None)


TXN_ROWS = [
    Row("commit_transaction", _commit, "frozen"),
    Row("abort_transaction", _abort, "frozen"),
    Row("send_offsets_to_transaction", _send_offsets, "frozen"),
    Row("transaction().__aexit__", _txn_exit, "frozen"),
]


async def _txn_started(ctx: Ctx) -> Producer:
    p = ctx.producer(transaction_timeout_ms=60_000)
    await within(p.start(), "start() of a transactional producer")
    await _in_txn(p, ctx)
    return p


async def _txn_usable(p: Producer, ctx: Ctx) -> None:
    """After the cancel: the transaction can be ended, and a new one commits a record."""
    try:
        await within(p.abort_transaction(), "abort_transaction after the cancel")
    except IllegalStateError:
        pass  # the cancelled call ended the transaction already (or it never began)
    await within(p.begin_transaction(), "begin_transaction")
    await within(_send_one(p, ctx), "send_and_wait")
    await within(p.commit_transaction(), "commit_transaction")


#: transaction().__aenter__ begins a transaction without waiting on a broker: only the cancel clause.
TXN_CANCEL_ROWS = [*TXN_ROWS, Row("transaction().__aenter__", _txn_enter, None)]


@pytest.mark.parametrize("point", CANCEL_POINTS)
@pytest.mark.parametrize("row", TXN_CANCEL_ROWS, ids=str)
async def test_cancelled_transactional_call_leaves_the_producer_usable(tctx: Ctx, row: Row,
                                                                       point: str) -> None:
    p = await _txn_started(tctx)
    try:
        await cancel_at(lambda: row.call(p, tctx), point)
        await _txn_usable(p, tctx)
    finally:
        await within(p.stop(), "stop()")


@pytest.mark.parametrize("row", TXN_ROWS, ids=str)
async def test_transactional_call_cancelled_while_waiting_leaves_the_producer_usable(
        tctx: Ctx, row: Row) -> None:
    p = await _txn_started(tctx)
    try:
        with frozen(tctx.broker.pid):
            await cancel_waiting(lambda: row.call(p, tctx))
        await _txn_usable(p, tctx)
    finally:
        await within(p.stop(), "stop()")


@pytest.mark.parametrize("row", TXN_ROWS, ids=str)
async def test_stop_wakes_a_waiting_transactional_call(tctx: Ctx, row: Row) -> None:
    p = await _txn_started(tctx)
    with frozen(tctx.broker.pid):
        await stop_wakes(lambda: row.call(p, tctx), lambda: p.stop(timeout=STOP_TIMEOUT), row.on_stop)


#: The calls this module holds to the contract (tests/contract/test_coverage.py checks none is missing).
COVERED = (frozenset(r.name for r in ROWS) | {"begin_transaction", "commit_transaction", "abort_transaction",
                                             "send_offsets_to_transaction"} | LIFECYCLE)


TXN_AFTER_STOP = {
    "begin_transaction": lambda p, ctx: p.begin_transaction(),
    "commit_transaction": _commit,
    "abort_transaction": _abort,
    "send_offsets_to_transaction": _send_offsets,
    "transaction().__aenter__": lambda p, ctx: p.transaction().__aenter__(),
}


@pytest.mark.parametrize("name", list(TXN_AFTER_STOP))
async def test_transactional_call_after_stop_raises_at_once(tctx: Ctx, name: str) -> None:
    p = await _txn_started(tctx)
    await within(p.stop(), "stop()")
    await raises_at_once(lambda: TXN_AFTER_STOP[name](p, tctx), ProducerClosedError)


@pytest.mark.parametrize("point", CANCEL_POINTS)
async def test_cancelled_begin_transaction_leaves_the_producer_usable(tctx: Ctx, point: str) -> None:
    p = ctx_p = await _txn_started(tctx)
    try:
        await within(p.abort_transaction(), "abort_transaction")
        await cancel_at(ctx_p.begin_transaction, point)
        await _txn_usable(p, tctx)
    finally:
        await within(p.stop(), "stop()")

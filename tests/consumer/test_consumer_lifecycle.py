"""The consumer's lifecycle contract (issue 25 items 1-3, issue 24 item 3), on real brokers:

* group membership advances in the background: a started consumer that never polls gets its assignment
  and follows rebalances; ``wait_for_assignment`` waits for it (classic on Tansu and noida-db here; KIP-848
  on librdkafka's mock in test_group848.py);
* ``async for`` over a stopped consumer raises ConsumerStoppedError;
* a subscription to a topic that does not exist yet creates it (``allow_auto_create_topics``, default True)
  and reads its first record;
* one assigned partition of a missing topic does not starve the others, and assign() refuses bad names
  and types at once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest
from _consumer_helpers import aproduce, create_topic

from aiokafka_lite import Consumer, Producer
from aiokafka_lite import errors as Errors
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.structs import TopicPartition as TP


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, frozenset[TP]]] = []

    async def on_partitions_revoked(self, revoked: set[TP]) -> None:
        self.events.append(("revoked", frozenset(revoked)))

    async def on_partitions_assigned(self, assigned: set[TP]) -> None:
        self.events.append(("assigned", frozenset(assigned)))


async def _eventually(cond: Callable[[], bool], timeout: float, what: str) -> None:
    """Wait (without polling any consumer) until ``cond()``."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


# -- 1. membership in the background ---------------------------------------------------------------------
# Tansu holds a group's first JoinGroup for half the session timeout: the group tests use 6 s.

async def test_an_idle_member_is_assigned_and_follows_a_rebalance_without_polling(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 4)
    group = f"{topic}-g"
    everything = {TP(topic, p) for p in range(4)}
    settings = {"bootstrap_servers": broker.bootstrap, "group_id": group, "session_timeout_ms": 6000,
                "heartbeat_interval_ms": 500, "auto_offset_reset": "earliest"}
    a = Consumer(topic, **settings)  # type: ignore[arg-type]
    b = Consumer(topic, **settings)  # type: ignore[arg-type]
    try:
        await a.start()
        # Never polled: the membership task joins and installs the assignment by itself.
        await _eventually(lambda: a.assignment() == everything, 20, "a's assignment without poll()")
        assert await a.position(TP(topic, 0)) == 0  # IllegalStateError before: nothing was assigned
        a.seek(TP(topic, 1), 0)
        await a.commit({TP(topic, 2): 0})
        await b.start()
        # Neither polls; the group rebalances and both follow it.
        await _eventually(lambda: len(a.assignment()) == len(b.assignment()) == 2
                          and a.assignment() | b.assignment() == everything, 30, "a rebalance to 2 + 2")
    finally:
        await b.stop()
        await a.stop()


async def test_an_idle_member_leaves_after_max_poll_interval_and_rejoins_at_its_next_poll(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """The background membership is bounded as Java's: without poll() for max_poll_interval_ms the member
    leaves (its partitions go to the live member) and does not rejoin until it polls again."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 4)
    everything = {TP(topic, p) for p in range(4)}
    settings = {"bootstrap_servers": broker.bootstrap, "group_id": f"{topic}-g", "session_timeout_ms": 6000,
                "heartbeat_interval_ms": 300, "auto_offset_reset": "earliest"}
    idle = Consumer(topic, max_poll_interval_ms=12_000, **settings)  # type: ignore[arg-type]
    live = Consumer(topic, **settings)  # type: ignore[arg-type]
    try:
        await idle.start()
        await idle.wait_for_assignment(20)
        await live.start()

        async def live_owns(n: int, what: str) -> None:
            deadline = time.monotonic() + 30
            while len(live.assignment()) != n:
                assert time.monotonic() < deadline, f"timed out waiting for {what}"
                await live.poll(timeout_ms=100)

        await live_owns(2, "the live member's half")
        await live_owns(4, "the idle member to leave after max_poll_interval_ms")
        await asyncio.sleep(1.5)  # past the poll timeout, the idle member stays out
        assert live.assignment() == everything
        await idle.poll(timeout_ms=0)  # polling again: it rejoins
        await live_owns(2, "the idle member back after its poll")
        await idle.wait_for_assignment(20)
        assert len(idle.assignment()) == 2
    finally:
        await live.stop()
        await idle.stop()


async def test_wait_for_assignment_returns_the_assignment_after_the_listener_ran(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 2)
    rec = Recorder()
    async with Consumer(bootstrap_servers=broker.bootstrap, group_id=f"{topic}-g", session_timeout_ms=6000,
                        auto_offset_reset="latest") as consumer:
        with pytest.raises(Errors.IllegalStateError):
            await consumer.wait_for_assignment(1)  # nothing subscribed
        consumer.subscribe([topic], listener=rec, revoke_before_every_join=True)
        got = await consumer.wait_for_assignment(20)
        assert got == {TP(topic, 0), TP(topic, 1)} == consumer.assignment()
        # aiokafka's order: revoked(set()) before the first JoinGroup, then assigned(everything).
        assert rec.events == [("revoked", frozenset()), ("assigned", frozenset(got))]
        # With "latest", a record produced now is read: the positions are the end before it.
        for tp in got:
            assert await consumer.position(tp) == 0
        await aproduce(broker.bootstrap, topic, 1, 1)
        record = await asyncio.wait_for(consumer.getone(), 15)
        assert record.value == b"0"
    assert consumer.closed
    with pytest.raises(Errors.ConsumerStoppedError):
        await consumer.wait_for_assignment(1)


async def test_wait_for_assignment_times_out_and_wakes_on_stop(tansu: EmbeddedBroker,
                                                              new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, tansu.bootstrap, topic, 1)
    # Tansu holds the first JoinGroup for half the session timeout: no assignment within 0.5 s.
    consumer = Consumer(topic, bootstrap_servers=tansu.bootstrap, group_id=f"{topic}-g",
                        session_timeout_ms=10_000)
    await consumer.start()
    try:
        started = time.monotonic()
        with pytest.raises(Errors.KafkaTimeoutError):
            await consumer.wait_for_assignment(0.5)
        assert time.monotonic() - started < 2
        waiter = asyncio.ensure_future(consumer.wait_for_assignment())
        await asyncio.sleep(0.2)
        assert not waiter.done()
        await asyncio.wait_for(consumer.stop(), 15)
        with pytest.raises(Errors.ConsumerStoppedError):
            await asyncio.wait_for(waiter, 5)
    finally:
        await consumer.stop()


async def test_a_listener_error_reaches_the_next_poll_once(broker: EmbeddedBroker,
                                                           new_topic: Callable[..., str]) -> None:
    """The listener runs in the membership task: its exception is raised by the next poll() (or
    wait_for_assignment()), once, and the consumer goes on with the assignment."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 2)
    await aproduce(broker.bootstrap, topic, 6, 2)

    class Failing(Recorder):
        async def on_partitions_assigned(self, assigned: set[TP]) -> None:
            await super().on_partitions_assigned(assigned)
            raise RuntimeError("listener failed")

    rec = Failing()
    async with Consumer(bootstrap_servers=broker.bootstrap, group_id=f"{topic}-g", session_timeout_ms=6000,
                        auto_offset_reset="earliest") as consumer:
        consumer.subscribe([topic], listener=rec)
        await _eventually(lambda: bool(rec.events), 20, "the listener call")
        with pytest.raises(RuntimeError, match="listener failed"):
            await consumer.poll(timeout_ms=0)
        assert await consumer.wait_for_assignment(5) == {TP(topic, 0), TP(topic, 1)}
        values: list[bytes] = []
        deadline = time.monotonic() + 15
        while len(values) < 6 and time.monotonic() < deadline:
            for recs in (await consumer.poll(timeout_ms=200)).values():
                values.extend(r.value for r in recs)
        assert sorted(values) == [b"%d" % i for i in range(6)]
        assert rec.events == [("assigned", frozenset({TP(topic, 0), TP(topic, 1)}))]


# -- 2. stop() and iteration ------------------------------------------------------------------------------

async def test_async_for_over_a_stopped_consumer_raises(broker: EmbeddedBroker) -> None:
    consumer = Consumer(bootstrap_servers=broker.bootstrap)
    await consumer.start()
    await consumer.stop()
    with pytest.raises(Errors.ConsumerStoppedError):
        async for _ in consumer:
            pass


# -- 3. a subscription to a topic that does not exist yet ---------------------------------------------------

async def test_subscribing_creates_a_missing_topic_and_reads_its_first_record(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    async with Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=f"{topic}-g",
                        session_timeout_ms=6000, auto_offset_reset="earliest") as consumer:
        deadline = time.monotonic() + 20
        while not consumer.assignment():  # polling, as any version of this client could
            assert time.monotonic() < deadline, "the subscription did not create the topic"
            assert await consumer.poll(timeout_ms=200) == {}
        async with Producer(bootstrap_servers=broker.bootstrap) as producer:
            await (await producer.send(topic, b"first", partition=0))
        record = await asyncio.wait_for(consumer.getone(), 20)
        assert record.value == b"first"


async def test_without_auto_creation_the_topic_stays_missing(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    async with Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=f"{topic}-g",
                        session_timeout_ms=6000, allow_auto_create_topics=False) as consumer:
        assert await consumer.wait_for_assignment(20) == set()
        assert topic not in await consumer.topics()


def _queued_s() -> float:
    """Seconds this thread has waited for a CPU (Linux schedstat; 0 where there is none): a loaded
    machine's share of a gap between ticks, which no code of ours can shorten."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


async def _tick(gaps: list[tuple[float, float]]) -> None:
    """Every 20 ms: the wall time since the last tick and how much of it this thread waited for a CPU."""
    last, queued = time.monotonic(), _queued_s()
    while True:
        await asyncio.sleep(0.02)
        now, now_queued = time.monotonic(), _queued_s()
        gaps.append((now - last, now_queued - queued))
        last, queued = now, now_queued


# -- 4. one bad partition among good ones; assign() checks its arguments ---------------------------------

async def test_a_missing_topic_in_assign_does_not_starve_the_others(
        broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    good, missing = new_topic(), new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, good, 1)
    await aproduce(broker.bootstrap, good, 10, 1)
    async with Consumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                        request_timeout_ms=2000, allow_auto_create_topics=False) as consumer:
        consumer.assign([TP(missing, 0), TP(good, 0)])
        values: list[bytes] = []
        errors: list[Errors.KafkaError] = []
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not (len(values) == 10 and errors):
            try:
                for recs in (await consumer.poll(timeout_ms=200)).values():
                    values.extend(r.value for r in recs)
            except Errors.KafkaError as exc:
                errors.append(exc)
        assert sorted(values, key=int) == [b"%d" % i for i in range(10)]
        assert len(errors) == 1 and isinstance(errors[0], Errors.KafkaTimeoutError), errors
        assert missing in str(errors[0])
        # Once: later lookups of the missing partition fail in the background without raising again.
        quiet_until = time.monotonic() + 5
        while time.monotonic() < quiet_until:
            assert await consumer.poll(timeout_ms=200) == {}
        gaps: list[tuple[float, float]] = []
        ticks = asyncio.ensure_future(_tick(gaps))
        started = time.monotonic()
        try:
            with pytest.raises(Errors.KafkaTimeoutError):
                await consumer.position(TP(missing, 0))  # within request_timeout_ms
        finally:
            ticks.cancel()
        assert time.monotonic() - started < 4
        # The event loop kept running while position() waited: no gap between ticks was spent in a
        # callback of ours (running or blocked in a call); time the thread waited for a CPU is not ours.
        assert gaps and max(wall - queued for wall, queued in gaps) < 0.5, gaps
        assert await consumer.position(TP(good, 0)) == 10


@pytest.mark.parametrize("bad", [TP("bad topic!", 0), TP(123, 0), TP("ok", -1), TP("ok", "0"), ("ok", 0)])
async def test_assign_refuses_bad_partitions_at_once(tansu: EmbeddedBroker, bad: object) -> None:
    async with Consumer(bootstrap_servers=tansu.bootstrap) as consumer:
        with pytest.raises(Errors.IllegalArgumentError) as info:
            consumer.assign([TP("ok", 0), bad])  # type: ignore[list-item]
        assert isinstance(info.value, ValueError)
        assert consumer.assignment() == set()

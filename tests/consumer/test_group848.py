"""KIP-848 consumer groups (``group_protocol="consumer"``) end to end on librdkafka's mock cluster, which
speaks ConsumerGroupHeartbeat v1 and assigns with its own range assignor (rdkafka_mock_cgrp.c), beside
confluent-kafka members of the same group; and the refusal of brokers without the API (Tansu, noida-db).

What the mock does not do (UNRELEASED_INSTANCE_ID for a second live static member, remote assignors,
GROUP_MAX_SIZE_REACHED) is injected as errors here and covered state by state in test_member848.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _consumer_helpers import aproduce, drain
from confluent_kafka import Consumer as CKConsumer

from aiokafka_lite import errors as Errors
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.structs import TopicPartition as TP
from aiokafka_lite.testing import MockCluster

HEARTBEAT, OFFSET_COMMIT = 68, 8
PARTITIONS = 6


@pytest.fixture(scope="module")
def mc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockCluster]:
    cluster = MockCluster(3, log_dir=tmp_path_factory.mktemp("mock848"))
    cluster.start()
    try:
        cluster.set_consumer_group_timing(heartbeat_interval_ms=300, session_timeout_ms=30000)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def topic(mc: MockCluster, new_topic: Callable[..., str]) -> str:
    name = new_topic()
    mc.create_topic(name, PARTITIONS, 1)
    return name


class Recorder:
    """A rebalance listener that records every call, in order, and may check commits on revocation."""

    def __init__(self) -> None:
        self.events: list[tuple[str, frozenset[TP]]] = []
        self.consumer: Consumer | None = None
        self.committed_at_revoke: dict[TP, tuple[int | None, int]] = {}

    async def on_partitions_revoked(self, revoked: set[TP]) -> None:
        self.events.append(("revoked", frozenset(revoked)))
        if self.consumer is not None:
            for tp in revoked:
                st = self.consumer._subs.state_or_none(tp)
                if st is not None and st.position is not None:
                    self.committed_at_revoke[tp] = (await self.consumer.committed(tp), st.position)

    async def on_partitions_assigned(self, assigned: set[TP]) -> None:
        self.events.append(("assigned", frozenset(assigned)))

    async def on_partitions_lost(self, lost: set[TP]) -> None:
        self.events.append(("lost", frozenset(lost)))


class ConfluentMember(threading.Thread):
    """A librdkafka KIP-848 member polling in its own thread; records what it read and owns."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.conf = {"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                     "auto.offset.reset": "earliest", "enable.auto.commit": True,
                     "auto.commit.interval.ms": 200}
        self.topic = topic
        self.values: list[bytes] = []
        self.assignment: set[TP] = set()
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        c = CKConsumer(self.conf)
        try:
            c.subscribe([self.topic])
            while not self._halt.is_set():
                msg = c.poll(0.05)
                if msg is not None and msg.error() is None:
                    self.values.append(msg.value())
                self.assignment = {TP(t.topic, t.partition) for t in c.assignment()}
        except BaseException as exc:
            self.error = exc
        finally:
            c.close()

    def stop(self) -> None:
        self._halt.set()
        self.join(15)


def ours(mc: MockCluster, group: str, *topics: str, **kw: Any) -> Consumer:
    kw.setdefault("auto_offset_reset", "earliest")
    return Consumer(*topics, bootstrap_servers=mc.bootstrap, group_id=group, group_protocol="consumer", **kw)


async def poll_until(cond: Callable[[], bool], consumers: list[Consumer], timeout: float, what: str,
                     seen: list[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        if not consumers:
            await asyncio.sleep(0.05)
        for c in consumers:
            for recs in (await c.poll(timeout_ms=30)).values():
                if seen is not None:
                    seen.extend(r.value for r in recs)


async def test_mixed_group_reads_everything_once_and_survives_a_leave(mc: MockCluster, topic: str,
                                                                       new_topic: Callable[..., str]) -> None:
    group = new_topic("g")
    a, b = ours(mc, group, topic), ours(mc, group, topic)
    theirs = ConfluentMember(mc.bootstrap, group, topic)
    seen: list[bytes] = []
    try:
        await a.start()
        await b.start()
        theirs.start()

        def everyone_owns() -> bool:
            sets = [a.assignment(), b.assignment(), theirs.assignment]
            return all(sets) and sum(map(len, sets)) == PARTITIONS and len(set().union(*sets)) == PARTITIONS

        await poll_until(everyone_owns, [a, b], 30, "three members sharing the partitions")
        await aproduce(mc.bootstrap, topic, 600, PARTITIONS)
        await poll_until(lambda: len(seen) + len(theirs.values) >= 600, [a, b], 30, "all records", seen)
        await asyncio.sleep(0.3)
        everything = seen + theirs.values
        assert len(everything) == len(set(everything)) == 600
        assert theirs.values and len(seen) > len(theirs.values) // 2

        await a.stop()  # commits, revokes, leaves with epoch -1: b and theirs take its partitions
        await poll_until(lambda: len(b.assignment()) + len(theirs.assignment) == PARTITIONS
                         and not b.assignment() & theirs.assignment, [b], 10, "the leaver's partitions moved")
        before = len(theirs.values)
        more: list[bytes] = []
        await aproduce(mc.bootstrap, topic, 300, PARTITIONS, start=600)
        await poll_until(lambda: len(more) + len(theirs.values) - before >= 300, [b], 30, "records after",
                         more)
        await asyncio.sleep(0.3)
        after = more + theirs.values[before:]
        assert sorted(after) == sorted(b"%d" % i for i in range(600, 900)), "each record once after the leave"
        assert theirs.error is None
    finally:
        theirs.stop()
        await a.stop()
        await b.stop()


async def test_listener_sees_only_incremental_changes_after_committing(
        mc: MockCluster, topic: str, new_topic: Callable[..., str]) -> None:
    group = new_topic("g")
    rec_a, rec_b = Recorder(), Recorder()
    a = ours(mc, group, auto_commit_interval_ms=60000)
    b = ours(mc, group)
    rec_a.consumer = a
    try:
        await a.start()
        a.subscribe([topic], listener=rec_a)
        await poll_until(lambda: len(a.assignment()) == PARTITIONS, [a], 20, "a alone owning everything")
        await aproduce(mc.bootstrap, topic, 120, PARTITIONS)
        await drain([a], 120, 20)
        await b.start()
        b.subscribe([topic], listener=rec_b)
        await poll_until(lambda: len(a.assignment()) == len(b.assignment()) == PARTITIONS // 2, [a, b], 20,
                         "a balanced group")
        everything = frozenset(TP(topic, p) for p in range(PARTITIONS))
        moved = everything - a.assignment()
        # a: everything once, then only the partitions that moved; never a revoke-all and re-assign.
        assert rec_a.events == [("assigned", everything), ("revoked", moved)]
        assert rec_b.events == [("assigned", moved)]
        # With auto-commit on, a committed each revoked partition's position before giving it up.
        assert set(rec_a.committed_at_revoke) == moved
        assert all(committed == position == 20 for committed, position in rec_a.committed_at_revoke.values())
    finally:
        rec_a.consumer = None
        await b.stop()
        await a.stop()


@pytest.mark.parametrize("error", [Errors.FencedMemberEpochError, Errors.UnknownMemberIdError])
async def test_fenced_member_loses_partitions_and_rejoins(mc: MockCluster, topic: str, error: type,
                                                          new_topic: Callable[..., str]) -> None:
    group = new_topic("g")
    rec = Recorder()
    c = ours(mc, group)
    try:
        await c.start()
        c.subscribe([topic], listener=rec)
        await poll_until(lambda: len(c.assignment()) == PARTITIONS, [c], 20, "the assignment")
        await aproduce(mc.bootstrap, topic, 60, PARTITIONS)
        first = await drain([c], 60, 20)
        await c.commit()
        mc.push_request_errors(HEARTBEAT, [error])  # the mock also drops the member (rdkafka_mock_handlers.c)
        everything = frozenset(TP(topic, p) for p in range(PARTITIONS))
        await poll_until(lambda: ("lost", everything) in rec.events and len(c.assignment()) == PARTITIONS,
                         [c], 20, "the loss and the rejoin")
        assert rec.events == [("assigned", everything), ("lost", everything), ("assigned", everything)]
        assert c._coordinator is not None and c._coordinator.protocol.member.epoch > 0
        await aproduce(mc.bootstrap, topic, 60, PARTITIONS, start=60)
        later = await drain([c], 60, 20)  # from the committed offsets: nothing again, nothing missed
        assert set(later) == {b"%d" % i for i in range(60, 120)} and not set(first) & set(later)
        await c.commit()  # the new epoch is accepted
    finally:
        await c.stop()


async def test_coordinator_errors_keep_the_partitions(mc: MockCluster, topic: str,
                                                      new_topic: Callable[..., str]) -> None:
    rec = Recorder()
    c = ours(mc, new_topic("g"))
    try:
        await c.start()
        c.subscribe([topic], listener=rec)
        await poll_until(lambda: len(c.assignment()) == PARTITIONS, [c], 20, "the assignment")
        beats = c._coordinator.metrics.heartbeats if c._coordinator else 0
        mc.push_request_errors(HEARTBEAT, [Errors.NotCoordinatorError, Errors.CoordinatorNotAvailableError,
                                           Errors.CoordinatorLoadInProgressError])
        await poll_until(lambda: c._coordinator is not None and c._coordinator.metrics.heartbeats > beats + 4,
                         [c], 20, "heartbeats past the errors")
        assert len(rec.events) == 1 and len(c.assignment()) == PARTITIONS
    finally:
        await c.stop()


async def test_commit_carries_the_member_epoch_and_retries_a_stale_one(mc: MockCluster, topic: str,
                                                                       new_topic: Callable[..., str]) -> None:
    c = ours(mc, new_topic("g"), enable_auto_commit=False)
    try:
        await c.start()
        c.subscribe([topic])
        await poll_until(lambda: len(c.assignment()) == PARTITIONS, [c], 20, "the assignment")
        await aproduce(mc.bootstrap, topic, 30, PARTITIONS)
        await drain([c], 30, 20)
        # The mock answers STALE_MEMBER_EPOCH to any epoch but the member's (rdkafka_mock_handlers.c).
        await c.commit()
        mc.push_request_errors(OFFSET_COMMIT, [Errors.StaleMemberEpochError])
        await c.commit({TP(topic, 0): 5})
        assert await c.committed(TP(topic, 0)) == 5
    finally:
        await c.stop()


async def test_regex_subscription_picks_up_a_new_topic(mc: MockCluster,
                                                       new_topic: Callable[..., str]) -> None:
    prefix = new_topic("rx")
    first, second = f"{prefix}-a", f"{prefix}-b"
    mc.create_topic(first, 2, 1)
    rec = Recorder()
    c = ours(mc, new_topic("g"), metadata_max_age_ms=500)
    try:
        await c.start()
        c.subscribe(pattern=f"^{prefix}-.*", listener=rec)
        await poll_until(lambda: len(c.assignment()) == 2, [c], 20, "the first topic's partitions")
        mc.create_topic(second, 3, 1)  # the coordinator matches the regex on each heartbeat
        await poll_until(lambda: len(c.assignment()) == 5, [c], 20, "the new topic's partitions")
        assert rec.events == [("assigned", frozenset(TP(first, p) for p in range(2))),
                              ("assigned", frozenset(TP(second, p) for p in range(3)))]
        await aproduce(mc.bootstrap, second, 30, 3)
        assert len(await drain([c], 30, 20)) == 30
    finally:
        await c.stop()


async def test_static_member_rejoins_without_moving_partitions(mc: MockCluster, topic: str,
                                                               new_topic: Callable[..., str]) -> None:
    group = new_topic("g")
    rec_other = Recorder()
    static = ours(mc, group, topic, group_instance_id="static-1")
    other = ours(mc, group)
    try:
        await static.start()
        await other.start()
        other.subscribe([topic], listener=rec_other)
        await poll_until(lambda: len(static.assignment()) == len(other.assignment()) == PARTITIONS // 2,
                         [static, other], 20, "a balanced group")
        kept, events = static.assignment(), list(rec_other.events)
        await static.stop()  # leaves with epoch -2: the coordinator keeps its partitions for it
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            await other.poll(timeout_ms=50)
        assert rec_other.events == events and len(other.assignment()) == PARTITIONS // 2
        static = ours(mc, group, topic, group_instance_id="static-1")  # a new process, a new member id
        await static.start()
        await poll_until(lambda: static.assignment() == kept, [static, other], 20, "the same partitions back")
        assert rec_other.events == events, "the other member saw no rebalance"
    finally:
        await other.stop()
        await static.stop()


@pytest.mark.parametrize("cls", [Errors.UnreleasedInstanceIdError, Errors.GroupMaxSizeReachedError])
async def test_fatal_heartbeat_errors_reach_poll(mc: MockCluster, topic: str, cls: type,
                                                 new_topic: Callable[..., str]) -> None:
    c = ours(mc, new_topic("g"), topic, group_instance_id="i-1")
    try:
        mc.push_request_errors(HEARTBEAT, [cls])
        await c.start()
        with pytest.raises(cls, match="ConsumerGroupHeartbeat"):
            for _ in range(100):
                await c.poll(timeout_ms=100)
    finally:
        await c.stop()


async def test_coordinator_without_the_api_is_refused_at_start(new_topic: Callable[..., str]) -> None:
    other = MockCluster(1)
    other.start()
    try:
        other.set_api_version(HEARTBEAT, -1, -1)
        c = Consumer("t", bootstrap_servers=other.bootstrap, group_id=new_topic("g"),
                     group_protocol="consumer")
        with pytest.raises(Errors.UnsupportedVersionError, match=r"ConsumerGroupHeartbeat.*broker 1 at 127"):
            await c.start()
        await c.stop()
    finally:
        other.stop()


async def test_brokers_without_kip848_are_refused_at_start(broker: Any,
                                                           new_topic: Callable[..., str]) -> None:
    # Tansu 0.6 and noida-db 0.2.3 advertise no ConsumerGroupHeartbeat (docs: brokers.md; checked here).
    c = Consumer("t", bootstrap_servers=broker.bootstrap, group_id=new_topic("g"), group_protocol="consumer")
    with pytest.raises(Errors.UnsupportedVersionError,
                       match=r"coordinator of group .* broker \d+ at 127\.0\.0\.1:\d+, does not offer it"):
        await asyncio.wait_for(c.start(), 30)


@pytest.mark.parametrize("setting", [{"partition_assignment_strategy": ["range"]},
                                     {"session_timeout_ms": 10000}, {"heartbeat_interval_ms": 1000}])
def test_classic_settings_are_refused_with_the_consumer_protocol(setting: dict[str, Any]) -> None:
    with pytest.raises(Errors.ConfigError, match="group_protocol='classic'"):
        Consumer(bootstrap_servers="127.0.0.1:1", group_id="g", group_protocol="consumer", **setting)
    Consumer(bootstrap_servers="127.0.0.1:1", group_id="g", **setting)  # fine with the classic protocol


def test_remote_assignor_needs_the_consumer_protocol() -> None:
    with pytest.raises(Errors.ConfigError, match="group_remote_assignor"):
        Consumer(bootstrap_servers="127.0.0.1:1", group_id="g", group_remote_assignor="uniform")
    Consumer(bootstrap_servers="127.0.0.1:1", group_id="g", group_protocol="consumer",
             group_remote_assignor="range")


async def test_missed_poll_deadline_leaves_then_rejoins(mc: MockCluster, topic: str,
                                                        new_topic: Callable[..., str]) -> None:
    rec = Recorder()
    c = ours(mc, new_topic("g"), max_poll_interval_ms=800)
    try:
        await c.start()
        c.subscribe([topic], listener=rec)
        await poll_until(lambda: len(c.assignment()) == PARTITIONS, [c], 20, "the assignment")
        assert c._coordinator is not None
        epoch = c._coordinator.protocol.member.epoch
        await asyncio.sleep(1.5)  # no poll(): the heartbeat task leaves the group
        everything = frozenset(TP(topic, p) for p in range(PARTITIONS))
        await poll_until(lambda: len(rec.events) == 3 and len(c.assignment()) == PARTITIONS, [c], 20,
                         "the loss and the rejoin")
        assert rec.events == [("assigned", everything), ("lost", everything), ("assigned", everything)]
        assert c._coordinator.protocol.member.epoch > epoch
    finally:
        await c.stop()


async def test_resubscribing_moves_to_the_new_topics(mc: MockCluster, topic: str,
                                                     new_topic: Callable[..., str]) -> None:
    other = new_topic("other")
    mc.create_topic(other, 2, 1)
    rec = Recorder()
    c = ours(mc, new_topic("g"))
    try:
        await c.start()
        c.subscribe([topic], listener=rec)
        await poll_until(lambda: len(c.assignment()) == PARTITIONS, [c], 20, "the first topic")
        c.subscribe([other], listener=rec)
        await poll_until(lambda: c.assignment() == {TP(other, 0), TP(other, 1)}, [c], 20, "the second topic")
        assert rec.events[1:] == [("revoked", frozenset(TP(topic, p) for p in range(PARTITIONS))),
                                  ("assigned", frozenset({TP(other, 0), TP(other, 1)}))]
        c.unsubscribe()
        c.subscribe([topic], listener=rec)
        await poll_until(lambda: len(c.assignment()) == PARTITIONS, [c], 20, "rejoined after unsubscribe")
    finally:
        await c.stop()


async def test_second_live_static_member_neither_takes_over_nor_floods(mc: MockCluster, topic: str,
                                                                       new_topic: Callable[..., str]) -> None:
    # Kafka answers UNRELEASED_INSTANCE_ID here (fatal, see test_member848.py); librdkafka's mock answers
    # UNKNOWN_MEMBER_ID (rdkafka_mock_cgrp.c: "Old member still active, fence this one"), so the duplicate
    # is fenced over and over: it must back off between rejoins and never own anything.
    group = new_topic("g")
    first = ours(mc, group, topic, group_instance_id="dup")
    second = ours(mc, group, topic, group_instance_id="dup", retry_backoff_ms=200)
    try:
        await first.start()
        await poll_until(lambda: len(first.assignment()) == PARTITIONS, [first], 20, "the first member")
        await second.start()
        assert second._coordinator is not None
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            await first.poll(timeout_ms=20)
            await second.poll(timeout_ms=20)
            assert not second.assignment()
        assert len(first.assignment()) == PARTITIONS
        beats = int(second._coordinator.metrics.heartbeats)
        assert beats < 20, f"{beats} heartbeats in 1.5 s"  # ~8 at one rejoin per 200 ms backoff
    finally:
        await second.stop()
        await first.stop()


async def test_heartbeats_follow_the_interval_the_broker_names(mc: MockCluster, topic: str,
                                                               new_topic: Callable[..., str]) -> None:
    c = ours(mc, new_topic("g"), topic)  # the module's mock names 300 ms; our default would be 5 s
    try:
        await c.start()
        await poll_until(lambda: len(c.assignment()) == PARTITIONS, [c], 20, "the assignment")
        assert c._coordinator is not None and c._coordinator.protocol.member.heartbeat_interval_ms == 300
        before = int(c._coordinator.metrics.heartbeats)
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            await c.poll(timeout_ms=50)
        beats = int(c._coordinator.metrics.heartbeats) - before
        assert 3 <= beats <= 8, f"{beats} heartbeats in 1.5 s at a 300 ms interval"
    finally:
        await c.stop()


async def test_a_member_is_assigned_without_polling(mc: MockCluster, topic: str,
                                                    new_topic: Callable[..., str]) -> None:
    """Membership advances in the background (the listener runs there too): no poll() is needed."""
    rec = Recorder()
    async with ours(mc, new_topic("g")) as consumer:
        consumer.subscribe([topic], listener=rec)
        everything = {TP(topic, p) for p in range(PARTITIONS)}
        deadline = time.monotonic() + 20
        while consumer.assignment() != everything:  # not polling
            assert time.monotonic() < deadline, "no assignment without poll()"
            await asyncio.sleep(0.05)
        got = await consumer.wait_for_assignment(20)
        assert got == everything
        assert rec.events == [("assigned", frozenset(got))]
        assert await consumer.position(TP(topic, PARTITIONS - 1)) == 0

"""A group of our consumer and a confluent-kafka (librdkafka) consumer: they must understand each other's
subscriptions and assignments whoever leads, for range, roundrobin and cooperative-sticky, and between
them read every record exactly once."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from _consumer_helpers import aproduce, create_topic
from confluent_kafka import Consumer as CKConsumer

from aiokafka_lite.consumer import Consumer
from aiokafka_lite.structs import TopicPartition as TP

PARTITIONS = 6


class ConfluentMember(threading.Thread):
    """A librdkafka consumer polling in its own thread; records what it read and owns."""

    def __init__(self, bootstrap: str, group: str, topic: str, strategy: str) -> None:
        super().__init__(daemon=True)
        self.conf = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                     "partition.assignment.strategy": strategy, "session.timeout.ms": 6000,
                     "heartbeat.interval.ms": 300, "enable.auto.commit": True}
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


async def _until(cond: Any, ours: Consumer | None, seen: list[bytes], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        if ours is None:
            await asyncio.sleep(0.05)
            continue
        for recs in (await ours.poll(timeout_ms=50)).values():
            seen.extend(r.value for r in recs)


@pytest.mark.parametrize(("strategy", "leader"), [("range", "theirs"), ("roundrobin", "ours"),
                                                  ("cooperative-sticky", "ours"),
                                                  ("cooperative-sticky", "theirs")])
async def test_mixed_group_reads_everything_once(broker: Any, new_topic: Any, strategy: str,
                                                 leader: str) -> None:
    if broker.kind == "noida" and strategy == "cooperative-sticky" and leader == "theirs":
        # noida-db 0.2.3 drops the pending JoinGroup answers of the other members when the leader rejoins
        # right after its SyncGroup, which librdkafka does after a cooperative revocation: two librdkafka
        # consumers alone stall the same way there. (We rejoin retry_backoff_ms later, so our leading
        # member does not trigger it; the same scenario passes on Tansu.)
        pytest.skip("noida-db loses JoinGroup responses when librdkafka leads a cooperative rebalance")
    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, PARTITIONS)
    theirs = ConfluentMember(broker.bootstrap, group, topic, strategy)
    ours = Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=group, auto_offset_reset="earliest",
                    partition_assignment_strategy=strategy, heartbeat_interval_ms=300,
                    session_timeout_ms=6000)
    seen: list[bytes] = []
    try:
        # The first member alone owns everything and leads the group's next rebalance.
        if leader == "theirs":
            theirs.start()
            await _until(lambda: len(theirs.assignment) == PARTITIONS, None, [], 20, "librdkafka alone")
            await ours.start()
        else:
            await ours.start()
            await _until(lambda: len(ours.assignment()) == PARTITIONS, ours, seen, 20, "ours alone")
            theirs.start()

        def balanced() -> bool:
            mine, other = ours.assignment(), theirs.assignment
            return len(mine) == len(other) == PARTITIONS // 2 and not mine & other

        await _until(balanced, ours, seen, 30, "a balanced shared assignment")
        assert theirs.error is None
        await aproduce(broker.bootstrap, topic, 600, PARTITIONS)
        await _until(lambda: len(seen) + len(theirs.values) >= 600, ours, seen, 30, "all records")
        await asyncio.sleep(0.3)  # anything read twice would show up now
        everything = seen + theirs.values
        assert len(everything) == len(set(everything)) == 600
        assert seen and theirs.values, "both members read their share"
        assert balanced(), "no rebalance happened while reading"
    finally:
        theirs.stop()
        await ours.stop()
    assert theirs.error is None


async def _aiokafka_member(bootstrap: str, group: str, topic: str) -> Any:
    """An aiokafka consumer with aiokafka's own defaults (its assignor is roundrobin)."""
    import aiokafka

    c = aiokafka.AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                  auto_offset_reset="earliest", heartbeat_interval_ms=300,
                                  session_timeout_ms=6000, enable_auto_commit=False)
    await c.start()
    return c


@pytest.mark.parametrize("peer", ["aiokafka", "librdkafka"])
async def test_default_assignors_join_a_group_of_peer_defaults(broker: Any, new_topic: Any,
                                                               peer: str) -> None:
    """Our default list shares an assignor with each peer's default: joining a group started by aiokafka
    (roundrobin) or librdkafka (range,roundrobin), each with its own defaults, we get half the partitions.
    (Three members at once are left out: noida-db 0.2.3 then waits out the largest rebalance timeout for
    a member id aiokafka drops after a failed commit.)"""
    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, PARTITIONS)
    aio: Any = None
    theirs: ConfluentMember | None = None
    aio_task: asyncio.Task[None] | None = None
    if peer == "aiokafka":
        aio = await _aiokafka_member(broker.bootstrap, group, topic)

        async def keep_aio_polling() -> None:
            while True:
                await aio.getmany(timeout_ms=50)

        aio_task = asyncio.create_task(keep_aio_polling())
        other = aio.assignment
    else:
        theirs = ConfluentMember(broker.bootstrap, group, topic, "range,roundrobin")
        theirs.start()

        def other() -> set[TP]:
            return theirs.assignment if theirs is not None else set()

    ours = Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=group, auto_offset_reset="earliest",
                    heartbeat_interval_ms=300, session_timeout_ms=6000)
    seen: list[bytes] = []
    try:
        await _until(lambda: len(other()) == PARTITIONS, None, [], 20, f"{peer} alone")
        await ours.start()

        def formed() -> bool:
            mine = ours.assignment()
            return len(mine) == len(other()) == PARTITIONS // 2 and not mine & other()

        await _until(formed, ours, seen, 30, f"a group of {peer} and us sharing every partition")
        assert theirs is None or theirs.error is None
        assert aio_task is None or not aio_task.done()
    finally:
        if aio_task is not None:
            aio_task.cancel()
        if theirs is not None:
            theirs.stop()
        await ours.stop()
        if aio is not None:
            await aio.stop()


async def test_inconsistent_protocols_say_what_we_offered(tansu: Any, new_topic: Any) -> None:
    """A group of aiokafka members (roundrobin) refuses a member that offers only range: the error names
    what we offered, what the group uses, and the setting. (Tansu only: noida-db 0.2.3 does not check that
    members share an assignor.)"""
    broker = tansu
    from aiokafka_lite.errors import InconsistentGroupProtocolError

    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 2)
    aio = await _aiokafka_member(broker.bootstrap, group, topic)
    ours = Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=group, auto_offset_reset="earliest",
                    partition_assignment_strategy="range", heartbeat_interval_ms=300, session_timeout_ms=6000)
    try:
        deadline = time.monotonic() + 20
        while not aio.assignment():
            assert time.monotonic() < deadline, "aiokafka never got its partitions"
            await aio.getmany(timeout_ms=50)
        await ours.start()
        with pytest.raises(InconsistentGroupProtocolError) as info:
            while time.monotonic() < deadline + 10:
                await ours.poll(timeout_ms=100)
        text = str(info.value)
        assert "['range']" in text and "'roundrobin'" in text and "partition_assignment_strategy" in text
        assert text.count("InconsistentGroupProtocolError") <= 1
    finally:
        await ours.stop()
        await aio.stop()

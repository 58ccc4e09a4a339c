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

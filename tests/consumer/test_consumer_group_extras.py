"""Group features beyond the basics, on noida-db (its rebalances take 0.3 s where Tansu's take ~5 s):
max_poll_interval_ms, static membership, pattern subscriptions; and background failures on both brokers,
which must reach poll() instead of leaving it waiting (aiokafka issues 1154 and 983)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from _consumer_helpers import aproduce, create_topic, drain, wait_assigned

from aiokafka_lite import errors
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.structs import TopicPartition as TP

FAST = {"heartbeat_interval_ms": 200, "session_timeout_ms": 6000, "auto_offset_reset": "earliest"}


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, set[TP]]] = []

    async def on_partitions_revoked(self, revoked: set[TP]) -> None:
        self.events.append(("revoked", revoked))

    async def on_partitions_assigned(self, assigned: set[TP]) -> None:
        self.events.append(("assigned", assigned))

    async def on_partitions_lost(self, lost: set[TP]) -> None:
        self.events.append(("lost", lost))


async def test_poll_interval_exceeded_leaves_group(noida: Any, new_topic: Any) -> None:
    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 4)
    slow_events = Recorder()
    fast = Consumer(topic, bootstrap_servers=noida.bootstrap, group_id=group, **FAST)
    slow = Consumer(bootstrap_servers=noida.bootstrap, group_id=group, max_poll_interval_ms=1500, **FAST)
    await fast.start()
    await slow.start()
    slow.subscribe([topic], listener=slow_events)
    try:
        await wait_assigned([fast, slow], [2, 2], 15)
        # The slow member stops calling poll(); the fast one keeps going and soon owns everything.
        deadline = time.monotonic() + 10
        while len(fast.assignment()) < 4:
            assert time.monotonic() < deadline, "the stalled member was not replaced"
            await fast.poll(timeout_ms=100)
        owned_before = {tp for kind, tps in slow_events.events if kind == "assigned" for tp in tps}
        assert owned_before
        # Back in poll(), it learns its partitions are lost (not revoked: it may not commit) and rejoins.
        await wait_assigned([fast, slow], [2, 2], 15)
        kinds = [k for k, _ in slow_events.events]
        assert "lost" in kinds and kinds.index("lost") < len(kinds) - 1
        assert slow.metrics()["rebalance_total"] >= 2
    finally:
        await slow.stop()
        await fast.stop()


async def test_static_member_restart_keeps_partitions(noida: Any, new_topic: Any) -> None:
    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 4)
    other_events = Recorder()
    other = Consumer(bootstrap_servers=noida.bootstrap, group_id=group, group_instance_id="static-b",
                     **FAST)
    await other.start()
    other.subscribe([topic], listener=other_events)
    first = Consumer(topic, bootstrap_servers=noida.bootstrap, group_id=group, group_instance_id="static-a",
                     **FAST)
    await first.start()
    try:
        await wait_assigned([first, other], [2, 2], 15)
        mine = first.assignment()
        marks = len(other_events.events)
        await first.stop()  # a static member does not leave the group on stop
        again = Consumer(topic, bootstrap_servers=noida.bootstrap, group_id=group,
                         group_instance_id="static-a", **FAST)
        await again.start()
        try:
            await wait_assigned([again, other], [2, 2], 15)
            assert again.assignment() == mine
            assert not [e for e in other_events.events[marks:] if e[0] in ("revoked", "lost")]
        finally:
            await again.stop()
    finally:
        await first.stop()
        await other.stop()


async def test_pattern_subscription_picks_up_new_topics(noida: Any, new_topic: Any) -> None:
    prefix = new_topic("pat")
    a, b = f"{prefix}-a", f"{prefix}-b"
    await asyncio.to_thread(create_topic, noida.bootstrap, a, 1)
    async with Consumer(bootstrap_servers=noida.bootstrap, group_id=new_topic("g"), metadata_max_age_ms=500,
                        **FAST) as c:
        c.subscribe(pattern=f"^{prefix}-.*")
        await wait_assigned([c], [1], 15)
        assert c.subscription() == {a}
        await asyncio.to_thread(create_topic, noida.bootstrap, b, 2)
        await aproduce(noida.bootstrap, b, 10, 2)
        seen: dict[bytes, Any] = {}
        await wait_assigned([c], [3], 15, seen)
        assert c.subscription() == {a, b}
        await drain([c], 10, 10, seen)


@pytest.mark.parametrize("grouped", [False, True], ids=["assigned", "group"])
async def test_background_failure_reaches_poll(broker: Any, new_topic: Any, grouped: bool) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 2)
    await aproduce(broker.bootstrap, topic, 20, 2)
    settings: dict[str, Any] = dict(FAST)
    if grouped:
        c = Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=new_topic("g"), **settings)
    else:
        c = Consumer(bootstrap_servers=broker.bootstrap, **settings)
    await c.start()
    try:
        if not grouped:
            c.assign([TP(topic, 0), TP(topic, 1)])
        n = 0
        deadline = time.monotonic() + 20
        while n < 20 and time.monotonic() < deadline:
            n += sum(len(v) for v in (await c.poll(timeout_ms=200)).values())
        assert n == 20
        # The network layer under the consumer dies: the fetcher (and heartbeat) cannot go on.
        await c._client.close()
        started = time.monotonic()
        with pytest.raises(errors.KafkaError):
            for _ in range(100):
                await c.poll(timeout_ms=100)
        assert time.monotonic() - started < 5, "poll() kept waiting after its background task died"
    finally:
        await c.stop()


async def test_unsubscribe_leaves_and_resubscribe_rejoins(noida: Any, new_topic: Any) -> None:
    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 2)
    a = Consumer(topic, bootstrap_servers=noida.bootstrap, group_id=group, **FAST)
    b = Consumer(topic, bootstrap_servers=noida.bootstrap, group_id=group, **FAST)
    await a.start()
    await b.start()
    try:
        await wait_assigned([a, b], [1, 1], 15)
        b.unsubscribe()
        assert b.assignment() == set()
        await wait_assigned([a], [2], 15)
        b.subscribe([topic])
        await wait_assigned([a, b], [1, 1], 15)
    finally:
        await a.stop()
        await b.stop()

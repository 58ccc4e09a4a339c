"""The consumer against real brokers (Tansu and noida-db), with data made by confluent-kafka.

Without a group: max_poll_records, positions, seek, pause/resume, offset resets, Arrow batches.
Groups are slow on Tansu (rebalance on leave ~5 s), so the group tests are few and share their setup.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pyarrow as pa
import pytest
from _consumer_helpers import aproduce, create_topic, drain, wait_assigned

from aiokafka_lite import errors
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.structs import TopicPartition as TP

FAST_GROUP = {"heartbeat_interval_ms": 300, "session_timeout_ms": 6000, "request_timeout_ms": 10000,
              "auto_offset_reset": "earliest"}


async def test_assign_poll_limits_positions_seek_pause(broker: Any, new_topic: Any) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 2)
    await aproduce(broker.bootstrap, topic, 1000, 2, **{"batch.num.messages": 64})
    t0, t1 = TP(topic, 0), TP(topic, 1)
    async with Consumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                        max_poll_records=150) as c:
        c.assign([t0, t1])
        with pytest.raises(errors.IllegalStateError):
            await c.commit()  # no group
        offsets: dict[TP, list[int]] = {t0: [], t1: []}
        deadline = time.monotonic() + 15
        while sum(map(len, offsets.values())) < 1000 and time.monotonic() < deadline:
            batch = await c.poll(timeout_ms=500)
            assert sum(len(v) for v in batch.values()) <= 150
            for tp, recs in batch.items():
                offsets[tp].extend(r.offset for r in recs)
        assert offsets[t0] == list(range(500)) and offsets[t1] == list(range(500))
        assert await c.position(t0) == 500
        assert (await c.beginning_offsets([t0]))[t0] == 0
        if broker.kind == "noida":  # Tansu answers "latest" with the last batch's base offset + 1
            assert await c.end_offsets([t0, t1]) == {t0: 500, t1: 500}
        # seek back, and pause one partition: only the other one flows.
        c.seek(t0, 100)
        c.seek(t1, 490)
        c.pause(t1)
        assert c.paused() == {t1}
        got = await c.poll(timeout_ms=2000, max_records=20)
        assert list(got) == [t0] and [r.offset for r in got[t0]] == list(range(100, 120))
        got = await c.poll(t0, timeout_ms=2000, max_records=1000)
        assert [r.offset for r in got[t0]] == list(range(120, 500))
        assert await c.poll(timeout_ms=200) == {}
        c.resume(t1)
        got = await c.poll(timeout_ms=2000)
        assert [r.offset for r in got[t1]] == list(range(490, 500))
        # getone and async for hand out the same records one by one.
        c.seek(t0, 7)
        r = await c.getone(t0)
        assert (r.partition, r.offset, r.value, r.key) == (0, 7, b"14", b"k14")
        async for r in c:
            if r.partition == 0:
                assert r.offset == 8
                break
        metrics = c.metrics()
        assert metrics["records_consumed_total"] >= 1000 + 410
        assert metrics["fetch_total"] > 0 and metrics["records_lag"][f"{t0.topic}-0"] is not None
        json.dumps(metrics)  # the snapshot is JSON-encodable as it is


async def test_offset_reset_and_none(broker: Any, new_topic: Any) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    await aproduce(broker.bootstrap, topic, 50, 1, **{"batch.num.messages": 1})
    tp = TP(topic, 0)
    # Tansu never answers OFFSET_OUT_OF_RANGE (a fetch past the end just comes back empty), so the
    # out-of-range half runs on noida-db only.
    out_of_range = broker.kind == "noida"
    if out_of_range:
        async with Consumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest") as c:
            c.assign([tp])
            c.seek(tp, 10**9)  # OFFSET_OUT_OF_RANGE: reset to earliest
            got = await c.poll(timeout_ms=5000)
            assert got[tp][0].offset == 0
    async with Consumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="none",
                        group_id=new_topic("g")) as c:
        c.assign([tp])
        with pytest.raises(errors.NoOffsetForPartitionError):
            for _ in range(50):
                await c.poll(timeout_ms=100)
        if out_of_range:
            c.seek(tp, 10**9)
            with pytest.raises(errors.OffsetOutOfRangeError):
                for _ in range(50):
                    await c.poll(timeout_ms=100)
        await c.seek_to_beginning(tp)
        got = await c.poll(timeout_ms=5000)
        assert got[tp][0].offset == 0


async def test_poll_arrow_and_mixing_with_objects(broker: Any, new_topic: Any) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    await aproduce(broker.bootstrap, topic, 600, 1, **{"compression.type": "lz4", "batch.num.messages": 100})
    tp = TP(topic, 0)
    async with Consumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest") as c:
        c.assign([tp])
        first = await c.poll(timeout_ms=5000, max_records=30)
        assert [r.offset for r in first[tp]] == list(range(30))
        batches: list[pa.RecordBatch] = []
        n = 30
        while n < 600:
            got = await c.poll_arrow(timeout_ms=5000, max_records=250)
            assert got, "no Arrow data"
            assert sum(b.num_rows for b in got.values()) <= 250
            batches.extend(got.values())
            n += sum(b.num_rows for b in got.values())
        table = pa.Table.from_batches(batches)
        assert table.column("offset").to_pylist() == list(range(30, 600))
        assert table.column("value").to_pylist() == [b"%d" % i for i in range(30, 600)]
        assert set(table.column("topic").to_pylist()) == {topic}
        assert await c.position(tp) == 600


async def test_group_three_members_share_and_take_over(broker: Any, new_topic: Any) -> None:
    """Three members split six partitions and read each record once; the two left take the third's share.

    The records are produced once all three hold their share: a member that joined alone first would
    otherwise read some, and on noida-db, which ends a generation as soon as a rebalance starts, its
    commit before revoking fails and the next owner reads them again (docs/consumer.md), as it may."""
    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 6)
    members = [Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=group,
                        partition_assignment_strategy="range", **FAST_GROUP) for _ in range(3)]
    for m in members:
        await m.start()
    try:
        seen: dict[bytes, Any] = {}
        await wait_assigned(members, [2, 2, 2], 20, seen)
        assert not seen
        await aproduce(broker.bootstrap, topic, 600, 6)
        await drain(members, 600, 20, seen)
        for m in members:
            await m.commit()
        await members[2].stop()
        await wait_assigned(members[:2], [3, 3], 20)
        assert members[0].metrics()["rebalance_total"] >= 2
    finally:
        for m in members:
            await m.stop()


class Recorder:
    """A rebalance listener that remembers every callback."""

    def __init__(self) -> None:
        self.revoked: list[set[TP]] = []
        self.assigned: list[set[TP]] = []
        self.lost: list[set[TP]] = []

    async def on_partitions_revoked(self, revoked: set[TP]) -> None:
        self.revoked.append(set(revoked))

    async def on_partitions_assigned(self, assigned: set[TP]) -> None:
        self.assigned.append(set(assigned))

    async def on_partitions_lost(self, lost: set[TP]) -> None:
        self.lost.append(set(lost))


async def test_cooperative_sticky_never_revokes_what_stays(broker: Any, new_topic: Any) -> None:
    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 6)
    listeners = [Recorder() for _ in range(3)]
    members = [Consumer(bootstrap_servers=broker.bootstrap, group_id=group,
                        partition_assignment_strategy="cooperative-sticky", **FAST_GROUP) for _ in range(3)]
    try:
        # The first member holds all six alone, then gives three to the second (its revocations so far).
        await members[0].start()
        members[0].subscribe([topic], listener=listeners[0])
        await wait_assigned(members[:1], [6], 20)
        await members[1].start()
        members[1].subscribe([topic], listener=listeners[1])
        await wait_assigned(members[:2], [3, 3], 20)
        before = [m.assignment() for m in members[:2]]
        starts = [len(lis.revoked) for lis in listeners[:2]]
        assert len(set().union(*listeners[0].revoked)) == 3
        # A started member joins in the background (polled or not): the third one comes now.
        await members[2].start()
        members[2].subscribe([topic], listener=listeners[2])
        await wait_assigned(members, [2, 2, 2], 30)
        for m, lis, had, start in zip(members[:2], listeners[:2], before, starts, strict=True):
            kept = had & m.assignment()
            assert len(kept) == 2, "a sticky member keeps 2 of its 3 partitions"
            revoked = set().union(*lis.revoked[start:])
            assert len(revoked) == 1 and not revoked & kept
        assert not any(lis.lost for lis in listeners)
        final = [m.assignment() for m in members[:2]]
        marks = [len(lis.revoked) for lis in listeners[:2]]
        await members[2].stop()
        await wait_assigned(members[:2], [3, 3], 30)
        for m, lis, had, mark in zip(members[:2], listeners[:2], final, marks, strict=True):
            assert had <= m.assignment()
            assert lis.revoked[mark:] == [] or all(not r for r in lis.revoked[mark:])
    finally:
        for m in members:
            await m.stop()


async def test_restart_resumes_from_committed(broker: Any, new_topic: Any) -> None:
    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 2)
    await aproduce(broker.bootstrap, topic, 400, 2)
    t0, t1 = TP(topic, 0), TP(topic, 1)
    settings = dict(FAST_GROUP, enable_auto_commit=False)
    seen: dict[bytes, Any] = {}
    async with Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=group, **settings) as c:
        await drain([c], 150, 20, seen, max_records=50)
        await c.commit()
        committed = {tp: await c.committed(tp) for tp in (t0, t1)}
        assert sum(committed.values()) == 150
        await c.commit({t1: (committed[t1], "explicit")})
    async with Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=group, **settings) as c:
        await drain([c], 400, 20, seen)
        assert await c.committed(t0) == committed[t0]
    # Every record exactly once across the restart (drain fails on a duplicate).
    assert sorted(seen) == sorted(b"%d" % i for i in range(400))


async def test_subscribe_without_group_and_from_config(broker: Any, new_topic: Any) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 3)
    await aproduce(broker.bootstrap, topic, 90, 3)
    c = Consumer.from_config({"bootstrap.servers": broker.bootstrap, "auto.offset.reset": "earliest",
                              "max.poll.records": "40"}, topic)
    async with c:
        seen = await drain([c], 90, 15)
        assert c.assignment() == {TP(topic, p) for p in range(3)}
        assert c.partitions_for_topic(topic) == {0, 1, 2}
        assert topic in await c.topics()
    assert len(seen) == 90
    with pytest.raises(errors.ConfigError, match="max_poll_records"):
        Consumer(bootstrap_servers=broker.bootstrap, max_poll_records=0)
    with pytest.raises(errors.ConfigError, match="partition_assignment_strategy"):
        Consumer(bootstrap_servers=broker.bootstrap, partition_assignment_strategy="fair")
    with pytest.raises(errors.ConfigError, match="group_instance_id"):
        Consumer(bootstrap_servers=broker.bootstrap, group_instance_id="x")
    c = Consumer(bootstrap_servers=broker.bootstrap)
    with pytest.raises(ValueError, match="exactly one"):
        c.subscribe([topic], pattern="x.*")
    with pytest.raises(errors.IllegalStateError, match="not started"):
        await c.poll()


async def test_a_consumer_at_the_end_of_the_log_fetches_at_the_brokers_pace(broker: Any,
                                                                           new_topic: Any) -> None:
    """Caught up, a consumer sends about one fetch per fetch_max_wait_ms on both brokers. Tansu holds an
    empty fetch that long, as Kafka does; noida-db answers it at once (this test shows that the fetcher
    finds early empty answers there), and the consumer waits out the rest itself: asked again at once,
    it sent thousands of fetches a second there. A record produced meanwhile still arrives."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    await aproduce(broker.bootstrap, topic, 10, 1)
    tp = TP(topic, 0)
    async with Consumer(bootstrap_servers=broker.bootstrap, fetch_max_wait_ms=500) as c:
        c.assign([tp])
        c.seek(tp, 10)
        fetcher = c._fetcher
        first = fetcher._metrics.fetch_requests
        start = time.monotonic()
        answered_early = False
        while time.monotonic() - start < 2.0:
            assert not await c.getmany(timeout_ms=100)
            answered_early = answered_early or bool(fetcher._quiet)
        asked = fetcher._metrics.fetch_requests - first
        assert 1 <= asked <= (time.monotonic() - start) / 0.5 + 2, asked
        if broker.kind == "noida":
            assert answered_early
        await aproduce(broker.bootstrap, topic, 1, 1, start=10)
        got = await c.getmany(timeout_ms=5000)
        assert [r.offset for r in got.get(tp, [])] == [10]

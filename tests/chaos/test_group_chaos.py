"""A 3-member consumer group on noida-db under seeded faults: a member restart, coordinator
disruption (connections closed, answers lost), injected Fetch/OffsetCommit/Heartbeat/JoinGroup errors,
while a producer writes a keyed sequence into 6 partitions.

Members commit exactly the offsets they processed after every batch, so the uncommitted window is
exact: a record may be read again only if its offset is at or above the partition's last committed
offset (as known when the read happened); a read below it means a member started from somewhere other
than the committed position, or two members owned a partition at once.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import defaultdict
from typing import Any

from _noida_faults import (
    COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE,
    FETCH,
    HEARTBEAT,
    JOIN_GROUP,
    NOT_COORDINATOR,
    NOT_LEADER_OR_FOLLOWER,
    OFFSET_COMMIT,
    REBALANCE_IN_PROGRESS,
    SYNC_GROUP,
    FaultProxy,
    create_topic,
)

from aiokafka_lite import Producer
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.errors import KafkaError
from aiokafka_lite.structs import TopicPartition as TP

PARTITIONS = 6
KEYS = 12
RECORDS = 900
MAX_POLL_INTERVAL_MS = 6000
SETTINGS: dict[str, Any] = {
    "heartbeat_interval_ms": 200, "session_timeout_ms": 6000, "auto_offset_reset": "earliest",
    "enable_auto_commit": False, "max_poll_interval_ms": MAX_POLL_INTERVAL_MS,
    "request_timeout_ms": 5000, "retry_backoff_ms": 50}



class Ledger:
    """Everything the members did, and the violations seen while they did it."""

    def __init__(self) -> None:
        self.committed: dict[int, int] = defaultdict(int)  # partition -> highest offset committed so far
        self.reads: dict[tuple[int, int], list[tuple[str, bytes]]] = defaultdict(list)
        self.below_commit: list[tuple[str, int, int, int]] = []  # (member, partition, offset, committed)
        self.max_gap: dict[str, float] = defaultdict(float)  # member -> longest time between poll() calls
        self.commit_errors: list[str] = []
        self.first_read: dict[tuple[int, int], float] = {}
        self.events: list[Any] = []


class Listener:
    def __init__(self, name: str, ledger: Ledger, t0: float) -> None:
        self.name, self.ledger, self.t0 = name, ledger, t0

    def _note(self, kind: str, tps: set[TP]) -> None:
        self.ledger.events.append((round(time.monotonic() - self.t0, 2), self.name, kind,
                                   sorted(tp.partition for tp in tps)))

    async def on_partitions_revoked(self, revoked: set[TP]) -> None:
        self._note("revoked", revoked)

    async def on_partitions_assigned(self, assigned: set[TP]) -> None:
        self._note("assigned", assigned)

    async def on_partitions_lost(self, lost: set[TP]) -> None:
        self._note("lost", lost)


async def _member(name: str, consumer: Consumer, ledger: Ledger, stop: asyncio.Event) -> None:
    last = time.monotonic()
    while not stop.is_set():
        now = time.monotonic()  # from one poll() call to the next, commit included
        ledger.max_gap[name] = max(ledger.max_gap[name], now - last)
        last = now
        batch = await consumer.poll(timeout_ms=100, max_records=40)
        now = time.monotonic()
        commit: dict[TP, int] = {}
        for tp, records in batch.items():
            for r in records:
                if r.offset < ledger.committed[tp.partition]:
                    ledger.below_commit.append((name, tp.partition, r.offset, ledger.committed[tp.partition]))
                ledger.reads[(tp.partition, r.offset)].append((name, r.value))
                ledger.first_read.setdefault((tp.partition, r.offset), now)
            commit[tp] = records[-1].offset + 1
        if commit:
            try:
                await consumer.commit(commit)
            except KafkaError as exc:  # the window stays open: these may be read again
                ledger.commit_errors.append(f"{name}: {exc!r}")
            else:
                for tp, off in commit.items():
                    ledger.committed[tp.partition] = max(ledger.committed[tp.partition], off)


FAULTS: list[tuple[str, int, int]] = [
    ("close", 0, 0),
    ("error", FETCH, NOT_LEADER_OR_FOLLOWER),
    ("error", OFFSET_COMMIT, COORDINATOR_NOT_AVAILABLE),
    ("error", OFFSET_COMMIT, NOT_COORDINATOR),
    ("error", OFFSET_COMMIT, REBALANCE_IN_PROGRESS),
    ("error", HEARTBEAT, REBALANCE_IN_PROGRESS),
    ("error", HEARTBEAT, NOT_COORDINATOR),
    ("error", JOIN_GROUP, COORDINATOR_LOAD_IN_PROGRESS),
    ("error", JOIN_GROUP, NOT_COORDINATOR),
    ("drop", OFFSET_COMMIT, 0),
    ("drop", HEARTBEAT, 0),
    ("drop", SYNC_GROUP, 0),
]


async def test_group_survives_faults(noida: Any, new_topic: Any, proxy_seed: int) -> None:
    """On noida-db, through the fault proxy."""
    seed = proxy_seed  # tests/chaos/conftest.py: seeds 0..min(--chaos-seeds, 4)-1
    rng = random.Random(seed)
    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, PARTITIONS)
    async with FaultProxy(noida.bootstrap) as proxy:
        proxy.trace = {JOIN_GROUP, SYNC_GROUP, 13}

        async def make_consumer(name: str) -> Consumer:
            c = Consumer(bootstrap_servers=proxy.bootstrap, group_id=group, client_id=name, **SETTINGS)
            await c.start()
            return c

        async def fault() -> None:
            kind, api, code = FAULTS[rng.randrange(len(FAULTS))]
            if kind == "close":
                proxy.close_all()
            elif kind == "error":
                proxy.inject(api, code, rng.randint(1, 3))
            else:
                proxy.drop(api)

        producer = Producer(bootstrap_servers=noida.bootstrap, linger_ms=5)
        run = await _scenario(rng, topic, make_consumer, producer, fault, proxy.clear)
    # noida-db 0.2.3: when a member's JoinGroup is parked and its connection closes, the member's next
    # JoinGroup is not the one answered (the dead connection's is), and the rebalance after that waits
    # out rebalance_timeout_ms (= max_poll_interval_ms) for it. So a partition may sit unowned that long.
    _check(run, seed, MAX_POLL_INTERVAL_MS / 1000 + 3, f"faults {proxy.log}; group requests {proxy.traced}")


class Run:
    def __init__(self) -> None:
        self.ledger = Ledger()
        self.acked: dict[tuple[int, int], bytes] = {}
        self.sent: dict[tuple[int, int], float] = {}
        self.t0 = time.monotonic()


async def _scenario(rng: random.Random, topic: str, make_consumer: Any, producer: Producer, fault: Any,
                    clear: Any) -> Run:
    """3 members consume while ``producer`` writes RECORDS keyed records; ``fault()`` every 20-80
    records, one member restarted (stop, and a new one under the same name) somewhere in the middle."""
    run = Run()
    ledger = run.ledger
    stop = asyncio.Event()
    members: dict[str, tuple[Consumer, asyncio.Task[None]]] = {}

    async def start_member(name: str) -> None:
        c = await make_consumer(name)
        c.subscribe([topic], listener=Listener(name, ledger, run.t0))
        members[name] = (c, asyncio.create_task(_member(name, c, ledger, stop)))

    for i in range(3):
        await start_member(f"m{i}")
    async with producer:
        restart_at = rng.randrange(RECORDS // 4, 3 * RECORDS // 4)
        next_fault = rng.randrange(20, 80)
        futures = []
        for seq in range(RECORDS):
            key = b"k%d" % (seq % KEYS)
            value = key + b":%d" % seq
            futures.append((await producer.send(topic, value, key=key), value, time.monotonic()))
            if seq % 30 == 29:
                await producer.flush()
                await asyncio.sleep(0.1)
            if seq == next_fault:
                await fault()
                next_fault += rng.randrange(20, 80)
            if seq == restart_at:  # a member restart: leaves, a new one with the same name joins
                name = f"m{rng.randrange(3)}"
                # A clean leave: no fault pending, the member in a generation (so it knows its
                # coordinator and sends LeaveGroup). Without one, noida-db 0.2.3 keeps the departed
                # member past its session and names it leader of every later generation: the group
                # never gets an assignment again (the rebalance is retried each rebalance_timeout_ms).
                clear()
                for _ in range(200):
                    if members[name][0].assignment():
                        break
                    await asyncio.sleep(0.05)
                ledger.events.append((round(time.monotonic() - run.t0, 2), "restart", name))
                c, task = members.pop(name)
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                await c.stop()
                await start_member(name)
        await producer.flush()
        for f, value, sent_at in futures:
            md = f.result()
            run.acked[(md.partition, md.offset)] = value
            run.sent[(md.partition, md.offset)] = sent_at
    clear()
    deadline = time.monotonic() + 30
    while not set(run.acked) <= set(ledger.reads) and time.monotonic() < deadline:
        for _, task in members.values():
            if task.done():
                task.result()  # a member's poll() or commit() raised something unexpected
        await asyncio.sleep(0.1)
    stop.set()
    for c, task in members.values():
        await asyncio.gather(task, return_exceptions=True)
        await c.stop()
    for _, task in members.values():
        task.result()
    return run


def _check(run: Run, seed: int, read_bound: float, context: str) -> None:
    ledger, acked, sent = run.ledger, run.acked, run.sent
    missing = sorted(set(acked) - set(ledger.reads))
    assert not missing, (f"seed {seed}: {len(missing)} acknowledged records never consumed, "
                         f"e.g. {missing[:5]}; events {ledger.events}; {context}")
    wrong = [(po, acked.get(po), got) for po, got in ledger.reads.items()
             if any(v != acked.get(po) for _, v in got)]
    assert not wrong, f"seed {seed}: records read with a value that was not written there: {wrong[:3]}"
    assert not ledger.below_commit, (
        f"seed {seed}: records read again below the committed offset (member, partition, offset, committed): "
        f"{ledger.below_commit[:5]}; {context}")
    gaps = {n: round(g, 2) for n, g in ledger.max_gap.items()}
    assert max(gaps.values()) < MAX_POLL_INTERVAL_MS / 1000, f"seed {seed}: a member stalled: {gaps}"
    # No partition left unread long either: each record is read within read_bound of its send.
    late, po = max((ledger.first_read[po] - sent[po], po) for po in acked)
    assert late < read_bound, (
        f"seed {seed}: record {po} sent at {sent[po] - run.t0:.2f}s waited {late:.1f}s to be read; "
        f"events {ledger.events}; {context}")
    dups = sum(1 for reads in ledger.reads.values() if len(reads) > 1)
    print(f"seed {seed}: {len(acked)} records, {dups} read more than once, "
          f"commit errors {len(ledger.commit_errors)} {ledger.commit_errors[:2]}, longest poll gap {gaps}, "
          f"longest send-to-read {late:.2f}s")

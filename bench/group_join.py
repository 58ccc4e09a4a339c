"""How fast a group of 3 settles when its third member joins: classic vs consumer (KIP-848) protocol,
aiokafka_lite vs confluent-kafka, in one run.

Two members read a 6-partition topic while a producer thread writes a record to every partition every
20 ms; then the third member starts. The time measured runs from that start to the moment the three own
disjoint partitions covering the topic, each owns at least one, and each has received a record from its
own partitions since the start (so "fetching", not merely "assigned"). Median of ``--rounds`` rounds,
each with a fresh group.

Brokers: KIP-848 groups run on librdkafka's mock cluster, the only broker here with
ConsumerGroupHeartbeat (heartbeat interval set to 300 ms there); classic groups run on noida-db, since
the mock fails a classic group of more than one member (docs: shared/brokers.md) and Tansu delays a
rebalance by seconds. Both clients use a 300 ms heartbeat interval and a 6 s session timeout in classic
groups, and their default assignors (eager range for both). So the protocol ratio compares two brokers as
well as two protocols; the client ratios compare like with like.

The last line printed is one JSON object: every median (seconds) and the ratios
``*_confluent_vs_ours`` (confluent-kafka's time over ours: above 1 means ours settles faster) and
``*_classic_vs_consumer`` (classic time over KIP-848 time, per client).

    python bench/group_join.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer as CKConsumer
from confluent_kafka import Producer

from aiokafka_lite.admin import Admin, NewTopic
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.testing import MockCluster

PARTITIONS = 6
TIMEOUT = 60.0


class Feeder(threading.Thread):
    """Writes one record to every partition every 20 ms until stopped (bounded by TIMEOUT)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1})
        self.topic = topic
        self.halt = threading.Event()

    def run(self) -> None:
        end = time.monotonic() + 4 * TIMEOUT
        while not self.halt.is_set() and time.monotonic() < end:
            for p in range(PARTITIONS):
                self.producer.produce(self.topic, b"x", partition=p)
            self.producer.poll(0)
            self.halt.wait(0.02)
        self.producer.flush(5)


class Watch:
    """What each member owns and when it last received a record from a partition it owns."""

    def __init__(self, n: int) -> None:
        self.owned: list[set[int]] = [set() for _ in range(n)]
        self.got_since: list[float] = [0.0] * n
        self.lock = threading.Lock()

    def saw(self, i: int, partition: int) -> None:
        with self.lock:
            if partition in self.owned[i]:
                self.got_since[i] = time.monotonic()

    def settled(self, t0: float) -> bool:
        with self.lock:
            sets = self.owned
            union = set().union(*sets)
            return (all(sets) and len(union) == PARTITIONS and sum(map(len, sets)) == PARTITIONS
                    and all(t >= t0 for t in self.got_since))


async def ours_round(bootstrap: str, topic: str, group: str, protocol: str) -> float:
    kw: dict[str, Any] = {"bootstrap_servers": bootstrap, "group_id": group, "auto_offset_reset": "latest",
                          "group_protocol": protocol}
    if protocol == "classic":
        kw.update(heartbeat_interval_ms=300, session_timeout_ms=6000)
    members = [Consumer(topic, **kw) for _ in range(3)]
    watch = Watch(3)
    stop = asyncio.Event()
    t0 = float("inf")

    async def run(i: int) -> None:
        c = members[i]
        while not stop.is_set():
            for tp, recs in (await c.poll(timeout_ms=10)).items():
                watch.owned[i] = {t.partition for t in c.assignment()}
                if recs:
                    watch.saw(i, tp.partition)
            watch.owned[i] = {t.partition for t in c.assignment()}

    tasks: list[asyncio.Task[None]] = []
    try:
        for i in (0, 1):
            await members[i].start()
            tasks.append(asyncio.create_task(run(i)))
        await _wait(lambda: len(watch.owned[0]) + len(watch.owned[1]) == PARTITIONS
                    and bool(watch.owned[0]) and bool(watch.owned[1]), "two members settled")
        t0 = time.monotonic()
        await members[2].start()
        tasks.append(asyncio.create_task(run(2)))
        await _wait(lambda: watch.settled(t0), "three members fetching")
        return time.monotonic() - t0
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for c in members:
            await c.stop()


class CKMember(threading.Thread):
    def __init__(self, i: int, conf: dict[str, Any], topic: str, watch: Watch) -> None:
        super().__init__(daemon=True)
        self.i, self.conf, self.topic, self.watch = i, conf, topic, watch
        self.halt = threading.Event()

    def run(self) -> None:
        c = CKConsumer(self.conf)
        try:
            c.subscribe([self.topic])
            end = time.monotonic() + 4 * TIMEOUT
            while not self.halt.is_set() and time.monotonic() < end:
                msg = c.poll(0.01)
                self.watch.owned[self.i] = {t.partition for t in c.assignment()}
                if msg is not None and msg.error() is None:
                    self.watch.saw(self.i, msg.partition())
        finally:
            c.close()


async def confluent_round(bootstrap: str, topic: str, group: str, protocol: str) -> float:
    conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "latest",
                            "group.protocol": protocol}
    if protocol == "classic":
        conf.update({"heartbeat.interval.ms": 300, "session.timeout.ms": 6000})
    watch = Watch(3)
    members = [CKMember(i, conf, topic, watch) for i in range(3)]
    try:
        members[0].start()
        members[1].start()
        await _wait(lambda: len(watch.owned[0]) + len(watch.owned[1]) == PARTITIONS
                    and bool(watch.owned[0]) and bool(watch.owned[1]), "two members settled")
        t0 = time.monotonic()
        members[2].start()
        await _wait(lambda: watch.settled(t0), "three members fetching")
        return time.monotonic() - t0
    finally:
        for m in members:
            m.halt.set()
        for m in members:
            if m.is_alive():
                await asyncio.to_thread(m.join, 15)


async def _wait(cond: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


async def measure(bootstrap: str, topic: str, protocol: str, rounds: int) -> dict[str, float]:
    out: dict[str, list[float]] = {"ours": [], "confluent": []}
    for r in range(rounds):
        for name, fn in (("ours", ours_round), ("confluent", confluent_round)):
            out[name].append(await fn(bootstrap, topic, f"bench-{protocol}-{name}-{r}-{time.time_ns()}",
                                      protocol))
    return {k: statistics.median(v) for k, v in out.items()}


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    topic = "group-join"

    mc = MockCluster(3)
    mc.start()
    try:
        mc.set_consumer_group_timing(heartbeat_interval_ms=300, session_timeout_ms=6000)
        mc.create_topic(topic, PARTITIONS, 1)
        feeder = Feeder(mc.bootstrap, topic)
        feeder.start()
        try:
            consumer = await measure(mc.bootstrap, topic, "consumer", args.rounds)
        finally:
            feeder.halt.set()
            feeder.join(10)
    finally:
        mc.stop()

    with tempfile.TemporaryDirectory() as tmp:
        broker = EmbeddedBroker("noida", data_dir=tmp)
        broker.start()
        try:
            async with Admin(bootstrap_servers=broker.bootstrap) as admin:
                await admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
            feeder = Feeder(broker.bootstrap, topic)
            feeder.start()
            try:
                classic = await measure(broker.bootstrap, topic, "classic", args.rounds)
            finally:
                feeder.halt.set()
                feeder.join(10)
        finally:
            broker.stop()

    result = {
        "consumer_ours_s": round(consumer["ours"], 3),
        "consumer_confluent_s": round(consumer["confluent"], 3),
        "classic_ours_s": round(classic["ours"], 3),
        "classic_confluent_s": round(classic["confluent"], 3),
        "consumer_confluent_vs_ours": round(consumer["confluent"] / consumer["ours"], 2),
        "classic_confluent_vs_ours": round(classic["confluent"] / classic["ours"], 2),
        "ours_classic_vs_consumer": round(classic["ours"] / consumer["ours"], 2),
        "confluent_classic_vs_consumer": round(classic["confluent"] / consumer["confluent"], 2),
        "rounds": args.rounds,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())

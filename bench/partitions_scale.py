"""Memory and CPU per partition: a producer that sent one record to each of N partitions, a consumer assigned
all N, measured up to 10,000 partitions (issue 14, item 4), ours beside confluent-kafka and aiokafka.

Each client runs in its own process against one Tansu (aiokafka_lite.embedded); per N it reports the RSS
above the same client idle (started, one record sent to a one-partition topic), the CPU the client spends
over ``--idle-seconds`` with all N partitions idle (the consumer keeps fetching them, as it must), and for
ours the number of asyncio tasks and timers (none may be per partition). Target: RSS of each <= 100 MB above
an idle client at 10,000 partitions. The last line is one JSON object.

    python bench/partitions_scale.py [--partitions 1000 10000] [--idle-seconds 5] [--clients ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from typing import Any

CLIENTS = ("aiokafka_lite", "confluent", "aiokafka")


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def _ours(args: argparse.Namespace) -> dict[str, Any]:
    from aiokafka_lite import Consumer, Producer, TopicPartition

    n = args.n
    out: dict[str, Any] = {}
    async with Producer(bootstrap_servers=args.bootstrap, linger_ms=5) as p:
        await p.send_and_wait(args.small, b"x")
        idle = _rss_mb()
        futs = [await p.send(args.topic, b"x", partition=i) for i in range(n)]
        for f in futs:
            await f
        out["producer_rss_above_idle_mb"] = round(_rss_mb() - idle, 1)
        loop = asyncio.get_running_loop()
        out["producer_tasks"] = len(asyncio.all_tasks())
        out["producer_timers"] = len(getattr(loop, "_scheduled", ()))
    async with Consumer(bootstrap_servers=args.bootstrap, auto_offset_reset="earliest") as c:
        c.assign([TopicPartition(args.small, 0)])
        await c.getone()
        idle = _rss_mb()
        c.assign([TopicPartition(args.topic, i) for i in range(n)])
        await c.seek_to_beginning()
        got = 0
        while got < n:
            got += sum(len(rs) for rs in (await c.poll(timeout_ms=1000, max_records=100_000)).values())
        out["consumer_rss_above_idle_mb"] = round(_rss_mb() - idle, 1)
        c0, t0 = _cpu(), time.monotonic()
        while time.monotonic() - t0 < args.idle_seconds:
            await c.poll(timeout_ms=500)
        out["consumer_idle_cpu_pct"] = round(100 * (_cpu() - c0) / (time.monotonic() - t0), 1)
        loop = asyncio.get_running_loop()
        out["consumer_tasks"] = len(asyncio.all_tasks())
        out["consumer_timers"] = len(getattr(loop, "_scheduled", ()))
    return out


async def _aiokafka(args: argparse.Namespace) -> dict[str, Any]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    n = args.n
    out: dict[str, Any] = {}
    p = AIOKafkaProducer(bootstrap_servers=args.bootstrap, linger_ms=5)
    await p.start()
    try:
        await p.send_and_wait(args.small, b"x")
        idle = _rss_mb()
        futs = [await p.send(args.topic, b"x", partition=i) for i in range(n)]
        for f in futs:
            await f
        out["producer_rss_above_idle_mb"] = round(_rss_mb() - idle, 1)
    finally:
        await p.stop()
    c = AIOKafkaConsumer(bootstrap_servers=args.bootstrap, auto_offset_reset="earliest")
    await c.start()
    try:
        c.assign([TopicPartition(args.small, 0)])
        await c.getone()
        idle = _rss_mb()
        c.assign([TopicPartition(args.topic, i) for i in range(n)])
        await c.seek_to_beginning()
        got = 0
        while got < n:
            got += sum(len(rs) for rs in (await c.getmany(timeout_ms=1000, max_records=100_000)).values())
        out["consumer_rss_above_idle_mb"] = round(_rss_mb() - idle, 1)
        c0, t0 = _cpu(), time.monotonic()
        while time.monotonic() - t0 < args.idle_seconds:
            await c.getmany(timeout_ms=500)
        out["consumer_idle_cpu_pct"] = round(100 * (_cpu() - c0) / (time.monotonic() - t0), 1)
    finally:
        await c.stop()
    return out


def _confluent(args: argparse.Namespace) -> dict[str, Any]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    n = args.n
    out: dict[str, Any] = {}
    p = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 5})
    p.produce(args.small, b"x")
    p.flush(30)
    idle = _rss_mb()
    for i in range(n):
        p.produce(args.topic, b"x", partition=i)
        p.poll(0)
    p.flush(60)
    out["producer_rss_above_idle_mb"] = round(_rss_mb() - idle, 1)
    del p
    c = Consumer({"bootstrap.servers": args.bootstrap, "group.id": "scale-bench",
                  "enable.auto.commit": False})
    c.assign([TopicPartition(args.small, 0, OFFSET_BEGINNING)])
    while c.poll(1.0) is None:
        pass
    idle = _rss_mb()
    c.assign([TopicPartition(args.topic, i, OFFSET_BEGINNING) for i in range(n)])
    got = 0
    while got < n:
        got += sum(1 for m in c.consume(100_000, 1.0) if m.error() is None)
    out["consumer_rss_above_idle_mb"] = round(_rss_mb() - idle, 1)
    c0, t0 = _cpu(), time.monotonic()
    while time.monotonic() - t0 < args.idle_seconds:
        c.consume(1000, 0.5)
    out["consumer_idle_cpu_pct"] = round(100 * (_cpu() - c0) / (time.monotonic() - t0), 1)
    c.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--partitions", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--idle-seconds", type=float, default=5.0)
    ap.add_argument("--clients", nargs="+", default=list(CLIENTS), choices=CLIENTS)
    ap.add_argument("--client", help=argparse.SUPPRESS)
    ap.add_argument("--bootstrap", help=argparse.SUPPRESS)
    ap.add_argument("--topic", help=argparse.SUPPRESS)
    ap.add_argument("--small", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        if args.client == "confluent":
            result = _confluent(args)
        else:
            result = asyncio.run(_ours(args) if args.client == "aiokafka_lite" else _aiokafka(args))
        print(json.dumps(result), flush=True)
        return 0

    import aiokafka_lite
    from aiokafka_lite.embedded import start_broker

    broker = start_broker("tansu")
    results: dict[str, Any] = {}
    try:
        for n in args.partitions:
            for client in args.clients:
                topic, small = f"wide-{client}-{n}-{time.time_ns()}", f"one-{client}-{n}-{time.time_ns()}"

                async def create(topic: str = topic, small: str = small, n: int = n) -> None:
                    async with aiokafka_lite.Admin(bootstrap_servers=broker.bootstrap) as admin:
                        await admin.create_topics([aiokafka_lite.NewTopic(topic, n, 1),
                                                   aiokafka_lite.NewTopic(small, 1, 1)])

                asyncio.run(create())
                proc = subprocess.run(
                    [sys.executable, __file__, "--client", client, "--bootstrap", broker.bootstrap, "--topic",
                     topic, "--small", small, "--n", str(n), "--idle-seconds", str(args.idle_seconds)],
                    capture_output=True, text=True, timeout=600)
                if proc.returncode != 0:
                    print(proc.stderr[-3000:], file=sys.stderr)
                    results[f"{client}@{n}"] = {"error": proc.stderr.strip().splitlines()[-1:]}
                    continue
                results[f"{client}@{n}"] = json.loads(proc.stdout.strip().splitlines()[-1])
                print(client, n, results[f"{client}@{n}"], file=sys.stderr)
    finally:
        broker.stop()
    top = max(args.partitions)
    ours = results.get(f"aiokafka_lite@{top}", {})
    results["target_rss_le_100mb_at_max"] = (ours.get("producer_rss_above_idle_mb", 1e9) <= 100
                                             and ours.get("consumer_rss_above_idle_mb", 1e9) <= 100)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

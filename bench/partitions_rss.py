"""Memory per partition: the RSS of a producer that sent one record to each of N partitions, and of a
consumer assigned all N, for aiokafka_lite, confluent-kafka and aiokafka.

A fresh Tansu (memory storage) gets one topic of ``--partitions`` partitions (default 10,000). Each
client runs in a process of its own: the producer sends one 100 B record to every partition and
flushes; the consumer assigns every partition from the beginning and reads until it has N records.
Reported per run: the process's RSS at the end (/proc/self/statm) and its peak (``ru_maxrss``), and
the same minus a bare process that imported the client (``delta``), per partition in bytes.

The last line printed is one JSON object with every run and the ratios (ours / theirs, RSS delta:
below 1 is leaner).

    python bench/partitions_rss.py [--partitions 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
CLIENTS = ("aiokafka_lite", "confluent", "aiokafka")


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _ours(a: argparse.Namespace) -> None:
    from aiokafka_lite import Consumer, Producer, TopicPartition

    if a.mode == "produce":
        async with Producer(bootstrap_servers=a.bootstrap, linger_ms=5) as p:
            for i in range(a.n):
                await p.send(a.topic, b"v" * 100, partition=i)
            await p.flush()
            _report(a)
        return
    async with Consumer(bootstrap_servers=a.bootstrap, auto_offset_reset="earliest",
                        enable_auto_commit=False) as c:
        c.assign([TopicPartition(a.topic, i) for i in range(a.n)])
        got = 0
        while got < a.n:
            got += sum(len(v) for v in (await c.poll(timeout_ms=1000)).values())
        _report(a)


async def _aiokafka(a: argparse.Namespace) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    if a.mode == "produce":
        p = AIOKafkaProducer(bootstrap_servers=a.bootstrap, linger_ms=5)
        await p.start()
        try:
            for i in range(a.n):
                await p.send(a.topic, b"v" * 100, partition=i)
            await p.flush()
            _report(a)
        finally:
            await p.stop()
        return
    c = AIOKafkaConsumer(bootstrap_servers=a.bootstrap, auto_offset_reset="earliest",
                         enable_auto_commit=False)
    await c.start()
    try:
        c.assign([TopicPartition(a.topic, i) for i in range(a.n)])
        got = 0
        while got < a.n:
            got += sum(len(v) for v in (await c.getmany(timeout_ms=1000)).values())
        _report(a)
    finally:
        await c.stop()


def _confluent(a: argparse.Namespace) -> None:
    import confluent_kafka

    if a.mode == "produce":
        p = confluent_kafka.Producer({"bootstrap.servers": a.bootstrap, "linger.ms": 5,
                                      "log.connection.close": False})
        for i in range(a.n):
            p.produce(a.topic, b"v" * 100, partition=i)
        assert p.flush(120) == 0
        _report(a)
        return
    c = confluent_kafka.Consumer({"bootstrap.servers": a.bootstrap, "group.id": "bench-rss",
                                  "enable.auto.commit": False, "log.connection.close": False})
    try:
        c.assign([confluent_kafka.TopicPartition(a.topic, i, confluent_kafka.OFFSET_BEGINNING)
                  for i in range(a.n)])
        got = 0
        while got < a.n:
            got += sum(1 for m in c.consume(10000, 1.0) if m.error() is None)
        _report(a)
    finally:
        c.close()


def _report(a: argparse.Namespace) -> None:
    print(json.dumps({"rss": _rss(), "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}),
          flush=True)


def worker(a: argparse.Namespace) -> None:
    if a.mode == "bare":  # the client imported, nothing else: the baseline the deltas subtract
        __import__({"aiokafka_lite": "aiokafka_lite", "confluent": "confluent_kafka",
                    "aiokafka": "aiokafka"}[a.client])
        _report(a)
    elif a.client == "confluent":
        _confluent(a)
    else:
        asyncio.run(_ours(a) if a.client == "aiokafka_lite" else _aiokafka(a))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--clients", nargs="+", default=list(CLIENTS), choices=CLIENTS)
    ap.add_argument("--worker", choices=("bare", "produce", "consume"), help=argparse.SUPPRESS)
    ap.add_argument("--client", choices=CLIENTS, help=argparse.SUPPRESS)
    ap.add_argument("--bootstrap", help=argparse.SUPPRESS)
    ap.add_argument("--topic", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        a.mode, a.n = a.worker, a.partitions
        worker(a)
        return
    import confluent_kafka.admin
    from _linkproxy import start_tansu

    broker = start_tansu()
    results: list[dict[str, Any]] = []
    try:
        topic = "rss"
        admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": broker.bootstrap,
                                                   "log.connection.close": False})
        admin.create_topics([confluent_kafka.admin.NewTopic(topic, a.partitions, 1)])[topic].result(120)
        del admin
        for mode in ("produce", "consume"):
            for client in a.clients:
                outs = {}
                for m in ("bare", mode):
                    cmd = [sys.executable, os.path.abspath(__file__), "--worker", m, "--client", client,
                           "--bootstrap", broker.bootstrap, "--topic", topic,
                           "--partitions", str(a.partitions)]
                    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
                    if proc.returncode != 0:
                        raise RuntimeError(f"{client} {m} failed:\n{proc.stderr[-2000:]}")
                    outs[m] = json.loads(proc.stdout.strip().splitlines()[-1])
                delta = outs[mode]["rss"] - outs["bare"]["rss"]
                r = {"mode": mode, "client": client, "rss_mib": round(outs[mode]["rss"] / 2**20, 1),
                     "peak_mib": round(outs[mode]["peak"] / 2**20, 1),
                     "delta_mib": round(delta / 2**20, 1), "bytes_per_partition": round(delta / a.partitions)}
                results.append(r)
                print(f"{mode:>8} {client:>13}: RSS {r['rss_mib']} MiB (peak {r['peak_mib']}), "
                      f"+{r['delta_mib']} MiB over a bare import, {r['bytes_per_partition']} B/partition; "
                      f"load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        broker.stop()
    ratios = {}
    for r in results:
        if r["client"] == "aiokafka_lite":
            for o in results:
                if o["mode"] == r["mode"] and o["client"] != "aiokafka_lite" and o["delta_mib"] > 0:
                    key = f"{r['mode']}_rss_delta_vs_{o['client']}"
                    ratios[key] = round(r["delta_mib"] / o["delta_mib"], 2)
    print(json.dumps({"bench": "partitions_rss", "partitions": a.partitions, "results": results,
                      "ratios": ratios}))


if __name__ == "__main__":
    main()

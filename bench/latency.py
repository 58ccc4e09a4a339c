"""Send-to-acknowledgement latency at a steady rate: aiokafka_lite vs confluent-kafka vs aiokafka.

Each client, in a process of its own against a fresh Tansu topic of 6 partitions, sends 100 B records
at ``--rate`` records/s (default 2,000) for ``--seconds`` with linger_ms=0 and acks=all, keyless, and
notes for each record the time from the send call to its acknowledgement (our and aiokafka's future
completing, confluent-kafka's delivery callback; confluent-kafka is polled every millisecond, which
bounds its figures from below by that). The first second is a warm-up and not counted. The clients
run one after another, alternating over ``--rounds`` rounds; the median of each percentile is reported.

The last line printed is one JSON object with p50/p99/max per client and the ratios (ours / theirs,
p50 and p99: below 1 is faster).

    python bench/latency.py [--rate 2000] [--seconds 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
CLIENTS = ("aiokafka_lite", "confluent", "aiokafka")


def _percentiles(lat: list[float]) -> dict[str, float]:
    lat.sort()
    n = len(lat)
    return {"records": n, "p50_ms": round(lat[n // 2] * 1e3, 3), "p99_ms": round(lat[int(n * 0.99)] * 1e3, 3),
            "max_ms": round(lat[-1] * 1e3, 3)}


async def _async_client(a: argparse.Namespace) -> list[float]:
    lat: list[float] = []
    loop = asyncio.get_running_loop()
    if a.client == "aiokafka_lite":
        from aiokafka_lite import Producer

        p: Any = Producer(bootstrap_servers=a.bootstrap, linger_ms=0, acks="all")
        await p.start()
    else:
        from aiokafka import AIOKafkaProducer

        p = AIOKafkaProducer(bootstrap_servers=a.bootstrap, linger_ms=0, acks="all")
        await p.start()
    try:
        await p.send_and_wait(a.topic, b"warm-up")
        total = a.rate * a.seconds
        start = time.perf_counter()
        pending = []
        for i in range(total):
            due = start + i / a.rate
            wait = due - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            t0 = time.perf_counter()
            fut = await p.send(a.topic, b"v" * 100)
            keep = i >= a.rate  # the first second warms up
            fut.add_done_callback(lambda _f, t0=t0, keep=keep: keep and lat.append(time.perf_counter() - t0))
            pending.append(fut)
        await p.flush()
        for fut in pending:
            await fut
        del loop
    finally:
        await p.stop()
    return lat


def _confluent(a: argparse.Namespace) -> list[float]:
    import confluent_kafka

    lat: list[float] = []
    p = confluent_kafka.Producer({"bootstrap.servers": a.bootstrap, "linger.ms": 0, "acks": "all",
                                  "log.connection.close": False})
    p.produce(a.topic, b"warm-up")
    p.flush(30)
    total = a.rate * a.seconds
    start = time.perf_counter()
    for i in range(total):
        due = start + i / a.rate
        while True:
            p.poll(0)
            wait = due - time.perf_counter()
            if wait <= 0:
                break
            p.poll(min(wait, 0.001))
        t0 = time.perf_counter()
        keep = i >= a.rate
        p.produce(a.topic, b"v" * 100,
                  on_delivery=lambda err, _m, t0=t0, keep=keep: keep and err is None
                  and lat.append(time.perf_counter() - t0))
    assert p.flush(60) == 0
    return lat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clients", nargs="+", default=list(CLIENTS), choices=CLIENTS)
    ap.add_argument("--worker", choices=CLIENTS, help=argparse.SUPPRESS)
    ap.add_argument("--bootstrap", help=argparse.SUPPRESS)
    ap.add_argument("--topic", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        a.client = a.worker
        lat = _confluent(a) if a.client == "confluent" else asyncio.run(_async_client(a))
        print(json.dumps(_percentiles(lat)))
        return
    import confluent_kafka.admin
    from _linkproxy import start_tansu

    broker = start_tansu()
    runs: dict[str, list[dict[str, Any]]] = {c: [] for c in a.clients}
    try:
        admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": broker.bootstrap,
                                                   "log.connection.close": False})
        for r in range(a.rounds):
            for client in a.clients[r % len(a.clients):] + a.clients[:r % len(a.clients)]:
                topic = f"lat-{client}-{r}"
                admin.create_topics([confluent_kafka.admin.NewTopic(topic, 6, 1)])[topic].result(30)
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", client, "--bootstrap",
                       broker.bootstrap, "--topic", topic, "--rate", str(a.rate), "--seconds", str(a.seconds)]
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
                if proc.returncode != 0:
                    raise RuntimeError(f"{client} failed:\n{proc.stderr[-2000:]}")
                out = json.loads(proc.stdout.strip().splitlines()[-1])
                runs[client].append(out)
                print(f"{client:>13} #{r + 1}: p50 {out['p50_ms']} ms, p99 {out['p99_ms']} ms, "
                      f"max {out['max_ms']} ms ({out['records']} records); load {os.getloadavg()[0]:.2f}",
                      flush=True)
        del admin
    finally:
        broker.stop()
    results = []
    for client, rs in runs.items():
        results.append({"client": client, **{k: statistics.median(x[k] for x in rs)
                                             for k in ("p50_ms", "p99_ms", "max_ms")}})
    ratios = {}
    ours = next((r for r in results if r["client"] == "aiokafka_lite"), None)
    for r in results:
        if ours is not None and r is not ours:
            for k in ("p50", "p99"):
                ratios[f"{k}_vs_{r['client']}"] = round(ours[f"{k}_ms"] / r[f"{k}_ms"], 2)
    print(json.dumps({"bench": "latency", "rate": a.rate, "seconds": a.seconds, "results": results,
                      "ratios": ratios}))


if __name__ == "__main__":
    main()

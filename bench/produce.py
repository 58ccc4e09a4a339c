"""Producer throughput on Tansu: aiokafka_lite vs aiokafka vs confluent-kafka, record by record.

Each client sends ``--records`` records of ``--value-bytes`` bytes (keyless) through its per-record
send call (``await producer.send(...)``; confluent-kafka's ``produce()`` with ``poll(0)``), then
flushes; for 1 and 6 partitions, without a codec and with lz4. Every run is a fresh process against a
fresh Tansu (started with aiokafka_lite.embedded, memory storage), so one run's garbage or broker
state never slows the next; the clients alternate for ``--rounds`` rounds and the median run is
reported, so that background load on a shared machine hits them alike. Reported per run: records/s
and MB/s (wall time from the first send to the end of the flush) and the client's CPU time per record
(the worker's ``resource`` user+system time, which for confluent-kafka includes librdkafka's
threads). The clients share the settings (acks=all, linger_ms, batch size); each keeps its other
defaults (ours is idempotent).

The last line printed is one JSON object: every run, the ratios ``ours_vs_confluent`` and
``ours_vs_aiokafka`` (records/s, ours / theirs), and the targets (>= 1.0x confluent-kafka, >= 5x
aiokafka, <= 1.5 us of client CPU per record).

    python bench/produce.py [--records N] [--uvloop] [--rounds 3] [--partitions 1 6] [--codecs none lz4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

CLIENTS = ("aiokafka_lite", "aiokafka", "confluent")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# -- workers (one client, one run, in its own process) ------------------------------------------


async def _ours(args: argparse.Namespace, value: bytes) -> tuple[float, float, dict[str, Any]]:
    from aiokafka_lite import Producer

    async with Producer(bootstrap_servers=args.bootstrap, acks="all", linger_ms=args.linger_ms,
                        batch_size=args.batch_size, compression_type=args.codec,
                        max_request_size=max(1048576, 4 * args.batch_size)) as p:
        await p.send_and_wait(args.topic, b"warm-up")
        send, topic = p.send, args.topic
        t0, c0 = time.perf_counter(), _cpu()
        for _ in range(args.records):
            await send(topic, value)
        await p.flush()
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        m = p.metrics()
        assert m["record-error-total"] == 0, m
        return wall, cpu, {"batch_size_avg": round(m["batch-size-avg"]),
                           "requests": m["request-total"]}


async def _aiokafka(args: argparse.Namespace, value: bytes) -> tuple[float, float, dict[str, Any]]:
    from aiokafka import AIOKafkaProducer

    p = AIOKafkaProducer(bootstrap_servers=args.bootstrap, acks="all", linger_ms=args.linger_ms,
                         max_batch_size=args.batch_size, compression_type=args.codec,
                         max_request_size=max(1048576, 4 * args.batch_size))
    await p.start()
    try:
        await p.send_and_wait(args.topic, b"warm-up")
        send, topic = p.send, args.topic
        t0, c0 = time.perf_counter(), _cpu()
        for _ in range(args.records):
            await send(topic, value)
        await p.flush()
        return time.perf_counter() - t0, _cpu() - c0, {}
    finally:
        await p.stop()


def _confluent(args: argparse.Namespace, value: bytes) -> tuple[float, float, dict[str, Any]]:
    import confluent_kafka

    conf = {"bootstrap.servers": args.bootstrap, "acks": "all", "linger.ms": args.linger_ms,
            "batch.size": args.batch_size, "compression.type": args.codec or "none",
            "queue.buffering.max.messages": 1_000_000, "log.connection.close": False}
    p = confluent_kafka.Producer(conf)
    p.produce(args.topic, b"warm-up")
    p.flush(30)
    produce, poll, topic = p.produce, p.poll, args.topic
    t0, c0 = time.perf_counter(), _cpu()
    for i in range(args.records):
        while True:
            try:
                produce(topic, value)
                break
            except BufferError:
                poll(0.001)
        if i % 1000 == 0:
            poll(0)
    left = p.flush(120)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    assert left == 0, f"{left} records not delivered"
    return wall, cpu, {}


def worker(args: argparse.Namespace) -> None:
    value = b"v" * args.value_bytes
    if args.client == "confluent":
        wall, cpu, extra = _confluent(args, value)
    else:
        if args.uvloop:
            import uvloop

            uvloop.install()
        if args.otel and args.client == "aiokafka_lite":
            from _otel import instrument

            instrument()
        fn = _ours if args.client == "aiokafka_lite" else _aiokafka
        wall, cpu, extra = asyncio.run(fn(args, value))
    print(json.dumps({"wall": wall, "cpu": cpu, **extra}))


# -- the driver -------------------------------------------------------------------------------


def run_one(args: argparse.Namespace, client: str, partitions: int, codec: str | None) -> dict[str, Any]:
    import confluent_kafka.admin

    from aiokafka_lite.embedded import start_broker

    broker = start_broker("tansu")
    try:
        topic = f"bench-produce-{partitions}"
        admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": broker.bootstrap,
                                                   "log.connection.close": False})
        admin.create_topics([confluent_kafka.admin.NewTopic(topic, partitions, 1)])[topic].result(30)
        del admin  # before the broker stops, or librdkafka logs the disconnect
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", client, "--bootstrap", broker.bootstrap,
               "--topic", topic, "--records", str(args.records), "--value-bytes", str(args.value_bytes),
               "--batch-size", str(args.batch_size), "--linger-ms", str(args.linger_ms)]
        if codec:
            cmd += ["--codec", codec]
        if args.uvloop:
            cmd.append("--uvloop")
        if args.otel:
            cmd.append("--otel")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{client} worker failed:\n{proc.stdout}\n{proc.stderr}")
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        broker.stop()
    n = args.records
    result = {
        "client": client, "partitions": partitions, "codec": codec or "none",
        "records_per_s": round(n / out["wall"]),
        "mb_per_s": round(n * args.value_bytes / out["wall"] / 1e6, 1),
        "cpu_us_per_record": round(out["cpu"] / n * 1e6, 3),
    }
    result.update({k: v for k, v in out.items() if k not in ("wall", "cpu")})
    return result


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median records/s (its CPU figure too), plus every run's records/s."""
    ordered = sorted(runs, key=lambda r: r["records_per_s"])
    median = dict(ordered[len(ordered) // 2])
    median["cpu_us_per_record"] = statistics.median(r["cpu_us_per_record"] for r in runs)
    median["runs_records_per_s"] = [r["records_per_s"] for r in runs]
    return median


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--value-bytes", type=int, default=100)
    ap.add_argument("--partitions", type=int, nargs="+", default=[1, 6])
    ap.add_argument("--codecs", nargs="+", default=["none", "lz4"])
    ap.add_argument("--clients", nargs="+", default=list(CLIENTS), choices=CLIENTS)
    ap.add_argument("--batch-size", type=int, default=262144,
                    help="every client's batch size in bytes (librdkafka's default is 1 MB, Java's 16 KiB)")
    ap.add_argument("--linger-ms", type=int, default=5)
    ap.add_argument("--uvloop", action="store_true", help="run our and aiokafka's clients on uvloop")
    ap.add_argument("--otel", action="store_true",
                    help="instrument our client with OpenTelemetry (the SDK, spans dropped; bench/_otel.py)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs per client and scenario, alternating clients; the median is reported "
                         "(aiokafka runs once)")
    ap.add_argument("--timeout", type=float, default=600)
    # worker-only options
    ap.add_argument("--worker", choices=CLIENTS, help=argparse.SUPPRESS)
    ap.add_argument("--bootstrap", help=argparse.SUPPRESS)
    ap.add_argument("--topic", help=argparse.SUPPRESS)
    ap.add_argument("--codec", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        args.client = args.worker
        worker(args)
        return
    results = []
    for partitions in args.partitions:
        for codec in args.codecs:
            runs: dict[str, list[dict[str, Any]]] = {c: [] for c in args.clients}
            for round_no in range(args.rounds):
                for client in args.clients:
                    if client == "aiokafka" and round_no > 0:
                        continue  # ~10x slower than the others: one run says enough, and saves minutes
                    r = run_one(args, client, partitions, None if codec == "none" else codec)
                    runs[client].append(r)
                    print(f"{client:>14} p={partitions} {r['codec']:>4} #{round_no + 1}: "
                          f"{r['records_per_s']:>10,} rec/s {r['mb_per_s']:>7} MB/s  "
                          f"{r['cpu_us_per_record']:.3f} us CPU/rec", flush=True)
            results.extend(_median_run(rs) for rs in runs.values() if rs)
    ratios: dict[str, float] = {}
    worst_cpu = 0.0
    for r in results:
        if r["client"] != "aiokafka_lite":
            continue
        worst_cpu = max(worst_cpu, r["cpu_us_per_record"])
        key = f"p{r['partitions']}_{r['codec']}"
        for other, name in (("confluent", "ours_vs_confluent"), ("aiokafka", "ours_vs_aiokafka")):
            theirs = [x for x in results if x["client"] == other and x["partitions"] == r["partitions"]
                      and x["codec"] == r["codec"]]
            if theirs:
                ratios[f"{name}_{key}"] = round(r["records_per_s"] / theirs[0]["records_per_s"], 2)
    vs_conf = [v for k, v in ratios.items() if k.startswith("ours_vs_confluent")]
    vs_aio = [v for k, v in ratios.items() if k.startswith("ours_vs_aiokafka")]
    summary = {
        "bench": "produce", "records": args.records, "value_bytes": args.value_bytes,
        "batch_size": args.batch_size, "linger_ms": args.linger_ms,
        "loop": "uvloop" if args.uvloop else "asyncio", "otel": args.otel, "rounds": args.rounds,
        "results": results, "ratios": ratios,
        "targets": {
            "ours_vs_confluent_min": min(vs_conf) if vs_conf else None,
            "ours_vs_aiokafka_min": min(vs_aio) if vs_aio else None,
            "ours_cpu_us_per_record_max": worst_cpu,
            "met": bool(vs_conf and vs_aio and min(vs_conf) >= 1.0 and min(vs_aio) >= 5.0
                        and worst_cpu <= 1.5),
        },
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

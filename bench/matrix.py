"""One matrix of produce and consume runs: aiokafka_lite vs confluent-kafka vs aiokafka on Tansu.

Around a base cell (100 B values, 6 partitions, no codec, acks=1, loopback) one dimension varies at a
time: value size (10 B .. 256 KiB), partitions (1 .. 1000), codec (none, lz4, zstd), acks (1, all) and the
link (loopback, or a delaying TCP proxy adding ``--delay-ms`` each way, started here on 127.0.0.1, see
_linkproxy.py). Each cell gets a fresh Tansu (memory storage). In it every client produces ``n`` records
(round-robin over the partitions, through its per-record call: our ``await send()``, aiokafka's
``await send()``, confluent-kafka's ``produce()``), one process per run, the clients interleaved over
``--rounds`` rounds with the starting client rotating, so load from other work on the machine falls on
all alike; then each client consumes one of those topics from the beginning (assigned partitions, no
group), again interleaved. The median run per client is reported.

Per run: records/s and MB/s of values; the client's CPU (``getrusage`` user+system in the child, over the
timed part only, so librdkafka's threads count) per record and per KiB of values; the child's peak RSS;
and the broker's CPU over the same span (from /proc), as a share of one core: when the broker sits near
its ceiling (Tansu uses both cores here), the broker, not the client, sets records/s, and only the CPU
figures compare the clients. Shared settings: linger_ms=5, batch_size=256 KiB, max_request_size 4 MiB.
With acks=all ours is idempotent (its default; one batch per partition in flight, growing to
max_batch_bytes); the peers keep their non-idempotent defaults.

Writes one PNG per dimension (``--charts``, default docs/perf/) and, unless ``--no-docs``, the table into
docs/performance.md between its ``matrix`` markers. The last line printed is one JSON object: every
cell's figures and the ratios (ours / theirs, records/s).

    python bench/matrix.py [--quick] [--records N] [--rounds 3] [--only value partitions ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

CLIENTS = ("aiokafka_lite", "confluent", "confluent_aio", "aiokafka")
PEERS = tuple(c for c in CLIENTS if c != "aiokafka_lite")
BASE: dict[str, Any] = {"value": 100, "partitions": 6, "codec": "none", "acks": "1", "link": "direct"}
DIMENSIONS: dict[str, list[Any]] = {
    "value": [10, 100, 1024, 16384, 262144],
    "partitions": [1, 6, 64, 1000],
    "codec": ["none", "lz4", "zstd"],
    "acks": ["1", "all"],
    "link": ["direct", "delayed"],
}
BATCH_SIZE = 262144
LINGER_MS = 5
MAX_REQUEST = 4 * 1048576
MARK_BEGIN, MARK_END = "<!-- matrix:begin -->", "<!-- matrix:end -->"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _mark(what: str) -> None:
    """Tell the driver the timed part starts or ends (it samples the broker's CPU then)."""
    print(what, flush=True)


def sample_values(size: int) -> list[bytes]:
    """JSON-like values with random fields (lz4/zstd shrink them about as much as real event data);
    at most ~8 MiB of distinct values, reused round-robin."""
    rnd = random.Random(42)
    alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789"
    out = []
    for i in range(max(1, min(1024, (8 << 20) // size))):
        head = b'{"id":%d,"user":"u%05d","score":%.4f,"pad":"' % (i, rnd.randrange(100000), rnd.random())
        pad = bytes(rnd.choices(alphabet, k=max(0, size - len(head) - 2)))
        out.append((head + pad + b'"}')[:size])
    return out


# -- workers (one client, one run, one process) ----------------------------------------------------


async def _produce_ours(a: argparse.Namespace, values: list[bytes]) -> tuple[float, float]:
    from aiokafka_lite import Producer

    async with Producer(bootstrap_servers=a.bootstrap, acks=a.acks, linger_ms=a.linger_ms,
                        batch_size=a.batch_size, compression_type=a.codec, max_request_size=MAX_REQUEST) as p:
        await p.send_and_wait(a.topic, b"warm-up", partition=0)
        send, topic, parts, nv = p.send, a.topic, a.partitions, len(values)
        _mark("T0")
        t0, c0 = time.perf_counter(), _cpu()
        for i in range(a.records):
            await send(topic, values[i % nv], partition=i % parts)
        await p.flush()
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        _mark("T1")
        assert p.metrics()["record-error-total"] == 0
        return wall, cpu


async def _produce_aiokafka(a: argparse.Namespace, values: list[bytes]) -> tuple[float, float]:
    from aiokafka import AIOKafkaProducer

    p = AIOKafkaProducer(bootstrap_servers=a.bootstrap, acks=1 if a.acks == "1" else "all",
                         linger_ms=a.linger_ms, max_batch_size=a.batch_size, compression_type=a.codec,
                         max_request_size=MAX_REQUEST)
    await p.start()
    try:
        await p.send_and_wait(a.topic, b"warm-up", partition=0)
        send, topic, parts, nv = p.send, a.topic, a.partitions, len(values)
        _mark("T0")
        t0, c0 = time.perf_counter(), _cpu()
        for i in range(a.records):
            await send(topic, values[i % nv], partition=i % parts)
        await p.flush()
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        _mark("T1")
        return wall, cpu
    finally:
        await p.stop()


def _produce_confluent(a: argparse.Namespace, values: list[bytes]) -> tuple[float, float]:
    import confluent_kafka

    p = confluent_kafka.Producer({
        "bootstrap.servers": a.bootstrap, "acks": a.acks, "linger.ms": a.linger_ms,
        "batch.size": a.batch_size, "compression.type": a.codec or "none", "message.max.bytes": MAX_REQUEST,
        "queue.buffering.max.messages": 1_000_000, "log.connection.close": False})
    p.produce(a.topic, b"warm-up", partition=0)
    p.flush(30)
    produce, poll, topic, parts, nv = p.produce, p.poll, a.topic, a.partitions, len(values)
    _mark("T0")
    t0, c0 = time.perf_counter(), _cpu()
    for i in range(a.records):
        while True:
            try:
                produce(topic, values[i % nv], partition=i % parts)
                break
            except BufferError:
                poll(0.001)
        if i % 1000 == 0:
            poll(0)
    left = p.flush(300)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    _mark("T1")
    assert left == 0, f"{left} records not delivered"
    return wall, cpu


async def _produce_confluent_aio(a: argparse.Namespace, values: list[bytes]) -> tuple[float, float]:
    """confluent_kafka.aio's AIOProducer (librdkafka behind a thread pool), as its docs show it:
    ``await produce()`` per record, which buffers and hands librdkafka a batch of calls at a time."""
    from confluent_kafka.aio import AIOProducer

    p = AIOProducer({
        "bootstrap.servers": a.bootstrap, "acks": a.acks, "linger.ms": a.linger_ms,
        "batch.size": a.batch_size, "compression.type": a.codec or "none", "message.max.bytes": MAX_REQUEST,
        "queue.buffering.max.messages": 1_000_000, "log.connection.close": False})
    try:
        await (await p.produce(a.topic, b"warm-up", partition=0))
        produce, topic, parts, nv = p.produce, a.topic, a.partitions, len(values)
        _mark("T0")
        t0, c0 = time.perf_counter(), _cpu()
        futs = [await produce(topic, values[i % nv], partition=i % parts) for i in range(a.records)]
        await p.flush(300)
        await asyncio.gather(*futs)
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        _mark("T1")
        return wall, cpu
    finally:
        await p.close()


class _Clock:
    """Consumers are timed from their first batch to the last record (connecting and the first round
    trip excluded alike); when the first batch held most records, or on the delayed link (where the
    first batch's round trip is the point and the rest may already be prefetched), from assign()."""

    def __init__(self, total: int, from_assign: bool) -> None:
        self.total = total
        self.from_assign = from_assign
        self.n = 0
        self.first = 0
        self.t0 = self.c0 = self.ta = self.ca = 0.0

    def begin(self) -> None:
        _mark("T0")
        self.ta, self.ca = time.perf_counter(), _cpu()

    def add(self, got: int) -> bool:
        if got and not self.first:
            self.first = got
            self.t0, self.c0 = time.perf_counter(), _cpu()
        self.n += got
        return self.n < self.total

    def stop(self) -> tuple[float, float, int]:
        t1, c1 = time.perf_counter(), _cpu()
        _mark("T1")
        if not self.from_assign and self.n - self.first >= self.total // 2:
            return t1 - self.t0, c1 - self.c0, self.n - self.first
        return t1 - self.ta, c1 - self.ca, self.n


async def _consume_ours(a: argparse.Namespace) -> tuple[float, float, int]:
    from aiokafka_lite import Consumer, TopicPartition

    clock = _Clock(a.records, a.from_assign)
    async with Consumer(bootstrap_servers=a.bootstrap, auto_offset_reset="earliest",
                        enable_auto_commit=False) as c:
        c.assign([TopicPartition(a.topic, p) for p in range(a.partitions)])
        clock.begin()
        while clock.add(sum(len(v) for v in (await c.poll(timeout_ms=1000, max_records=10000)).values())):
            pass
        return clock.stop()


async def _consume_aiokafka(a: argparse.Namespace) -> tuple[float, float, int]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    clock = _Clock(a.records, a.from_assign)
    c = AIOKafkaConsumer(bootstrap_servers=a.bootstrap, auto_offset_reset="earliest",
                         enable_auto_commit=False)
    await c.start()
    try:
        c.assign([TopicPartition(a.topic, p) for p in range(a.partitions)])
        clock.begin()
        while clock.add(sum(len(v) for v in (await c.getmany(timeout_ms=1000, max_records=10000)).values())):
            pass
        return clock.stop()
    finally:
        await c.stop()


def _consume_confluent(a: argparse.Namespace) -> tuple[float, float, int]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    clock = _Clock(a.records, a.from_assign)
    # fetch.queue.backoff.ms: by default librdkafka stops fetching for a second whenever its prefetch
    # queue is full, which Tansu's large fetch answers cause often (see bench/consume.py).
    c = Consumer({"bootstrap.servers": a.bootstrap, "group.id": "bench-matrix", "enable.auto.commit": False,
                  "fetch.queue.backoff.ms": 10, "log.connection.close": False})
    try:
        c.assign([TopicPartition(a.topic, p, OFFSET_BEGINNING) for p in range(a.partitions)])
        clock.begin()
        while clock.add(sum(1 for m in c.consume(10000, 1.0) if m.error() is None)):
            pass
        return clock.stop()
    finally:
        c.close()


async def _consume_confluent_aio(a: argparse.Namespace) -> tuple[float, float, int]:
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition
    from confluent_kafka.aio import AIOConsumer

    clock = _Clock(a.records, a.from_assign)
    c = AIOConsumer({"bootstrap.servers": a.bootstrap, "group.id": "bench-matrix-aio",
                     "enable.auto.commit": False, "fetch.queue.backoff.ms": 10,
                     "log.connection.close": False})
    try:
        await c.assign([TopicPartition(a.topic, p, OFFSET_BEGINNING) for p in range(a.partitions)])
        clock.begin()
        while clock.add(sum(1 for m in await c.consume(10000, 1.0) if m.error() is None)):
            pass
        return clock.stop()
    finally:
        await c.close()


def worker(a: argparse.Namespace) -> None:
    n = a.records
    if a.mode == "produce":
        values = sample_values(a.value_bytes)
        if a.client == "confluent":
            wall, cpu = _produce_confluent(a, values)
        else:
            fn = {"aiokafka_lite": _produce_ours, "aiokafka": _produce_aiokafka,
                  "confluent_aio": _produce_confluent_aio}[a.client]
            wall, cpu = asyncio.run(fn(a, values))
    elif a.client == "confluent":
        wall, cpu, n = _consume_confluent(a)
    else:
        consume = {"aiokafka_lite": _consume_ours, "aiokafka": _consume_aiokafka,
                   "confluent_aio": _consume_confluent_aio}[a.client]
        wall, cpu, n = asyncio.run(consume(a))
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"wall": wall, "cpu": cpu, "records": n, "rss_kib": rss_kib}), flush=True)


# -- the driver --------------------------------------------------------------------------------------


def _proc_cpu(pid: int) -> float:
    """A process's user+system CPU seconds, all threads (/proc/PID/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Cell:
    """One broker (and proxy) for one cell of the matrix."""

    def __init__(self, settings: dict[str, Any], delay_ms: float, batch_size: int, linger_ms: float) -> None:
        from _linkproxy import DelayedTansu, start_tansu

        self.settings = settings
        self.batch_size, self.linger_ms = batch_size, linger_ms
        self.delayed = DelayedTansu(delay_ms) if settings["link"] == "delayed" else None
        self.broker = self.delayed.broker if self.delayed is not None else start_tansu()
        self.bootstrap = self.delayed.bootstrap if self.delayed is not None else self.broker.bootstrap

    def create_topic(self, name: str, partitions: int) -> None:
        import confluent_kafka.admin

        admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": self.broker.bootstrap,
                                                   "log.connection.close": False})
        admin.create_topics([confluent_kafka.admin.NewTopic(name, partitions, 1)])[name].result(60)
        del admin

    def close(self) -> None:
        if self.delayed is not None:
            self.delayed.stop()
        else:
            self.broker.stop()

    def run(self, mode: str, client: str, topic: str, n: int, timeout: float) -> dict[str, Any] | None:
        """One worker process; its figures plus the broker's CPU over its timed part (None: it failed)."""
        s = self.settings
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", mode, "--client", client,
               "--bootstrap", self.bootstrap, "--topic", topic, "--records", str(n),
               "--value-bytes", str(s["value"]), "--partitions-count", str(s["partitions"]),
               "--acks", s["acks"], "--batch-size", str(self.batch_size), "--linger-ms", str(self.linger_ms)]
        if s["codec"] != "none":
            cmd += ["--codec", s["codec"]]
        if s["link"] == "delayed":
            cmd.append("--from-assign")
        pid = self.broker.pid
        broker_cpu = {"T0": 0.0, "T1": 0.0}
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + timeout
        last = ""
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                line = line.strip()
                if line in broker_cpu:
                    broker_cpu[line] = _proc_cpu(pid)
                elif line:
                    last = line
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(cmd, timeout)
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            print(f"    {client} {mode}: timed out after {timeout:g} s", file=sys.stderr, flush=True)
            return None
        if proc.returncode != 0 or not last.startswith("{"):
            err = proc.stderr.read() if proc.stderr else ""
            print(f"    {client} {mode} failed: {err.strip().splitlines()[-1:]}", file=sys.stderr, flush=True)
            return None
        out = json.loads(last)
        out["broker_cpu"] = broker_cpu["T1"] - broker_cpu["T0"]
        return out


_FLOORS: dict[tuple[int, int], dict[str, Any]] = {}


def floor_for(value_bytes: int, batch_size: int, quick: bool) -> dict[str, Any]:
    """The machine's produce and consume floor for this value size (bench/floor.py), measured once per
    run in the same run as the clients."""
    key = (value_bytes, batch_size)
    if key not in _FLOORS:
        import floor

        _FLOORS[key] = floor.measure(value_bytes, batch_size, 16 if quick else 64, 1 if quick else 3)
    return _FLOORS[key]


def _figures(out: dict[str, Any], value_bytes: int, floor_us: float) -> dict[str, Any]:
    n, wall, cpu = out["records"], out["wall"], out["cpu"]
    return {
        "x_floor": round(cpu / n * 1e6 / floor_us, 2),
        "records_per_s": round(n / wall),
        "mb_per_s": round(n * value_bytes / wall / 1e6, 2),
        "cpu_us_per_record": round(cpu / n * 1e6, 3),
        "cpu_us_per_kib": round(cpu / (n * value_bytes / 1024) * 1e6, 3),
        "rss_mib": round(out["rss_kib"] / 1024, 1),
        "broker_cores": round(out["broker_cpu"] / wall, 2),
    }


def _median(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not runs:
        return None
    ordered = sorted(runs, key=lambda r: r["records_per_s"])
    med = dict(ordered[len(ordered) // 2])
    for key in ("cpu_us_per_record", "x_floor", "cpu_us_per_kib", "rss_mib", "broker_cores"):
        med[key] = statistics.median(r[key] for r in runs)
    med["runs"] = len(runs)
    return med


def record_count(args: argparse.Namespace, s: dict[str, Any]) -> int:
    """Fewer records for large values (a byte budget) and on the delayed link (each round trip costs)."""
    n = min(args.records, max(args.min_records, args.byte_budget // s["value"]))
    if s["link"] == "delayed":
        n = max(args.min_records, n // 4)
    return n


def run_cell(args: argparse.Namespace, dim: str, s: dict[str, Any]) -> dict[str, Any]:
    n = record_count(args, s)
    fl = floor_for(s["value"], args.batch_size, args.quick)
    print(f"floor at {s['value']} B: produce {fl['produce_us']} us/record, "
          f"consume {fl['consume_us']} us/record", flush=True)
    print(f"cell {dim}={s[dim]} ({s}), {n:,} records; load {os.getloadavg()[0]:.2f}", flush=True)
    cell = Cell(s, args.delay_ms, args.batch_size, args.linger_ms)
    clients = args.clients
    produced: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
    consumed: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
    filled: list[str] = []
    try:
        for r in range(args.rounds):
            order = clients[r % len(clients):] + clients[:r % len(clients)]
            for client in order:
                topic = f"m-{client}-{r}"
                cell.create_topic(topic, s["partitions"])
                out = cell.run("produce", client, topic, n, args.timeout)
                if out is not None:
                    produced[client].append(_figures(out, s["value"], fl["produce_us"]))
                    filled.append(topic)
                    f = produced[client][-1]
                    print(f"  produce {client:>13} #{r + 1}: {f['records_per_s']:>9,} rec/s "
                          f"{f['mb_per_s']:>8} MB/s {f['cpu_us_per_record']:>8.3f} us/rec "
                          f"({f['x_floor']}x floor)  "
                          f"broker {f['broker_cores']} cores", flush=True)
        if dim != "acks" and filled:
            for r in range(args.rounds):
                order = clients[r % len(clients):] + clients[:r % len(clients)]
                for client in order:
                    out = cell.run("consume", client, filled[0], n, args.timeout)
                    if out is not None:
                        consumed[client].append(_figures(out, s["value"], fl["consume_us"]))
                        f = consumed[client][-1]
                        print(f"  consume {client:>13} #{r + 1}: {f['records_per_s']:>9,} rec/s "
                              f"{f['mb_per_s']:>8} MB/s {f['cpu_us_per_record']:>8.3f} us/rec "
                          f"({f['x_floor']}x floor)  "
                              f"broker {f['broker_cores']} cores", flush=True)
    finally:
        cell.close()
    return {"dimension": dim, "setting": s[dim], "records": n, "load": round(os.getloadavg()[0], 2),
            "floor": {"produce_us": fl["produce_us"], "consume_us": fl["consume_us"]},
            "produce": {c: _median(v) for c, v in produced.items()},
            "consume": {c: _median(v) for c, v in consumed.items()} if dim != "acks" else {}}


def ratios(results: list[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for cell in results:
        for mode in ("produce", "consume"):
            figs = cell[mode]
            ours = figs.get("aiokafka_lite")
            for other in PEERS:
                theirs = figs.get(other)
                if ours and theirs:
                    key = f"{mode}_{cell['dimension']}_{cell['setting']}_vs_{other}"
                    out[key] = round(ours["records_per_s"] / theirs["records_per_s"], 2)
    return out


# -- report: charts and the docs table -----------------------------------------------------------------


def cells_for(results: list[dict[str, Any]], dim: str) -> list[dict[str, Any]]:
    """A dimension's cells in order, the base cell (measured once, in the value row) among them."""
    base = next((c for c in results if c["dimension"] == "value" and c["setting"] == BASE["value"]), None)
    out = []
    for setting in DIMENSIONS[dim]:
        if setting == BASE[dim] and base is not None:
            out.append({**base, "dimension": dim, "setting": setting})
        else:
            out.extend(c for c in results if c["dimension"] == dim and c["setting"] == setting)
    return out if any(c["dimension"] == dim and c is not base for c in out) else []


def _label(dim: str, v: Any) -> str:
    if dim == "value":
        return f"{v // 1024} KiB" if v >= 1024 else f"{v} B"
    return str(v)


def charts(results: list[dict[str, Any]], out_dir: Path, clients: list[str]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for dim in DIMENSIONS:
        cells = cells_for(results, dim)
        if not cells:
            continue
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
        labels = [_label(dim, c["setting"]) for c in cells]
        width = 0.8 / len(clients)
        panels = (("produce", "records_per_s", "produce: records/s"),
                  ("produce", "cpu_us_per_record", "produce: client CPU µs/record"),
                  ("consume", "records_per_s", "consume: records/s"))
        for ax, (mode, key, title) in zip(axes, panels, strict=True):
            for i, client in enumerate(clients):
                ys = [(c[mode].get(client) or {}).get(key, 0) or 0 for c in cells]
                ax.bar([x + i * width for x in range(len(cells))], ys, width, label=client)
            ax.set_xticks([x + width * (len(clients) - 1) / 2 for x in range(len(cells))], labels)
            ax.set_title(title, fontsize=10)
            ax.set_xlabel(dim)
            if key == "records_per_s" or dim == "value":
                ax.set_yscale("log")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        path = out_dir / f"matrix-{dim}.png"
        fig.savefig(path, dpi=80)
        plt.close(fig)
        paths.append(path)
    return paths


def markdown(results: list[dict[str, Any]], args: argparse.Namespace, clients: list[str]) -> str:
    lines = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with `bench/matrix.py"
             f"{' --quick' if args.quick else ''}` ({args.rounds} rounds, median; load average at each cell "
             f"in the table). Base cell: 100 B values, 6 partitions, no codec, acks=1, loopback; "
             f"delayed link: "
             f"{args.delay_ms:g} ms each way. `cpu/rec` and `cpu/KiB` are the client's CPU µs; `broker` is "
             f"Tansu's CPU in cores during the run.", "",
             "| dimension | setting | records | load | mode | client | records/s | MB/s | cpu/rec | x floor "
             "| cpu/KiB | RSS MiB | broker | ours vs |", "|" + "---|" * 14]
    for cell in results:
        for mode in ("produce", "consume"):
            ours = cell[mode].get("aiokafka_lite")
            for client in clients:
                f = cell[mode].get(client)
                if f is None:
                    continue
                vs = "" if client == "aiokafka_lite" or not ours else \
                    f"{ours['records_per_s'] / f['records_per_s']:.2f}x"
                lines.append(f"| {cell['dimension']} | {_label(cell['dimension'], cell['setting'])} | "
                             f"{cell['records']:,} | {cell['load']} | {mode} | {client} | "
                             f"{f['records_per_s']:,} | "
                             f"{f['mb_per_s']} | {f['cpu_us_per_record']:.2f} | {f['x_floor']} | "
                             f"{f['cpu_us_per_kib']:.2f} | "
                             f"{f['rss_mib']} | {f['broker_cores']} | {vs} |")
    return "\n".join(lines)


def update_docs(doc: Path, table: str, chart_paths: list[Path]) -> None:
    images = "\n".join(f"![{p.stem}]({os.path.relpath(p, doc.parent)})" for p in chart_paths)
    block = f"{MARK_BEGIN}\n{table}\n\n{images}\n{MARK_END}"
    text = doc.read_text() if doc.exists() else f"# Performance\n\n{MARK_BEGIN}\n{MARK_END}\n"
    if MARK_BEGIN not in text:
        text += f"\n{MARK_BEGIN}\n{MARK_END}\n"
    head, rest = text.split(MARK_BEGIN, 1)
    tail = rest.split(MARK_END, 1)[1]
    doc.write_text(head + block + tail)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer records and one round: a few minutes")
    ap.add_argument("--records", type=int, default=None, help="records per run in the base cell")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--only", nargs="+", choices=list(DIMENSIONS), help="vary only these dimensions")
    ap.add_argument("--clients", nargs="+", default=list(CLIENTS), choices=CLIENTS)
    ap.add_argument("--delay-ms", type=float, default=20.0, help="delayed link: added each way")
    ap.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="every client's batch size")
    ap.add_argument("--linger-ms", type=float, default=LINGER_MS, help="every client's linger")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--charts", type=Path, default=ROOT / "docs" / "perf")
    ap.add_argument("--doc", type=Path, default=ROOT / "docs" / "performance.md")
    ap.add_argument("--no-docs", action="store_true", help="print only; leave charts and docs alone")
    # worker-only options
    ap.add_argument("--worker", choices=("produce", "consume"), help=argparse.SUPPRESS)
    ap.add_argument("--client", choices=CLIENTS, help=argparse.SUPPRESS)
    ap.add_argument("--bootstrap", help=argparse.SUPPRESS)
    ap.add_argument("--topic", help=argparse.SUPPRESS)
    ap.add_argument("--value-bytes", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--partitions-count", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--acks", default="1", help=argparse.SUPPRESS)
    ap.add_argument("--codec", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--from-assign", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        args.mode, args.partitions = args.worker, args.partitions_count
        worker(args)
        return
    # SIGTERM ends the driver through its finally blocks, which stop the broker and the proxy.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.records = args.records or (100_000 if args.quick else 300_000)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.byte_budget = (32 if args.quick else 160) << 20
    args.min_records = 100 if args.quick else 400
    results = []
    for dim in args.only or list(DIMENSIONS):
        for setting in DIMENSIONS[dim]:
            if setting == BASE[dim] and dim != "value":
                continue  # the base cell is measured once, in the value row
            results.append(run_cell(args, dim, {**BASE, dim: setting}))
    summary = {"bench": "matrix", "quick": args.quick, "rounds": args.rounds, "batch_size": args.batch_size,
               "linger_ms": args.linger_ms, "results": results,
               "ratios": ratios(results)}
    if not args.no_docs:
        paths = charts(results, args.charts, args.clients)
        update_docs(args.doc, markdown(results, args, args.clients), paths)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

"""Does the producer keep a far broker's pipe full? 3,000 records through a 20 ms-each-way link.

A Tansu broker sits behind the delaying proxy of _linkproxy.py (``--delay-ms`` each way, on 127.0.0.1).
Our producer (in a process of its own, default settings: batch_size 16 KiB, linger_ms 5) sends
``--records`` records of ``--value-bytes`` to one partition and round-robin to six, idempotent (the
default: one batch per partition in flight, rule I2, batches growing up to max_batch_bytes meanwhile)
and not (up to max_in_flight_requests_per_connection requests pipelined), then flushes; to six
partitions also without keys or partitions (``keyless``: uniform sticky, KIP-794), idempotent;
confluent-kafka (its defaults, non-idempotent) runs the same for reference. ``--buffer-memory`` sets
ours' buffer_memory (default: the producer's). Reported per run: the wall time from the
first send to the end of the flush, the produce requests it took, and the round trips that is worth
(wall / (2 x delay)): a full pipe needs only a few.

The last line printed is one JSON object with every run and the ratio ours / confluent-kafka (wall
time: below 1 is faster).

    python bench/slow_link.py [--count 3000] [--value-bytes 1024] [--delay-ms 20] [--rounds 3]
                              [--buffer-memory BYTES] [--only-ours]
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


async def _ours(a: argparse.Namespace) -> dict[str, Any]:
    from aiokafka_lite import Producer

    settings: dict[str, Any] = {"bootstrap_servers": a.bootstrap}
    if a.buffer_memory:
        settings["buffer_memory"] = a.buffer_memory
    if not a.idempotent:
        settings.update(enable_idempotence=False, acks=1)
    async with Producer(**settings) as p:
        await p.send_and_wait(a.topic, b"warm-up", partition=0)
        before = p.metrics()["request-total"]
        value = b"v" * a.value_bytes
        t0 = time.perf_counter()
        for i in range(a.records):
            await p.send(a.topic, value, partition=None if a.keyless else i % a.partitions)
        await p.flush()
        wall = time.perf_counter() - t0
        return {"wall": wall, "requests": p.metrics()["request-total"] - before}


def _confluent(a: argparse.Namespace) -> dict[str, Any]:
    import confluent_kafka

    p = confluent_kafka.Producer({"bootstrap.servers": a.bootstrap, "log.connection.close": False})
    p.produce(a.topic, b"warm-up", partition=0)
    p.flush(30)
    value = b"v" * a.value_bytes
    t0 = time.perf_counter()
    for i in range(a.records):
        if a.keyless:
            p.produce(a.topic, value)
        else:
            p.produce(a.topic, value, partition=i % a.partitions)
    left = p.flush(120)
    assert left == 0
    return {"wall": time.perf_counter() - t0, "requests": None}


def run(a: argparse.Namespace, bootstrap: str, topic: str, client: str, partitions: int,
        idempotent: bool, keyless: bool) -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", client, "--bootstrap", bootstrap,
           "--topic", topic, "--count", str(a.records), "--value-bytes", str(a.value_bytes),
           "--partitions", str(partitions), "--buffer-memory", str(a.buffer_memory)]
    if idempotent:
        cmd.append("--idempotent")
    if keyless:
        cmd.append("--keyless")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{client} failed:\n{proc.stderr}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=3000, help="records per run")
    ap.add_argument("--value-bytes", type=int, default=1024)
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--buffer-memory", type=int, default=0, help="ours' buffer_memory (0: its default)")
    ap.add_argument("--only-ours", action="store_true", help="skip confluent-kafka")
    ap.add_argument("--worker", choices=("ours", "confluent"), help=argparse.SUPPRESS)
    ap.add_argument("--bootstrap", help=argparse.SUPPRESS)
    ap.add_argument("--topic", help=argparse.SUPPRESS)
    ap.add_argument("--partitions", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--idempotent", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--keyless", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    a.records = a.count  # not --records: bench/run_all.py passes its own count to scripts that take that
    if a.worker:
        out = _confluent(a) if a.worker == "confluent" else asyncio.run(_ours(a))
        print(json.dumps(out))
        return
    import confluent_kafka.admin
    from _linkproxy import DelayedTansu

    link = DelayedTansu(a.delay_ms)
    rtt = 2 * a.delay_ms / 1000
    results = []
    try:
        admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": link.direct,
                                                   "log.connection.close": False})
        kinds = [("ours", True, False), ("ours", False, False), ("confluent", False, False)]
        cases = [(c, p, i, k) for p in (1, 6) for c, i, k in kinds]
        cases += [("ours", 6, True, True), ("confluent", 6, False, True)]
        if a.only_ours:
            cases = [c for c in cases if c[0] == "ours"]
        runs: dict[tuple[str, int, bool, bool], list[dict[str, Any]]] = {case: [] for case in cases}
        for r in range(a.rounds):
            for client, partitions, idem, keyless in cases:
                topic = f"slow-{client}-{partitions}-{int(idem)}-{int(keyless)}-{r}"
                admin.create_topics([confluent_kafka.admin.NewTopic(topic, partitions, 1)])[topic].result(30)
                out = run(a, link.bootstrap, topic, client, partitions, idem, keyless)
                runs[(client, partitions, idem, keyless)].append(out)
                print(f"{client:>9} p={partitions} idempotent={idem!s:5} keyless={keyless!s:5} #{r + 1}: "
                      f"{out['wall']:.2f} s, {out['requests']} requests; load {os.getloadavg()[0]:.2f}",
                      flush=True)
        del admin
    finally:
        link.stop()
    for (client, partitions, idem, keyless), rs in runs.items():
        wall = statistics.median(x["wall"] for x in rs)
        reqs = [x["requests"] for x in rs if x["requests"] is not None]
        results.append({"client": client, "mode": "idempotent" if idem else "plain", "partitions": partitions,
                        "keyless": keyless, "wall_seconds": round(wall, 3),
                        "round_trips": round(wall / rtt, 1),
                        "requests": statistics.median(reqs) if reqs else None})
    ratios = {}
    for r in results:
        if r["client"] == "ours":
            conf = next((x for x in results if x["client"] == "confluent"
                         and (x["partitions"], x["keyless"]) == (r["partitions"], r["keyless"])), None)
            name = f"p{r['partitions']}_{r['mode']}{'_keyless' if r['keyless'] else ''}"
            if conf is not None:
                ratios[f"{name}_wall_vs_confluent"] = round(r["wall_seconds"] / conf["wall_seconds"], 2)
    keyless = [r for r in results if r["client"] == "ours" and r["keyless"]]
    keyed = [r for r in results if r["client"] == "ours" and r["partitions"] == 6 and not r["keyless"]
             and r["mode"] == "idempotent"]
    if keyless and keyed:
        ratios["p6_idempotent_keyless_vs_partitions"] = round(keyless[0]["wall_seconds"]
                                                              / keyed[0]["wall_seconds"], 2)
    print(json.dumps({"bench": "slow_link", "records": a.records, "value_bytes": a.value_bytes,
                      "delay_ms_each_way": a.delay_ms, "results": results, "ratios": ratios}))


if __name__ == "__main__":
    main()

"""Share group (KIP-932) read throughput: aiokafka_lite's ShareConsumer against confluent-kafka's, in one run.

Brokers: librdkafka's mock cluster, the only broker here with ShareFetch (Tansu and noida-db have none). A
topic of ``--partitions`` partitions is filled with ``--records`` records of ``--size`` bytes before any
reader starts; then each client, in turn and interleaved over ``--rounds`` rounds, joins a share group of
its own (new each round, starting at the earliest record) and reads until it has every record, accepting
them implicitly (both clients' default). Measured per run: records/s from start() to the last record, and
client CPU (this process's CPU time, so both clients' background threads count) per record.

The mock answers ShareFetch at once without waiting (no fetch.wait), serves records only from its memory,
and does no disk I/O; it runs in its own process, so its CPU is not counted. The last line printed is one
JSON object with the medians and ``ours_vs_confluent`` (records/s ratio: above 1 means ours reads faster)
and ``cpu_confluent_vs_ours`` (CPU per record ratio: above 1 means ours spends less).

    python bench/share_consume.py [--records 200000] [--size 100] [--partitions 6] [--rounds 3] [--uvloop]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid

from confluent_kafka import Producer
from confluent_kafka import ShareConsumer as CKShareConsumer

from aiokafka_lite import ShareConsumer
from aiokafka_lite.testing import MockCluster

TIMEOUT = 120.0


def fill(bootstrap: str, topic: str, records: int, size: int, partitions: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1 << 20})
    value = b"x" * size
    for i in range(records):
        while True:
            try:
                p.produce(topic, value, partition=i % partitions)
                break
            except BufferError:
                p.poll(0.05)
    if p.flush(60):
        raise SystemExit("the mock did not take every record")


async def ours(bootstrap: str, topic: str, records: int) -> tuple[float, float]:
    wall, cpu = time.monotonic(), time.process_time()
    got = 0
    async with ShareConsumer(topic, group_id=f"ours-{uuid.uuid4().hex[:8]}", bootstrap_servers=bootstrap,
                             max_poll_records=500) as c:
        deadline = time.monotonic() + TIMEOUT
        while got < records and time.monotonic() < deadline:
            for recs in (await c.poll(timeout_ms=500)).values():
                got += len(recs)
        wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    if got < records:
        raise SystemExit(f"aiokafka_lite read {got} of {records} records in {TIMEOUT:.0f} s")
    return records / wall, cpu / records * 1e6


def confluent(bootstrap: str, topic: str, records: int) -> tuple[float, float]:
    wall, cpu = time.monotonic(), time.process_time()
    got = 0
    c = CKShareConsumer({"bootstrap.servers": bootstrap, "group.id": f"ck-{uuid.uuid4().hex[:8]}"})
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + TIMEOUT
        while got < records and time.monotonic() < deadline:
            got += sum(1 for m in c.poll(0.5) if m.error() is None)
        wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    finally:
        c.close()
    if got < records:
        raise SystemExit(f"confluent-kafka read {got} of {records} records in {TIMEOUT:.0f} s")
    return records / wall, cpu / records * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--uvloop", action="store_true", help="run our client on uvloop")
    args = ap.parse_args()
    runner = asyncio.run
    if args.uvloop:
        import uvloop

        runner = uvloop.run  # type: ignore[assignment]
    mc = MockCluster(1)
    mc.start()
    try:
        mc.set_share_groups(auto_offset_reset="earliest")
        topic = f"share-bench-{uuid.uuid4().hex[:8]}"
        mc.create_topic(topic, args.partitions, 1)
        fill(mc.bootstrap, topic, args.records, args.size, args.partitions)
        res: dict[str, list[tuple[float, float]]] = {"ours": [], "confluent": []}
        for r in range(args.rounds):
            order = ("ours", "confluent") if r % 2 == 0 else ("confluent", "ours")
            for who in order:
                if who == "ours":
                    res[who].append(runner(ours(mc.bootstrap, topic, args.records)))
                else:
                    res[who].append(confluent(mc.bootstrap, topic, args.records))
                rate, cpu = res[who][-1]
                print(f"round {r + 1} {who:9s} {rate:>12,.0f} records/s  {cpu:6.2f} us CPU/record",
                      flush=True)
    finally:
        mc.stop()
    med = {who: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
           for who, v in res.items()}
    out = {"records": args.records, "size": args.size, "partitions": args.partitions, "rounds": args.rounds,
           "uvloop": args.uvloop,
           "ours_records_per_s": round(med["ours"][0]),
           "confluent_records_per_s": round(med["confluent"][0]),
           "ours_cpu_us_per_record": round(med["ours"][1], 3),
           "confluent_cpu_us_per_record": round(med["confluent"][1], 3),
           "ours_vs_confluent": round(med["ours"][0] / med["confluent"][0], 2),
           "cpu_confluent_vs_ours": round(med["confluent"][1] / med["ours"][1], 2)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()

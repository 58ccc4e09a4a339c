"""The produce loop's instructions per record: one JSON line, the figure docs/performance.md uses.

Tansu in its own process, a topic of ``--partitions`` partitions, acks=1, our producer sending ``-n``
records of ``--value-bytes`` (16 distinct random values) with one ``await send(topic, value,
partition=i % partitions)`` each, then ``flush()``. With ``--callgrind`` the loop runs under
``valgrind --tool=callgrind --instr-atstart=no`` and is instrumented (``callgrind_control -i on/off``)
from the first timed ``send()`` to the end of ``flush()`` only: the client's instructions per record,
which repeat within a few per cent on a loaded machine where CPU times move by 30 % (the number of
batches and requests still follows timing; both are printed). Without it: CPU µs per record.

    python bench/produce_cg.py --value-bytes 16384 -n 2000 --batch-size 16384 --linger-ms 5 --callgrind
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
from typing import Any

_CHILD = "_PRODUCE_CG_CHILD"


def _instrument(on: bool) -> None:
    if os.environ.get(_CHILD):
        subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(os.getpid())], check=True,
                       stdout=subprocess.DEVNULL)


async def _loop(args: argparse.Namespace, bootstrap: str, topic: str) -> dict[str, Any]:
    from aiokafka_lite import Producer

    values = [os.urandom(args.value_bytes) for _ in range(16)]
    async with Producer(bootstrap_servers=bootstrap, acks=1, linger_ms=args.linger_ms,
                        batch_size=args.batch_size, max_request_size=4 << 20) as p:
        await p.send_and_wait(topic, b"warm", partition=0)
        m = p._metrics
        batches, requests = m.batches_sent, m.requests
        _instrument(True)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        for i in range(args.n):
            await p.send(topic, values[i & 15], partition=i % args.partitions)
        await p.flush()
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        _instrument(False)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        return {"cpu_us_per_record": round(cpu / args.n * 1e6, 3), "batches": m.batches_sent - batches,
                "requests": m.requests - requests}


def _run(args: argparse.Namespace) -> dict[str, Any]:
    import confluent_kafka.admin

    from aiokafka_lite.embedded import start_broker

    broker = start_broker("tansu")
    try:
        topic = f"produce-cg-{os.getpid()}"
        admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([confluent_kafka.admin.NewTopic(topic, args.partitions, 1)])[topic].result(30)
        return asyncio.run(_loop(args, broker.bootstrap, topic))
    finally:
        broker.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--value-bytes", type=int, default=16384)
    ap.add_argument("--batch-size", type=int, default=16384)
    ap.add_argument("--linger-ms", type=float, default=5)
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--callgrind", action="store_true", help="instructions per record under valgrind")
    args = ap.parse_args()
    line: dict[str, Any] = {"bench": "produce_cg", "value_bytes": args.value_bytes, "records": args.n,
                            "batch_size": args.batch_size, "linger_ms": args.linger_ms}
    if os.environ.get(_CHILD):
        print(json.dumps(_run(args)), flush=True)
        return
    if not args.callgrind:
        print(json.dumps({**line, **_run(args)}))
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        child = subprocess.run(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
             sys.executable, *sys.argv], env={**os.environ, _CHILD: "1"}, capture_output=True, text=True,
            check=True)
        result = json.loads(child.stdout.strip().splitlines()[-1])
        with open(out) as f:
            total = next(int(x.split()[1]) for x in f if x.startswith("totals:"))
    print(json.dumps({**line, "instructions_per_record": total // args.n, **result}))


if __name__ == "__main__":
    main()

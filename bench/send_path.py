"""Micro benchmark of ``send()``'s fast path without a broker: one JSON line of its per-record cost.

A ``SendCore`` (the compiled one, or the pure one under ``AIOKAFKA_LITE_PURE=1``) in front of a real
accumulator, as ``tests/producer/test_send_twins.py`` drives it: ``-n`` records of ``--value-bytes``
(keyless, sticky partition; or ``--keyed``; timestamps from the clock), the batches never sent. With
``-n 0`` only the setup runs, so under ``valgrind --tool=callgrind`` the difference of two runs divided
by ``n`` is the instructions per record (docs/performance.md). Without valgrind it prints ns per record
(best of ``--repeat``).

    python bench/send_path.py -n 20000 [--value-bytes 100] [--keyed] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from aiokafka_lite.producer.accumulator import RecordAccumulator
from aiokafka_lite.producer.core import COMPILED, RUNNING, SendCore, TopicInfo
from aiokafka_lite.producer.memory import MemoryPool
from aiokafka_lite.producer.partitioner import murmur2_partition


def _core(acc: RecordAccumulator) -> Any:
    class Harness(SendCore):  # type: ignore[misc, valid-type]
        async def _send_slow(self, topic: str, value: Any, key: Any, partition: int | None,
                             timestamp_ms: int | None, headers: Any) -> Any:
            n = (len(value) if value is not None else 0) + (len(key) if key is not None else 0)
            ts = timestamp_ms if timestamp_ms is not None else time.time_ns() // 1_000_000
            batch, delta, _ = await acc.append_record(self._topics[topic], partition, ts, key, value,
                                                      headers, n, 1.0)
            return batch.result, delta

    core = Harness()
    core._state, core._size_fast_limit, core._batches = RUNNING, 1 << 20, acc.batches
    core._key_hash, core._sticky_null = murmur2_partition, True
    core._topics["t"] = TopicInfo("t", range(6), range(6))
    return core


async def _run(n: int, value_bytes: int, keyed: bool) -> float:
    loop = asyncio.get_running_loop()
    acc = RecordAccumulator(batch_size=1 << 20, linger_ms=1000, compression=0, pool=MemoryPool(1 << 30),
                            loop=loop, delivery_timeout_ms=60000)
    core = _core(acc)
    value = b"v" * value_bytes
    keys = [b"key-%d" % i for i in range(64)] if keyed else [None] * 64
    send = core.send
    start = time.perf_counter()
    for i in range(n):
        await send("t", value, keys[i & 63])
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-n", type=int, default=20000)
    ap.add_argument("--value-bytes", type=int, default=100)
    ap.add_argument("--keyed", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    best = min(asyncio.run(_run(args.n, args.value_bytes, args.keyed)) for _ in range(args.repeat))
    print(json.dumps({"bench": "send_path", "compiled": COMPILED, "n": args.n,
                      "value_bytes": args.value_bytes,
                      "keyed": args.keyed, "ns_per_record": round(best * 1e9 / max(args.n, 1), 1)}))


if __name__ == "__main__":
    main()

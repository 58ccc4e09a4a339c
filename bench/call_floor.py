"""What one awaited ``send()``-shaped call costs before it does any work: one JSON line.

A loop of ``-n`` iterations as the produce benchmarks run it (``values[i & 15]``, ``partition=i % 6``),
once empty and once awaiting an ``async def`` method with ``send()``'s signature that returns at once.
The difference is the coroutine call's own cost on this machine, below which no ``await send()`` goes
while ``send()`` stays a coroutine function (docs/performance.md, "Where issue 27 stops").

    python bench/call_floor.py [-n 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any


class _Empty:
    async def send(self, topic: str, value: Any = None, key: Any = None, partition: int | None = None,
                   timestamp_ms: int | None = None, headers: Any = None) -> None:
        return None


async def _measure(n: int) -> dict[str, float]:
    producer = _Empty()
    values = [bytes(100)] * 16
    c0 = time.process_time()
    for i in range(n):
        _ = values[i & 15], i % 6
    loop_us = (time.process_time() - c0) / n * 1e6
    send = producer.send
    c0 = time.process_time()
    for i in range(n):
        await send("t", values[i & 15], partition=i % 6)
    await_us = (time.process_time() - c0) / n * 1e6
    return {"loop_us": round(loop_us, 4), "await_empty_send_us": round(await_us, 4),
            "call_us": round(await_us - loop_us, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1_000_000)
    args = ap.parse_args()
    print(json.dumps({"bench": "call_floor", "n": args.n, **asyncio.run(_measure(args.n))}))


if __name__ == "__main__":
    main()

"""``aiokafka-lite bench produce|consume``: a small built-in throughput benchmark.

Deliberately simple (one client, one topic, fixed-size values): it answers "is this setup fast
enough?" from a shell. The comparative benchmarks against peer clients live in ``bench/``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from ..structs import RecordMetadata, TopicPartition
from ._clients import settings, started
from ._commands import Common, command_with_actions, finish
from ._progress import Progress
from ._runtime import CLIError
from ._settings import ACKS, COMPRESSIONS, ROUND_TRIP
from ._work import assign_from, consume_until, topic_for


def register(sub: Any, common: Common) -> None:
    actions = command_with_actions(
        sub, "bench", help="measure produce or consume throughput",
        description="A small throughput benchmark against a running broker.")
    for action, text in (("produce", "time producing N records"),
                         ("consume", "time consuming N records (produced first, untimed)")):
        p = actions.add_parser(action, help=text, description=text.capitalize() + ".")
        p.add_argument("-n", "--num-records", type=int, default=100_000, help="records (default: 100000)")
        p.add_argument("-s", "--size", type=int, default=100, help="value size in bytes (default: 100)")
        p.add_argument("--topic", help="use this topic (created if missing) instead of a temporary one")
        p.add_argument("--partitions", type=int, default=3, help="partitions of a new topic (default: 3)")
        p.add_argument("-z", "--compression", choices=COMPRESSIONS, default=None)
        p.add_argument("-a", "--acks", choices=ACKS, default=None)
        p.add_argument("--timeout", type=float, default=30.0,
                       help="consume: give up when nothing arrives for this long (default: 30)")
        p.add_argument("--json", action="store_true", help="print the figures as one JSON line")
        p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                       help="progress bar on stderr (default: on)")
        finish(p, common, run)


async def send_all(producer: Any, topic: str, n: int, value: bytes,
                   progress: Progress) -> tuple[list[RecordMetadata | BaseException], float]:
    """The timed loop: a plain ``await send()`` per record, the futures awaited once at the end.

    Returns each record's metadata or error, and the seconds from the first send to the end of the
    flush, as ``bench/produce.py`` measures (the producer's start and the topic's metadata are not
    timed). No callback per record: attaching one costs more than the send itself and understated the
    client 5-10x.
    """
    await producer.partitions_for(topic)  # metadata first: not part of the figure
    send = producer.send
    futures = []
    step = max(1, n // 100)
    t0 = time.monotonic()
    for i in range(1, n + 1):
        futures.append(await send(topic, value))
        if i % step == 0:
            progress.update(step)
    await producer.flush()
    elapsed = time.monotonic() - t0
    progress.update(n - n // step * step)
    return list(await asyncio.gather(*futures, return_exceptions=True)), elapsed


async def run(args: argparse.Namespace) -> int:
    n = args.num_records
    if n < 1 or args.size < 0 or args.partitions < 1:
        raise CLIError("-n and --partitions must be at least 1 and --size at least 0", code=2)
    kw = settings(args, ROUND_TRIP, {"compression_type": args.compression, "acks": args.acks})
    value = b"x" * args.size

    from ..consumer import Consumer
    from ..producer import Producer

    timed = args.action == "produce"
    async with topic_for(args, kw["admin"], "aiokafka-lite-bench", args.topic, args.partitions,
                         keep=False) as topic:
        progress = Progress("produce" if timed else "prefill", n, enabled=args.progress)
        try:
            async with started(Producer(**kw["producer"]), args, "producer") as producer:
                results, elapsed = await send_all(producer, topic, n, value, progress)
        finally:
            progress.close()
        failed = [r for r in results if not isinstance(r, RecordMetadata)]
        if failed:
            raise CLIError(f"{len(failed)} of {n} records failed; first error: {failed[0]}")
        if not timed:
            starts: dict[TopicPartition, int] = {}
            for md in results:
                assert isinstance(md, RecordMetadata)
                tp = TopicPartition(topic, md.partition)
                starts[tp] = min(starts.get(tp, md.offset), md.offset)
            consumer_kw = dict(kw["consumer"])
            consumer_kw.pop("group_id", None)
            progress = Progress("consume", n, enabled=args.progress)
            try:
                async with started(Consumer(**consumer_kw), args, "consumer") as consumer:
                    await assign_from(consumer, starts)
                    t0 = time.monotonic()
                    got = await consume_until(consumer, lambda r: True, n, progress, args.timeout)
                    elapsed = time.monotonic() - t0
            finally:
                progress.close()
            if got < n:
                raise CLIError(f"consumed only {got} of {n} records (nothing new for {args.timeout:g} s)")
    total_bytes = n * args.size
    figures = {"op": args.action, "records": n, "value_bytes": args.size, "seconds": round(elapsed, 4),
               "records_per_s": round(n / elapsed, 1), "mb_per_s": round(total_bytes / elapsed / 1e6, 3),
               "compression": args.compression or kw["producer"].get("compression_type") or "none"}
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"{args.action}: {n} records x {args.size} B in {elapsed:.2f} s: "
              f"{figures['records_per_s']:,.0f} records/s, {figures['mb_per_s']:.2f} MB/s", file=sys.stdout)
    return 0

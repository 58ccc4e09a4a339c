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
from ._commands import Action, Command, arg, load_options
from ._progress import Progress
from ._runtime import CLIError
from ._settings import ROUND_TRIP
from ._work import assign_from, consume_until, topic_for


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


def _bench_action(name: str, text: str) -> Action:
    return Action(name, run, text, json="print the figures as one JSON line", args=(
        *load_options(100_000, "records", partitions_help="partitions of a new topic", timeout=30.0,
                      timeout_help="consume: give up when nothing arrives for this long (default: 30)"),
        arg("--progress", action=argparse.BooleanOptionalAction, default=True,
            help="progress bar on stderr (default: on)"),
    ))


COMMANDS = (Command("bench", "measure produce or consume throughput",
                    "A small throughput benchmark against a running broker.", actions=(
                        _bench_action("produce", "time producing N records"),
                        _bench_action("consume", "time consuming N records (produced first, untimed)"))),)

"""``aiokafka-lite stats produce|consume TOPIC``: the client's Java-named metrics, live.

Produces (fixed-size values) or consumes (from the beginning, no group) while printing the
client's metrics every ``--interval`` seconds, then once more at the end. Rates use a 1 s sample
window here (``-X metrics.sample.window.ms=...`` changes it) so they follow the traffic closely.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from ..structs import TopicPartition
from ._clients import settings, started
from ._commands import Action, Command, arg
from ._progress import Progress
from ._runtime import CLIError
from ._settings import ROUND_TRIP
from ._work import consume_until


def _show(entries: list[dict[str, Any]], args: argparse.Namespace, label: str) -> None:
    shown = [e for e in entries if args.match in f"{e['group']}/{e['name']}"]
    if args.json:
        print(json.dumps({"at": label, "metrics": shown}), flush=True)
        return
    print(f"-- {label}")
    for e in shown:
        tags = ",".join(f"{k}={v}" for k, v in e["tags"].items() if k != "client-id")
        value = e["value"]
        text = "-" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)
        print(f"{e['group']:<32} {e['name'] + (f'{{{tags}}}' if tags else ''):<48} {text}")
    sys.stdout.flush()


async def _report_while(client: Any, work: asyncio.Task[Any], args: argparse.Namespace) -> Any:
    t0 = time.monotonic()
    while not work.done():
        await asyncio.wait([work], timeout=args.interval)
        if not work.done():
            _show(client.metrics(tagged=True), args, f"{time.monotonic() - t0:.1f} s")
    result = work.result()
    _show(client.metrics(tagged=True), args, "final")
    return result


async def run(args: argparse.Namespace) -> int:
    n = args.num_records
    if n < 1 or args.size < 0 or args.interval <= 0:
        raise CLIError("-n must be at least 1, --size at least 0 and --interval above 0", code=2)
    kw = settings(args, ROUND_TRIP)
    from ..consumer import Consumer
    from ..producer import Producer

    if args.action == "produce":
        pkw = {"metrics_sample_window_ms": 1000, **kw["producer"]}
        async with started(Producer(**pkw), args, "producer") as producer:
            value = b"x" * args.size

            async def produce() -> None:
                for _ in range(n):
                    await producer.send(args.topic, value)
                await producer.flush()

            await _report_while(producer, asyncio.ensure_future(produce()), args)
            failed = producer.metrics()["record-error-total"]
        if failed:
            raise CLIError(f"{failed} of {n} records failed")
        return 0
    ckw = {"metrics_sample_window_ms": 1000, **kw["consumer"], "auto_offset_reset": "earliest"}
    ckw.pop("group_id", None)
    async with started(Consumer(**ckw), args, "consumer") as consumer:
        parts = consumer.partitions_for_topic(args.topic)
        if not parts:
            raise CLIError(f"topic {args.topic!r} not found")
        tps = [TopicPartition(args.topic, p) for p in sorted(parts)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        progress = Progress("consume", n, enabled=False)
        work = asyncio.ensure_future(consume_until(consumer, lambda r: True, n, progress, args.timeout))
        got = await _report_while(consumer, work, args)
    if got < n:
        raise CLIError(f"consumed only {got} of {n} records (nothing new for {args.timeout:g} s)")
    return 0


def _stats_action(name: str, text: str) -> Action:
    return Action(name, run, text, json="print each snapshot as one JSON line", args=(
        arg("topic"),
        arg("-n", "--num-records", type=int, default=10_000, help="records (default: 10000)"),
        arg("-s", "--size", type=int, default=100, help="produce: value size (default: 100)"),
        arg("--interval", type=float, default=1.0, help="seconds between prints (default: 1)"),
        arg("--match", default="", help="show only metrics whose group/name contains this"),
        arg("--timeout", type=float, default=10.0,
            help="consume: give up when nothing arrives for this long (default: 10)"),
    ))


COMMANDS = (Command("stats", "show a client's metrics live while producing or consuming",
                    "Produce or consume and print the client's metrics (Java's names).", actions=(
                        _stats_action("produce", "produce N records, showing the producer's metrics"),
                        _stats_action("consume", "consume N records from the beginning, showing the "
                                                 "consumer's metrics"))),)

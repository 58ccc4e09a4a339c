"""``aiokafka-lite smoke``: produce N records and read them back; exit 0 only if every one returned.

Each record carries this run's id and its index, so the check is exact: every index must come back
once, with its value intact, at the offset the broker acknowledged.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..structs import RecordMetadata, TopicPartition
from ._clients import CLI_SESSION_TIMEOUT_MS, bootstrap, settings, started
from ._commands import Action, arg, load_options
from ._progress import Progress
from ._runtime import CLIError
from ._settings import ROUND_TRIP
from ._work import assign_from, consume_until, produce_n, run_id, topic_for


async def run(args: argparse.Namespace) -> int:
    n = args.num_records
    if n < 1 or args.size < 0 or args.partitions < 1:
        raise CLIError("-n and --partitions must be at least 1 and --size at least 0", code=2)
    if args.acks == "0":
        raise CLIError("--acks 0 gives no offsets to check; use 1 or all", code=2)
    kw = settings(args, ROUND_TRIP, {"compression_type": args.compression, "acks": args.acks})
    show = sys.stderr.isatty() if args.progress is None else args.progress
    rid = run_id()
    pad = b"x" * args.size

    def make(i: int) -> tuple[bytes | None, bytes]:
        head = f"{rid}:{i}:".encode()
        return f"{rid}-{i}".encode(), (head + pad)[:max(args.size, len(head))]

    from ..consumer import Consumer
    from ..producer import Producer

    async with topic_for(args, kw["admin"], "aiokafka-lite-smoke", args.topic, args.partitions,
                         args.keep_topic) as topic:
        t0 = time.monotonic()
        progress = Progress("produce", n, enabled=show)
        try:
            async with started(Producer(**kw["producer"]), args, "producer") as producer:
                results = await produce_n(producer, topic, n, make, progress)
        finally:
            progress.close()
        t_produce = time.monotonic() - t0
        failures = [r for r in results if not isinstance(r, RecordMetadata)]
        if failures:
            raise CLIError(f"smoke FAILED: {len(failures)} of {n} records were not acknowledged by "
                           f"{bootstrap(args)}; first error: {failures[0]}")
        acked: dict[tuple[int, int], int] = {}
        starts: dict[TopicPartition, int] = {}
        for i, md in enumerate(results):
            assert isinstance(md, RecordMetadata)
            acked[(md.partition, md.offset)] = i
            tp = TopicPartition(topic, md.partition)
            starts[tp] = min(starts.get(tp, md.offset), md.offset)

        seen: dict[int, int] = {}
        bad: list[str] = []

        def want(record: Any) -> bool:
            i = acked.get((record.partition, record.offset))
            if i is None:
                return False  # someone else's record on a shared --topic
            key, value = make(i)
            if record.key != key or record.value != value:
                bad.append(f"record #{i} at {record.partition}/{record.offset} came back altered")
                return False
            seen[i] = seen.get(i, 0) + 1
            return seen[i] == 1

        consumer_kw = dict(kw["consumer"])
        consumer_kw.setdefault("session_timeout_ms", CLI_SESSION_TIMEOUT_MS)  # see cmd_consume
        t1 = time.monotonic()
        progress = Progress("consume", n, enabled=show)
        try:
            if args.group:
                consumer_kw.update(group_id=args.group, auto_offset_reset="earliest")
                consumer = Consumer(topic, **consumer_kw)
            else:
                consumer_kw.pop("group_id", None)
                consumer = Consumer(**consumer_kw)
            async with started(consumer, args, "consumer"):
                if not args.group:
                    await assign_from(consumer, starts)
                got = await consume_until(consumer, want, n, progress, args.timeout)
                if args.group and got:
                    await consumer.commit()
        finally:
            progress.close()
        t_consume = time.monotonic() - t1

    dupes = sum(1 for c in seen.values() if c > 1)
    if bad:
        raise CLIError(f"smoke FAILED: {len(bad)} records came back altered; first: {bad[0]}")
    if got < n:
        missing = [i for i in range(n) if i not in seen]
        raise CLIError(f"smoke FAILED: {got} of {n} records came back from {topic} "
                       f"(nothing new for {args.timeout:g} s); first missing: #{missing[0]}")
    print(f"smoke OK: {n}/{n} records round-tripped through {topic} on {bootstrap(args)} "
          f"(produce {t_produce:.2f} s, consume {t_consume:.2f} s"
          + (f", {dupes} duplicates ignored" if dupes else "") + ")")
    return 0


COMMANDS = (Action(
    "smoke", run, "a produce-consume round trip; exit 0 only if every record came back",
    "Produce N records to a fresh topic (or --topic), read them back and check each one arrived intact at "
    "the offset the broker acknowledged. Exit 0 only if all did.", args=(
        *load_options(1000, "records to round-trip", partitions_help="partitions of the temporary topic",
                      timeout=30.0,
                      timeout_help="give up when no record arrives for this long (default: 30)"),
        arg("-g", "--group", help="read back through this consumer group instead of direct assignment"),
        arg("--keep-topic", action="store_true", help="do not delete the temporary topic"),
        arg("--progress", action=argparse.BooleanOptionalAction, default=None,
            help="progress bars on stderr (default: when stderr is a terminal)"),
    )),)

"""``aiokafka-lite consume TOPIC``: print records, with or without a consumer group."""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from contextlib import AsyncExitStack
from collections.abc import Callable
from typing import Any

from .. import errors
from ..structs import TopicPartition
from ._clients import CLI_SESSION_TIMEOUT_MS, settings, started
from ._format import RecordFormatter
from ._runtime import CLIError, StopSignal, race
from ._offsets import end_offsets
from ._settings import ADMIN, CONSUMER


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "consume", help="print records of a topic",
        description="Print records of TOPIC, one per line. Without --group every partition is read "
                    "directly; with --group the consumer joins the group and commits what it printed.")
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("-g", "--group", help="consumer group id (group.id)")
    p.add_argument("--from-beginning", action="store_true",
                   help="start at the earliest offset when nothing is committed (auto.offset.reset=earliest)")
    p.add_argument("-p", "--partition", type=int, action="append", default=None,
                   help="read only this partition (without --group); repeatable")
    p.add_argument("-n", "--max-messages", type=int, default=None, metavar="N",
                   help="exit after N records; fails if they do not arrive within --timeout")
    p.add_argument("-e", "--exit-at-end", action="store_true",
                   help="exit once every assigned partition is read to the end offset it had at start")
    p.add_argument("-t", "--timeout", type=float, default=None, metavar="SECONDS",
                   help="exit when no record arrives for this long (default: wait for ever; "
                        "30 with -n)")
    p.add_argument("-F", "--format", default="{value}",
                   help=r"'json' or a template over {topic} {partition} {offset} {timestamp} "
                        r"{timestamp_type} {key} {value} {headers} {key_size} {value_size}; "
                        r"\t and \n work (default: {value})")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    common(p)
    p.set_defaults(handler=run)


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _assign_all(consumer: Any, topic: str, only: list[int] | None, from_beginning: bool) -> None:
    parts = await _maybe(consumer.partitions_for_topic(topic))
    if not parts:
        raise CLIError(f"topic {topic!r} does not exist (or has no partitions)")
    chosen = sorted(parts)
    if only:
        missing = sorted(set(only) - set(chosen))
        if missing:
            raise CLIError(f"topic {topic!r} has no partition {missing[0]} (it has {len(chosen)})")
        chosen = sorted(set(only))
    tps = [TopicPartition(topic, p) for p in chosen]
    consumer.assign(tps)
    if from_beginning:
        await _maybe(consumer.seek_to_beginning(*tps))
    else:
        await _maybe(consumer.seek_to_end(*tps))


async def run(args: argparse.Namespace) -> int:
    if args.max_messages is not None and args.max_messages < 1:
        raise CLIError("-n/--max-messages must be at least 1", code=2)
    if args.partition and args.group:
        raise CLIError("--partition reads partitions directly; it cannot go with --group", code=2)
    formatter = RecordFormatter(args.format)
    overrides: dict[str, Any] = {"group_id": args.group}
    if args.from_beginning:
        overrides["auto_offset_reset"] = "earliest"
    tables = settings(args, CONSUMER + ADMIN, overrides)
    kwargs, admin_kw = tables["consumer"], tables["admin"]
    # A short session keeps an interactive join quick: Tansu, for one, holds the first JoinGroup for half
    # the session timeout waiting for more members (22 s at Kafka's 45 s default). -X overrides it.
    kwargs.setdefault("session_timeout_ms", CLI_SESSION_TIMEOUT_MS)
    if args.group and "enable_auto_commit" not in kwargs:
        kwargs["enable_auto_commit"] = False  # we commit exactly what was printed, at the end
    idle = args.timeout if args.timeout is not None else (30.0 if args.max_messages else None)

    from ..admin import Admin
    from ..consumer import Consumer

    consumer = Consumer(args.topic, **kwargs) if args.group else Consumer(**kwargs)
    out = sys.stdout.buffer
    count = 0
    reason = "done"
    ends: dict[TopicPartition, int] = {}
    with StopSignal() as stop:
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(started(consumer, args, "consumer"))
            if not args.group:
                await _assign_all(consumer, args.topic, args.partition, args.from_beginning)
            admin = await stack.enter_async_context(started(Admin(**admin_kw), args, "admin")) \
                if args.exit_at_end else None
            last = time.monotonic()
            while args.max_messages is None or count < args.max_messages:
                if args.exit_at_end and await _at_end(consumer, admin, ends):
                    reason = "end"
                    break
                wait = 0.5 if idle is None else max(0.0, min(0.5, idle - (time.monotonic() - last)))
                want = None if args.max_messages is None else args.max_messages - count
                finished, batch = await race(consumer.poll(timeout_ms=int(wait * 1000), max_records=want),
                                             stop)
                if not finished:
                    reason = "signal"
                    break
                got = 0
                for records in (batch or {}).values():
                    for record in records:
                        out.write(formatter(record))
                        got += 1
                if got:
                    out.flush()
                    count += got
                    last = time.monotonic()
                elif idle is not None and time.monotonic() - last >= idle:
                    reason = "timeout"
                    break
            if args.group and count and not kwargs.get("enable_auto_commit"):
                try:
                    await consumer.commit()
                except errors.KafkaError as exc:
                    raise CLIError(f"printed {count} records but could not commit them: {exc}") from exc
    if not args.quiet:
        print(f"consumed {count} records from {args.topic}", file=sys.stderr)
    if args.max_messages is not None and count < args.max_messages:
        if reason == "signal":
            return 130
        raise CLIError(f"got {count} of {args.max_messages} records from {args.topic} "
                       f"(nothing new for {idle:g} s)")
    return 0


async def _at_end(consumer: Any, admin: Any, ends: dict[TopicPartition, int]) -> bool:
    """True once every assigned partition's position reached its end offset when first seen."""
    assigned = list(consumer.assignment())
    if not assigned:
        return False
    new = [tp for tp in assigned if tp not in ends]
    if new:
        ends.update(await end_offsets(admin, new))  # the true ends, even on Tansu
    for tp in assigned:
        if await _maybe(consumer.position(tp)) < ends[tp]:
            return False
    return True

"""``aiokafka-lite consume TOPIC``: print records, with or without a consumer group."""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

from .. import errors
from ..structs import TopicPartition
from ._clients import CLI_SESSION_TIMEOUT_MS, settings, started
from ._commands import Action, OneOf, arg, partitions
from ._format import DelimitedFormatter, KcatFormatter, RecordFormatter, json_envelope
from ._offsets import end_offsets
from ._runtime import CLIError, StopSignal, race
from ._settings import ADMIN, CONSUMER, SHARE_CONSUMER


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def parse_offset(spec: str | None) -> tuple[str, int]:
    """``-o``: ("beginning"|"end", 0), ("offset", N), ("tail", N) for -N, or ("time", ms)."""
    if spec is None or spec == "end":
        return "end", 0
    if spec == "beginning":
        return "beginning", 0
    try:
        if spec.startswith("s@"):
            ms = int(spec[2:])
            if ms >= 0:
                return "time", ms
        else:
            n = int(spec)
            return ("tail", -n) if spec.startswith("-") else ("offset", n)
    except ValueError:
        pass
    raise CLIError(f"bad -o {spec!r}: use beginning, end, N, -N or s@<timestamp in ms>", code=2)


async def _assign_all(consumer: Any, admin: Any, topics: list[str], only: list[int] | None,
                      start: tuple[str, int]) -> None:
    tps: list[TopicPartition] = []
    for topic in topics:
        parts = await _maybe(consumer.partitions_for_topic(topic))
        if not parts:
            raise CLIError(f"topic {topic!r} does not exist (or has no partitions)")
        chosen = sorted(parts)
        if only:
            missing = sorted(set(only) - set(chosen))
            if missing:
                raise CLIError(f"topic {topic!r} has no partition {missing[0]} (it has {len(chosen)})")
            chosen = sorted(set(only))
        tps.extend(TopicPartition(topic, p) for p in chosen)
    consumer.assign(tps)
    how, n = start
    if how == "beginning":
        await _maybe(consumer.seek_to_beginning(*tps))
        return
    if how == "offset":
        for tp in tps:
            consumer.seek(tp, n)
        return
    ends = await end_offsets(admin, tps)  # the true ends (Tansu's ListOffsets latest falls short)
    if how == "end":
        for tp in tps:
            consumer.seek(tp, ends[tp])
    elif how == "tail":
        firsts = await _maybe(consumer.beginning_offsets(tps))
        for tp in tps:
            consumer.seek(tp, max(firsts[tp], ends[tp] - n))
    else:  # time
        found = await _maybe(consumer.offsets_for_times({tp: n for tp in tps}))
        for tp in tps:
            hit = found.get(tp)
            consumer.seek(tp, ends[tp] if hit is None else hit.offset)


def _formatter(args: argparse.Namespace) -> Callable[[Any], bytes]:
    if args.json_envelope:
        return json_envelope
    if args.kcat_format is not None:
        return KcatFormatter(args.kcat_format, null=args.null)
    if args.format is not None:
        return RecordFormatter(args.format)
    return DelimitedFormatter(delimiter=args.delimiter, key_delimiter=args.key_delimiter, null=args.null)


def _check_args(args: argparse.Namespace) -> tuple[str, int]:
    """Refuse option combinations that say different things; return where to start (parse_offset)."""
    if args.partition and args.group:
        raise CLIError("--partition reads partitions directly; it cannot go with --group", code=2)
    if args.from_beginning and args.offset not in (None, "beginning"):
        raise CLIError("--from-beginning and -o say different things; give one", code=2)
    start = parse_offset("beginning" if args.from_beginning else args.offset)
    if args.group and start[0] not in ("beginning", "end"):
        raise CLIError("with --group, -o takes beginning or end (where partitions without a committed "
                       "offset start); move a group's offsets with `groups reset-offsets`", code=2)
    custom = args.json_envelope or args.kcat_format is not None or args.format is not None
    if custom and (args.key_delimiter is not None or args.delimiter != "\\n"):
        raise CLIError("-K and -D shape the default output; with -f write them into the format", code=2)
    if args.group_protocol is not None and not args.group:
        raise CLIError("--group-protocol needs --group", code=2)
    return start


def _consumer_settings(args: argparse.Namespace, start: tuple[str, int]
                       ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The consumer's and the admin client's keyword settings."""
    overrides: dict[str, Any] = {"group_id": args.group, "group_protocol": args.group_protocol}
    if args.group and start[0] == "beginning":
        overrides["auto_offset_reset"] = "earliest"
    elif args.group and args.offset == "end":
        overrides["auto_offset_reset"] = "latest"
    tables = settings(args, CONSUMER + ADMIN, overrides)
    kwargs, admin_kw = tables["consumer"], tables["admin"]
    # A short session keeps an interactive join quick: Tansu, for one, holds the first JoinGroup for half
    # the session timeout waiting for more members (22 s at Kafka's 45 s default). -X overrides it.
    if kwargs.get("group_protocol") != "consumer":  # KIP-848: the broker owns the session timeout
        kwargs.setdefault("session_timeout_ms", CLI_SESSION_TIMEOUT_MS)
    if args.group and "enable_auto_commit" not in kwargs:
        kwargs["enable_auto_commit"] = False  # we commit exactly what was printed, at the end
    return kwargs, admin_kw


def _idle(args: argparse.Namespace) -> float | None:
    """Seconds without a record after which to stop (None: never)."""
    return args.timeout if args.timeout is not None else (30.0 if args.max_messages else None)


async def _print_records(consumer: Any, args: argparse.Namespace, formatter: Callable[[Any], bytes],
                         stop: Any, at_end: Callable[[], Any] | None = None) -> tuple[int, str]:
    """Poll and print until -n records, -t of silence, the end (-e) or a signal: (count, why it ended)."""
    out = sys.stdout.buffer
    idle = _idle(args)
    count = 0
    last = time.monotonic()
    while args.max_messages is None or count < args.max_messages:
        if at_end is not None and await at_end():
            return count, "end"
        wait = 0.5 if idle is None else max(0.0, min(0.5, idle - (time.monotonic() - last)))
        want = None if args.max_messages is None else args.max_messages - count
        finished, batch = await race(consumer.poll(timeout_ms=int(wait * 1000), max_records=want), stop)
        if not finished:
            return count, "signal"
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
            return count, "timeout"
    return count, "done"


def _summary(args: argparse.Namespace, topics: list[str], count: int, reason: str, what: str = "") -> int:
    names = ", ".join(topics)
    if not args.quiet:
        print(f"consumed {count} records from {names}{what}", file=sys.stderr)
    if args.max_messages is not None and count < args.max_messages:
        if reason == "signal":
            return 130
        raise CLIError(f"got {count} of {args.max_messages} records from {names} "
                       f"(nothing new for {_idle(args):g} s)")
    return 0


async def run(args: argparse.Namespace) -> int:
    if args.max_messages is not None and args.max_messages < 1:
        raise CLIError("-n/--max-messages must be at least 1", code=2)
    if args.share_group is not None:
        return await _run_share(args)
    start = _check_args(args)
    topics = list(dict.fromkeys(args.topics))
    formatter = _formatter(args)
    kwargs, admin_kw = _consumer_settings(args, start)

    from ..admin import Admin
    from ..consumer import Consumer

    consumer = Consumer(*topics, **kwargs) if args.group else Consumer(**kwargs)
    ends: dict[TopicPartition, int] = {}
    with StopSignal() as stop:
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(started(consumer, args, "consumer"))
            admin = await stack.enter_async_context(started(Admin(**admin_kw), args, "admin"))
            if not args.group:
                await _assign_all(consumer, admin, topics, args.partition, start)
            at_end = (lambda: _at_end(consumer, admin, ends)) if args.exit_at_end else None
            count, reason = await _print_records(consumer, args, formatter, stop, at_end)
            if args.group and count and not kwargs.get("enable_auto_commit"):
                try:
                    await consumer.commit()
                except errors.KafkaError as exc:
                    raise CLIError(f"printed {count} records but could not commit them: {exc}") from exc
    return _summary(args, topics, count, reason)


async def _run_share(args: argparse.Namespace) -> int:
    """``--share-group``: print what the share group hands this member; each record is accepted once it is
    printed (implicit acknowledgement), and what is left unprinted goes back to the group on exit."""
    clash = [flag for flag, given in (("--group", args.group), ("--group-protocol", args.group_protocol),
                                      ("-o", args.offset), ("--from-beginning", args.from_beginning),
                                      ("--partition", args.partition), ("-e", args.exit_at_end)) if given]
    if clash:
        raise CLIError(f"{clash[0]} does not apply to --share-group (the share group decides what each "
                       f"member reads, from where the group is)", code=2)
    topics = list(dict.fromkeys(args.topics))
    formatter = _formatter(args)
    kwargs = settings(args, SHARE_CONSUMER, {"group_id": args.share_group})["share_consumer"]

    from ..consumer.share_consumer import ShareConsumer

    consumer: ShareConsumer[Any, Any] = ShareConsumer(*topics, **kwargs)
    with StopSignal() as stop:
        async with started(consumer, args, "share consumer"):
            count, reason = await _print_records(consumer, args, formatter, stop)
            failed = await consumer.commit()
            if failed:
                tp, exc = next(iter(failed.items()))
                raise CLIError(f"printed {count} records but the broker did not take the acknowledgement of "
                               f"{tp.topic}[{tp.partition}]: {exc}")
    return _summary(args, topics, count, reason, f" (share group {args.share_group})")


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


COMMANDS = (Action(
    "consume", run, "print records of a topic",
    "Print records of TOPIC, one per line. Without --group every partition is read directly; with --group "
    "the consumer joins the group and commits what it printed.", args=(
        arg("topics", nargs="+", metavar="TOPIC", help="one or more topics"),
        arg("-g", "--group", help="consumer group id (group.id)"),
        arg("--share-group", metavar="NAME", default=None,
            help="read as a member of share group NAME (KIP-932 queues; needs Kafka 4.1+): records are "
                 "shared out one by one among the group's members and accepted once printed"),
        arg("--group-protocol", choices=("classic", "consumer"), default=None,
            help="with --group: 'classic' (the default) or 'consumer' (KIP-848, the broker assigns; needs "
                 "Kafka 4.0+)"),
        arg("-o", "--offset", default=None, metavar="SPEC",
            help="where to start: beginning, end (the default), N (that offset), -N (N before the end), s@MS "
                 "(the first record at or after that timestamp in ms); with --group only beginning or end, "
                 "for partitions without a committed offset"),
        arg("--from-beginning", action="store_true",
            help="same as -o beginning (auto.offset.reset=earliest with --group)"),
        partitions("read only this partition (without --group); repeatable"),
        arg("-n", "--max-messages", "-c", type=int, default=None, metavar="N",
            help="exit after N records; fails if they do not arrive within --timeout"),
        arg("-e", "--exit-at-end", action="store_true",
            help="exit once every assigned partition is read to the end offset it had at start"),
        arg("-t", "--timeout", type=float, default=None, metavar="SECONDS",
            help="exit when no record arrives for this long (default: wait for ever; 30 with -n)"),
        OneOf((
            arg("-F", "--format", default=None,
                help=r"'json' or a template over {topic} {partition} {offset} {timestamp} {timestamp_type} "
                     r"{key} {value} {headers} {key_size} {value_size}; \t and \n work (default: {value})"),
            arg("-f", dest="kcat_format", default=None, metavar="FMT",
                help=r"kcat's format: %%t topic, %%p partition, %%o offset, %%k key, %%s value, "
                     r"%%T timestamp, %%h headers, %%S value size, %%K key size, %%%% a %%; \n \t work; "
                     r"nothing is added after a record (end FMT with \n)"),
            arg("-J", "--json-envelope", action="store_true",
                help="kcat's JSON envelope per record: topic, partition, offset, tstype, ts, headers, key, "
                     "payload"),
        )),
        arg("-K", "--key-delimiter", default=None, metavar="DELIM",
            help=r"print the key, DELIM, then the value (default output only; \t works)"),
        arg("-D", "--delimiter", default="\\n", metavar="DELIM",
            help=r"written after each record in the default output (default: \n)"),
        arg("-Z", "--null", action="store_true",
            help="print a missing (NULL) key or value as NULL instead of nothing"),
        arg("-q", "--quiet", action="store_true", help="no summary line on stderr"),
    )),)

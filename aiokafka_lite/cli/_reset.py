"""``groups reset-offsets`` and ``share-groups reset-offsets``: one set of options, one planner.

A classic group's committed offsets and a share group's start offsets move by the same rules; they
differ only in how offsets are read and written (the commands do that) and in two options: a classic
group may ``--shift-by`` its committed offsets and keeps ``--to-offset`` within the log, while a share
group's start offset is set as given.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

from ..structs import TopicPartition
from ._clients import admin_for, print_table, started
from ._commands import GROUP, Arg, OneOf, arg, partitions
from ._offsets import end_offsets
from ._runtime import CLIError


def reset_arguments(*, all_topics_help: str, to_offset_help: str, execute_help: str,
                    shift_by: bool) -> tuple[Arg | OneOf, ...]:
    """GROUP, which partitions (--topic/--all-topics, -p), where to (--to-*), and --dry-run/--execute."""
    shift = (arg("--shift-by", type=int, metavar="N", help="the committed offset plus N (may be negative)"),)
    return (
        GROUP,
        OneOf((arg("--topic", action="append", default=None, metavar="TOPIC",
                   help="a topic whose partitions to move; repeatable"),
               arg("--all-topics", action="store_true", help=all_topics_help)), required=True),
        partitions(),
        OneOf((arg("--to-earliest", action="store_true", help="the first offset still in the log"),
               arg("--to-latest", action="store_true", help="the end of the log"),
               arg("--to-offset", type=int, metavar="N", help=to_offset_help),
               *(shift if shift_by else ()),
               arg("--to-datetime", metavar="WHEN", help="the first record at or after WHEN: ms since the "
                                                         "epoch or ISO 8601 (2026-11-23T20:00:00Z)")),
              required=True),
        OneOf((arg("--dry-run", action="store_true", help="only print the new offsets (the default)"),
               arg("--execute", action="store_true", help=execute_help))),
    )


async def plan_reset(admin: Any, args: argparse.Namespace, current: dict[TopicPartition, int],
                     when: int | None, none_message: str, *,
                     clamp_to_offset: bool) -> dict[TopicPartition, int]:
    """The partitions the options name and the new offset of each; offsets from the log stay within it.

    ``current`` is the group's offset per partition (``--all-topics`` takes its partitions, ``--shift-by``
    adds to it); ``when`` is ``--to-datetime`` parsed (before connecting, so a bad one fails fast);
    ``none_message`` is the error when ``--all-topics`` finds none.
    """
    from .cmd_metadata import partitions_of

    if args.all_topics:
        tps = sorted(tp for tp in current if not args.partition or tp.partition in args.partition)
        if not tps:
            raise CLIError(none_message)
    else:
        tps = await partitions_of(admin, list(dict.fromkeys(args.topic)), args.partition)
    if args.to_offset is not None and not clamp_to_offset:
        return {tp: args.to_offset for tp in tps}
    if args.to_latest:
        return await end_offsets(admin, tps)
    firsts = {tp: r.offset for tp, r in (await admin.list_offsets({tp: "earliest" for tp in tps})).items()}
    if args.to_earliest:
        return firsts
    ends = await end_offsets(admin, tps)
    shift = getattr(args, "shift_by", None)
    if args.to_offset is not None:
        wanted = dict.fromkeys(tps, args.to_offset)
    elif shift is not None:
        missing = [tp for tp in tps if tp not in current]
        if missing:
            raise CLIError(f"--shift-by: group {args.group!r} has no committed offset for "
                           f"{missing[0].topic}-{missing[0].partition}")
        wanted = {tp: current[tp] + shift for tp in tps}
    else:
        at = {tp: r.offset for tp, r in (await admin.list_offsets({tp: when for tp in tps})).items()}
        wanted = {tp: at[tp] if at[tp] >= 0 else ends[tp] for tp in tps}
    return {tp: min(max(wanted[tp], firsts[tp]), ends[tp]) for tp in tps}


@dataclass(frozen=True)
class GroupKind:
    """What differs between moving a consumer group's committed offsets and a share group's start offsets:
    the words, and the Admin calls (by name) that read the offsets, describe the group and write the new
    offsets."""

    name: str  # "group" / "share group"
    member: str  # what a member is called ("active member")
    offsets: str  # what the offsets are called ("committed offsets")
    dry_run: str  # the note after a dry run ("nothing committed; add --execute to commit these offsets")
    #: --to-offset is kept within the log (a consumer group), or taken as given (a share group).
    clamp_to_offset: bool
    list_call: str  # admin.list_consumer_group_offsets(group)
    describe_call: str  # admin.describe_groups([group])
    alter_call: str  # admin.alter_consumer_group_offsets(group, offsets)
    #: The --json lines name the group (``{"group": ...}`` first).
    json_names_group: bool = False


async def reset_offsets(args: argparse.Namespace, kind: GroupKind) -> int:
    """``reset-offsets``: compute the new offsets, print them, and with --execute (no members) write them."""
    from .cmd_metadata import parse_time

    when = parse_time(args.to_datetime) if args.to_datetime is not None else None
    if not kind.clamp_to_offset and args.to_offset is not None and args.to_offset < 0:
        raise CLIError(f"--to-offset must be >= 0, got {args.to_offset}", code=2)
    who = f"{kind.name} {args.group!r}"
    async with started(admin_for(args), args, "admin") as admin:
        listed = await getattr(admin, kind.list_call)(args.group)
        current = {tp: om.offset for tp, om in listed.items() if om.offset >= 0}
        new = await plan_reset(admin, args, current, when, f"{who} has no {kind.offsets}",
                               clamp_to_offset=kind.clamp_to_offset)
        if args.execute:
            (d,) = await getattr(admin, kind.describe_call)([args.group])
            if d.members:
                raise CLIError(f"{who} has {len(d.members)} {kind.member}(s) (state {d.state}); "
                               "stop them before resetting its offsets")
            await getattr(admin, kind.alter_call)(args.group, new)
    print_plan(args, current, new, f"dry run: {kind.dry_run} for {args.group}",
               **({"group": args.group} if kind.json_names_group else {}))
    return 0


def print_plan(args: argparse.Namespace, current: dict[TopicPartition, int], new: dict[TopicPartition, int],
               dry_run_message: str, **json_first: Any) -> None:
    """The plan as a table (or --json lines, each starting with ``json_first``); stderr notes a dry run."""
    if args.json:
        for tp, off in new.items():
            print(json.dumps({**json_first, "topic": tp.topic, "partition": tp.partition,
                              "current": current.get(tp), "new": off, "executed": bool(args.execute)}))
    else:
        print_table(("TOPIC", "PARTITION", "CURRENT", "NEW"),
                    [(tp.topic, tp.partition, current.get(tp), off) for tp, off in new.items()])
    if not args.execute:
        print(dry_run_message, file=sys.stderr)

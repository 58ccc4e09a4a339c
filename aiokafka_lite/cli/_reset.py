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
from typing import Any

from ..structs import TopicPartition
from ._clients import print_table
from ._offsets import end_offsets
from ._runtime import CLIError


def add_reset_arguments(p: argparse.ArgumentParser, *, all_topics_help: str, to_offset_help: str,
                        execute_help: str, shift_by: bool) -> None:
    """GROUP, which partitions (--topic/--all-topics, -p), where to (--to-*), and --dry-run/--execute."""
    p.add_argument("group", metavar="GROUP")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--topic", action="append", default=None, metavar="TOPIC",
                       help="a topic whose partitions to move; repeatable")
    which.add_argument("--all-topics", action="store_true", help=all_topics_help)
    p.add_argument("-p", "--partition", type=int, action="append", default=None,
                   help="only this partition of the topics; repeatable")
    to = p.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-earliest", action="store_true", help="the first offset still in the log")
    to.add_argument("--to-latest", action="store_true", help="the end of the log")
    to.add_argument("--to-offset", type=int, metavar="N", help=to_offset_help)
    if shift_by:
        to.add_argument("--shift-by", type=int, metavar="N",
                        help="the committed offset plus N (may be negative)")
    to.add_argument("--to-datetime", metavar="WHEN",
                    help="the first record at or after WHEN: ms since the epoch or ISO 8601 "
                         "(2026-11-23T20:00:00Z)")
    run = p.add_mutually_exclusive_group()
    run.add_argument("--dry-run", action="store_true", help="only print the new offsets (the default)")
    run.add_argument("--execute", action="store_true", help=execute_help)


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


def refuse_members(who: str, members: int, kind: str, state: str) -> None:
    """A group's offsets are not moved under its members: refuse while ``who`` has any."""
    if members:
        raise CLIError(f"{who} has {members} {kind}(s) (state {state}); "
                       "stop them before resetting its offsets")


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

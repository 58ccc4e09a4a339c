"""``aiokafka-lite share-groups describe|offsets|reset-offsets|delete-offsets``: share groups (KIP-932),
their members and their start offsets (ShareGroupDescribe, DescribeShareGroupOffsets,
AlterShareGroupOffsets, DeleteShareGroupOffsets), as Kafka's kafka-share-groups tool shows them."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._clients import admin_for, print_table, started
from ._commands import Common, command_with_actions, finish
from ._reset import add_reset_arguments, plan_reset, print_plan, refuse_members
from ._runtime import CLIError


def register(sub: Any, common: Common) -> None:
    actions = command_with_actions(
        sub, "share-groups", help="describe share groups; list, reset or delete start offsets",
        description="Share group (KIP-932) administration. A share group's offset for a "
                    "partition is its start offset: every record below it is done with.")

    p = actions.add_parser("describe", help="state, epochs, assignor, members and their partitions",
                           description="Describe share groups: state, epochs, assignor, and each member "
                                       "with the partitions assigned to it.")
    p.add_argument("groups", nargs="+", metavar="GROUP")
    finish(p, common, _describe, json="one JSON object per group")

    p = actions.add_parser("offsets", help="a share group's start offset per partition",
                           description="The start offset of GROUP for each partition it has state for "
                                       "(or only --topic / -p).")
    p.add_argument("group", metavar="GROUP")
    p.add_argument("--topic", action="append", default=None, metavar="TOPIC", help="repeatable")
    p.add_argument("-p", "--partition", type=int, action="append", default=None,
                   help="only this partition of the topics (with --topic); repeatable")
    finish(p, common, _offsets, json="one JSON object per partition")

    p = actions.add_parser(
        "reset-offsets", help="move a share group's start offsets (a dry run unless --execute)",
        description="Compute new start offsets for GROUP and print them; with --execute, set them "
                    "(AlterShareGroupOffsets). The group must have no members when executing.")
    add_reset_arguments(p, all_topics_help="every partition the group has state for",
                        to_offset_help="offset N, as given", execute_help="set the new offsets",
                        shift_by=False)
    finish(p, common, _reset, json="one JSON object per partition")

    p = actions.add_parser(
        "delete-offsets", help="delete a share group's state of topics",
        description="Delete GROUP's start offsets and in-flight state of every partition of each --topic "
                    "(DeleteShareGroupOffsets). The group must have no members.")
    p.add_argument("group", metavar="GROUP")
    p.add_argument("--topic", action="append", required=True, metavar="TOPIC", help="repeatable")
    finish(p, common, _delete_offsets, json="one JSON object per topic")


async def _describe(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        found = await admin.describe_share_groups(list(dict.fromkeys(args.groups)))
    for d in found:
        if args.json:
            print(json.dumps(d.as_dict()))
            continue
        print(f"Group: {d.group_id}\tState: {d.state}\tEpoch: {d.group_epoch}\t"
              f"Assignment-epoch: {d.assignment_epoch}\tAssignor: {d.assignor}\tMembers: {len(d.members)}")
        print_table(("MEMBER-ID", "CLIENT-ID", "HOST", "RACK", "EPOCH", "PARTITIONS"),
                    [(m.member_id, m.client_id, m.client_host, m.rack_id, m.member_epoch,
                      ",".join(f"{tp.topic}-{tp.partition}" for tp in m.assignment)) for m in d.members])
        print()
    return 0


async def _offsets(args: argparse.Namespace) -> int:
    from .cmd_metadata import partitions_of

    if args.partition and not args.topic:
        raise CLIError("-p/--partition needs --topic", code=2)
    async with started(admin_for(args), args, "admin") as admin:
        tps = (await partitions_of(admin, list(dict.fromkeys(args.topic)), args.partition)
               if args.topic else None)
        found = await admin.list_share_group_offsets(args.group, tps)
    rows = [{"group": args.group, "topic": tp.topic, "partition": tp.partition, "start_offset": om.offset,
             "leader_epoch": om.leader_epoch if om.leader_epoch >= 0 else None} for tp, om in found.items()]
    if args.json:
        for r in rows:
            print(json.dumps(r))
    else:
        print_table(("TOPIC", "PARTITION", "START-OFFSET", "LEADER-EPOCH"),
                    [(r["topic"], r["partition"], r["start_offset"], r["leader_epoch"]) for r in rows])
    return 0


async def _reset(args: argparse.Namespace) -> int:
    from .cmd_metadata import parse_time

    when = parse_time(args.to_datetime) if args.to_datetime is not None else None
    if args.to_offset is not None and args.to_offset < 0:
        raise CLIError(f"--to-offset must be >= 0, got {args.to_offset}", code=2)
    async with started(admin_for(args), args, "admin") as admin:
        current = {tp: om.offset for tp, om in (await admin.list_share_group_offsets(args.group)).items()}
        new = await plan_reset(admin, args, current, when, f"share group {args.group!r} has no start offsets",
                               clamp_to_offset=False)
        if args.execute:
            (d,) = await admin.describe_share_groups([args.group])
            refuse_members(f"share group {args.group!r}", len(d.members), "member", d.state)
            await admin.alter_share_group_offsets(args.group, new)
    print_plan(args, current, new,
               f"dry run: nothing set; add --execute to set these start offsets for {args.group}",
               group=args.group)
    return 0


async def _delete_offsets(args: argparse.Namespace) -> int:
    topics = list(dict.fromkeys(args.topic))
    async with started(admin_for(args), args, "admin") as admin:
        await admin.delete_share_group_offsets(args.group, topics)
    for t in topics:
        if args.json:
            print(json.dumps({"group": args.group, "topic": t, "deleted": True}))
        else:
            print(f"deleted share group {args.group}'s state of topic {t}")
    return 0

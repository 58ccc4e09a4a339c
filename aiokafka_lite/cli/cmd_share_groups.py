"""``aiokafka-lite share-groups describe|offsets|reset-offsets|delete-offsets``: share groups (KIP-932),
their members and their start offsets (ShareGroupDescribe, DescribeShareGroupOffsets,
AlterShareGroupOffsets, DeleteShareGroupOffsets), as Kafka's kafka-share-groups tool shows them."""

from __future__ import annotations

import argparse
import json

from ._clients import admin_for, print_table, started
from ._commands import GROUP, GROUPS, TOPICS_GIVEN, Action, Command, arg, partitions
from ._reset import GroupKind, reset_arguments, reset_offsets
from ._runtime import CLIError


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


_KIND = GroupKind("share group", "member", "start offsets",
                  "nothing set; add --execute to set these start offsets", clamp_to_offset=False,
                  list_call="list_share_group_offsets", describe_call="describe_share_groups",
                  alter_call="alter_share_group_offsets", json_names_group=True)


async def _reset(args: argparse.Namespace) -> int:
    return await reset_offsets(args, _KIND)


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


COMMANDS = (Command("share-groups", "describe share groups; list, reset or delete start offsets",
                    "Share group (KIP-932) administration. A share group's offset for a partition is its "
                    "start offset: every record below it is done with.", actions=(
    Action("describe", _describe, "state, epochs, assignor, members and their partitions",
           "Describe share groups: state, epochs, assignor, and each member with the partitions assigned "
           "to it.", args=(GROUPS,), json="one JSON object per group"),
    Action("offsets", _offsets, "a share group's start offset per partition",
           "The start offset of GROUP for each partition it has state for (or only --topic / -p).",
           args=(GROUP, arg("--topic", action="append", default=None, metavar="TOPIC", help="repeatable"),
                 partitions("only this partition of the topics (with --topic); repeatable")),
           json="one JSON object per partition"),
    Action("reset-offsets", _reset, "move a share group's start offsets (a dry run unless --execute)",
           "Compute new start offsets for GROUP and print them; with --execute, set them "
           "(AlterShareGroupOffsets). The group must have no members when executing.",
           args=reset_arguments(all_topics_help="every partition the group has state for",
                                to_offset_help="offset N, as given", execute_help="set the new offsets",
                                shift_by=False),
           json="one JSON object per partition"),
    Action("delete-offsets", _delete_offsets, "delete a share group's state of topics",
           "Delete GROUP's start offsets and in-flight state of every partition of each --topic "
           "(DeleteShareGroupOffsets). The group must have no members.",
           args=(GROUP, TOPICS_GIVEN), json="one JSON object per topic"),
)),)

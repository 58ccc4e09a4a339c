"""``aiokafka-lite groups list|describe|delete|reset-offsets|delete-offsets``: consumer groups, their
members, offsets and lag."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..structs import TopicPartition
from ._clients import admin_for, started
from ._commands import GROUP, GROUPS, TOPICS_GIVEN, Action, Command, arg, partitions
from ._offsets import end_offsets
from ._reset import GroupKind, reset_arguments, reset_offsets


async def _list(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        for g in await admin.list_groups():
            print(f"{g.group_id}\t{g.protocol_type}\t{g.state}\t{g.group_type or '-'}" if args.long
                  else g.group_id)
    return 0


async def _describe(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        descriptions = await admin.describe_groups(list(dict.fromkeys(args.groups)))
        for d in descriptions:
            committed = await admin.list_consumer_group_offsets(d.group_id)
            owner: dict[TopicPartition, Any] = {}
            for m in d.members:
                for tp in m.assignment:
                    owner[tp] = m
            tps = sorted(set(committed) | set(owner))
            ends = await end_offsets(admin, tps)  # true ends: Tansu's ListOffsets(latest) falls short
            rows: list[dict[str, Any]] = []
            for tp in tps:
                c = committed.get(tp)
                cur = c.offset if c is not None and c.offset >= 0 else None
                end = ends.get(tp)
                lag = end - cur if cur is not None and end is not None else None
                m = owner.get(tp)
                rows.append({"topic": tp.topic, "partition": tp.partition, "committed": cur, "end": end,
                             "lag": lag, "member_id": m.member_id if m else None,
                             "client_id": m.client_id if m else None, "host": m.client_host if m else None})
            if args.json:
                print(json.dumps({"group_id": d.group_id, "state": d.state, "protocol_type": d.protocol_type,
                                  "protocol": d.protocol, "group_type": d.group_type,
                                  "members": len(d.members), "partitions": rows}))
                continue
            print(f"Group: {d.group_id}\tType: {d.group_type}\tState: {d.state}\t"
                  f"Protocol: {d.protocol_type}/{d.protocol}\tMembers: {len(d.members)}")
            header = ("TOPIC", "PARTITION", "COMMITTED", "LOG-END", "LAG", "MEMBER-ID", "HOST", "CLIENT-ID")
            table: list[tuple[str, ...]] = [header] + [
                (r["topic"], str(r["partition"]), _dash(r["committed"]), _dash(r["end"]), _dash(r["lag"]),
                 _dash(r["member_id"]), _dash(r["host"]), _dash(r["client_id"])) for r in rows
            ]
            widths = [max(len(row[i]) for row in table) for i in range(len(header))]
            for row in table:
                print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
            print()
    return 0


def _dash(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


async def _delete(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        groups = list(dict.fromkeys(args.groups))
        await admin.delete_groups(groups)
        for g in groups:
            print(f"deleted group {g}")
    return 0


_KIND = GroupKind("group", "active member", "committed offsets",
                  "nothing committed; add --execute to commit these offsets", clamp_to_offset=True,
                  list_call="list_consumer_group_offsets", describe_call="describe_groups",
                  alter_call="alter_consumer_group_offsets")


async def _reset(args: argparse.Namespace) -> int:
    return await reset_offsets(args, _KIND)


async def _delete_offsets(args: argparse.Namespace) -> int:
    from .cmd_metadata import partitions_of

    async with started(admin_for(args), args, "admin") as admin:
        tps = await partitions_of(admin, list(dict.fromkeys(args.topic)), args.partition)
        await admin.delete_consumer_group_offsets(args.group, tps)
    for tp in tps:
        if args.json:
            print(json.dumps({"group": args.group, "topic": tp.topic, "partition": tp.partition,
                              "deleted": True}))
        else:
            print(f"deleted committed offset of {tp.topic}-{tp.partition} for group {args.group}")
    return 0


COMMANDS = (Command("groups", "list, describe, delete groups; reset or delete offsets",
                    "Consumer group administration.", actions=(
    Action("list", _list, "list groups", "List groups on every broker.", args=(
        arg("-l", "--long", action="store_true",
            help="also show protocol type, state and group type (classic or consumer)"),)),
    Action("describe", _describe, "members, assignments, committed offsets and lag",
           "Describe groups: state, members and their partitions, and per partition the committed offset, "
           "the log end and the lag.", args=(GROUPS,), json="one JSON object per group"),
    Action("reset-offsets", _reset, "move a group's committed offsets (a dry run unless --execute)",
           "Compute new committed offsets for GROUP and print them; with --execute, commit them. The group "
           "must have no active members when executing.",
           args=reset_arguments(all_topics_help="every topic the group has offsets for",
                                to_offset_help="offset N (kept within the log)",
                                execute_help="commit the new offsets", shift_by=True),
           json="one JSON object per partition"),
    Action("delete-offsets", _delete_offsets, "delete a group's committed offsets of topics",
           "Delete GROUP's committed offsets (OffsetDelete) of every partition of each --topic (or only -p). "
           "Refused for a topic the group's active members consume.",
           args=(GROUP, TOPICS_GIVEN, partitions()), json="one JSON object per partition"),
    Action("delete", _delete, "delete empty groups", "Delete (empty) groups.", args=(GROUPS,)),
)),)

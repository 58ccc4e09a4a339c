"""``aiokafka-lite groups list|describe|delete``: consumer groups, their members, offsets and lag."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from ..structs import TopicPartition
from ._clients import settings, started
from ._offsets import end_offsets
from ._settings import ADMIN


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    groups = sub.add_parser("groups", help="list, describe or delete consumer groups",
                            description="Consumer group administration.")
    actions = groups.add_subparsers(dest="action", metavar="ACTION", parser_class=type(groups))
    actions.required = True

    p = actions.add_parser("list", help="list groups", description="List groups on every broker.")
    p.add_argument("-l", "--long", action="store_true", help="also show protocol type and state")
    common(p)
    p.set_defaults(handler=_list)

    p = actions.add_parser("describe", help="members, assignments, committed offsets and lag",
                           description="Describe groups: state, members and their partitions, and per "
                                       "partition the committed offset, the log end and the lag.")
    p.add_argument("groups", nargs="+", metavar="GROUP")
    p.add_argument("--json", action="store_true", help="one JSON object per group")
    common(p)
    p.set_defaults(handler=_describe)

    p = actions.add_parser("delete", help="delete empty groups", description="Delete (empty) groups.")
    p.add_argument("groups", nargs="+", metavar="GROUP")
    common(p)
    p.set_defaults(handler=_delete)


def _admin(args: argparse.Namespace) -> Any:
    from ..admin import Admin

    return Admin(**settings(args, ADMIN)["admin"])


async def _list(args: argparse.Namespace) -> int:
    async with started(_admin(args), args, "admin") as admin:
        for g in await admin.list_groups():
            print(f"{g.group_id}\t{g.protocol_type}\t{g.state}" if args.long else g.group_id)
    return 0


async def _describe(args: argparse.Namespace) -> int:
    async with started(_admin(args), args, "admin") as admin:
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
                                  "protocol": d.protocol, "members": len(d.members), "partitions": rows}))
                continue
            print(f"Group: {d.group_id}\tState: {d.state}\tProtocol: {d.protocol_type}/{d.protocol}\t"
                  f"Members: {len(d.members)}")
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
    async with started(_admin(args), args, "admin") as admin:
        groups = list(dict.fromkeys(args.groups))
        await admin.delete_groups(groups)
        for g in groups:
            print(f"deleted group {g}")
    return 0

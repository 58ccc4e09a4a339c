"""``aiokafka-lite log-dirs``: each broker's log directories and the replicas in them (DescribeLogDirs)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._clients import admin_for, print_table, started
from ._commands import Action, arg


async def _log_dirs(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        found = await admin.describe_log_dirs(args.broker)
    topics = set(args.topic or ())
    rows: list[tuple[Any, ...]] = []
    for node, dirs in found.items():
        for path, d in sorted(dirs.items()):
            replicas = {tp: r for tp, r in d.replicas.items() if not topics or tp.topic in topics}
            if args.json:
                doc = d.as_dict()
                doc["replicas"] = [r for r in doc["replicas"] if not topics or r["topic"] in topics]
                print(json.dumps({"broker": node, **doc}))
                continue
            if d.error is not None:
                rows.append((node, path, "-", "-", "-", "-", str(d.error)))
            for tp, r in sorted(replicas.items()):
                rows.append((node, path, tp.topic, tp.partition, r.size, r.offset_lag,
                             "future" if r.is_future else ""))
    if not args.json:
        print_table(("BROKER", "DIR", "TOPIC", "PARTITION", "SIZE", "OFFSET-LAG", "NOTE"), rows)
    return 0


COMMANDS = (Action(
    "log-dirs", _log_dirs, "brokers' log directories and replica sizes",
    "Each broker's log directories, and per replica its size and lag.", args=(
        arg("--broker", type=int, action="append", metavar="ID", help="only this broker; repeatable"),
        arg("--topic", action="append", metavar="TOPIC", help="only replicas of this topic; repeatable"),
    ), json="one JSON object per broker and directory"),)

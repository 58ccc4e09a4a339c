"""``aiokafka-lite topics create|list|describe|delete``: topic administration through Admin."""

from __future__ import annotations

import argparse
import json

from .. import errors
from ..structs import NewTopic
from ._clients import admin_for, started
from ._commands import TOPICS, Action, Command, arg
from ._runtime import CLIError
from ._settings import parse_pairs


async def _create(args: argparse.Namespace) -> int:
    topic_configs = parse_pairs(args.config, what="--config", normalize=False) or None
    for name, value in (("--partitions", args.partitions), ("--replication-factor", args.replication_factor)):
        if value == 0 or value < -1:
            raise CLIError(f"{name} must be positive (or -1 for the broker's default)", code=2)
    async with started(admin_for(args), args, "admin") as admin:
        wanted = list(dict.fromkeys(args.topics))
        if args.if_not_exists:
            existing = set(await admin.list_topics(internal=True))
            wanted = [t for t in wanted if t not in existing]
        if wanted:
            try:
                await admin.create_topics(
                    [NewTopic(t, args.partitions, args.replication_factor, topic_configs=topic_configs)
                     for t in wanted],
                    validate_only=args.validate_only,
                )
            except errors.TopicAlreadyExistsError as exc:
                raise CLIError(f"{exc} (use --if-not-exists to ignore existing topics)") from exc
        verb = "validated" if args.validate_only else "created"
        for t in wanted:
            print(f"{verb} topic {t}")
    return 0


async def _list(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        names = await admin.list_topics(internal=args.internal)
        if args.long:
            described = await admin.describe_topics(names) if names else []
            for d in described:
                print(f"{d.name}\t{len(d.partitions)}")
        else:
            for name in names:
                print(name)
    return 0


async def _describe(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        described = await admin.describe_topics(args.topics or None)
        for d in described:
            if args.json:
                print(json.dumps(d.as_dict()))
                continue
            rf = max((len(p.replicas) for p in d.partitions), default=0)
            print(f"Topic: {d.name}\tTopicId: {d.topic_id or '-'}\tPartitionCount: {len(d.partitions)}\t"
                  f"ReplicationFactor: {rf}")
            for p in d.partitions:
                print(f"\tPartition: {p.partition}\tLeader: {p.leader}\t"
                      f"Replicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isr))}")
    return 0


async def _delete(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        wanted = list(dict.fromkeys(args.topics))
        if args.if_exists:
            existing = set(await admin.list_topics(internal=True))
            wanted = [t for t in wanted if t in existing]
        if wanted:
            try:
                await admin.delete_topics(wanted)
            except errors.UnknownTopicOrPartitionError as exc:
                raise CLIError(f"{exc} (use --if-exists to ignore missing topics)") from exc
        for t in wanted:
            print(f"deleted topic {t}")
    return 0


COMMANDS = (Command("topics", "create, list, describe or delete topics", "Topic administration.", actions=(
    Action("create", _create, "create topics", "Create one or more topics.", args=(
        TOPICS,
        arg("-p", "--partitions", type=int, default=-1,
            help="number of partitions (default: the broker's num.partitions)"),
        arg("-r", "--replication-factor", type=int, default=-1,
            help="replicas per partition (default: the broker's default.replication.factor)"),
        arg("-c", "--config", action="append", default=[], metavar="KEY=VALUE",
            help="a topic config (retention.ms=60000); repeatable"),
        arg("--if-not-exists", action="store_true", help="succeed when a topic already exists"),
        arg("--validate-only", action="store_true", help="ask the broker to check, not create"))),
    Action("list", _list, "list topic names", "List topics, one per line.", args=(
        arg("--internal", action="store_true", help="include internal topics"),
        arg("-l", "--long", action="store_true", help="also show partition counts"))),
    Action("describe", _describe, "show partitions, leaders and replicas",
           "Describe topics (all topics when none is named).",
           args=(arg("topics", nargs="*", metavar="TOPIC"),), json="one JSON object per topic"),
    Action("delete", _delete, "delete topics", "Delete one or more topics.", args=(
        TOPICS, arg("--if-exists", action="store_true", help="succeed when a topic does not exist"))),
)),)

"""``aiokafka-lite metadata`` (also ``aiokafka-lite -L``): kcat's metadata listing, and ``offsets``."""

from __future__ import annotations

import argparse
import datetime
import json
from typing import Any

from ..structs import TopicPartition
from ._clients import admin_for, started
from ._commands import TOPICS, Action, arg, partitions
from ._offsets import end_offsets
from ._runtime import CLIError


async def _metadata(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        cluster = await admin.describe_cluster()
        names = (list(dict.fromkeys(args.topic)) if args.topic
                 else sorted(await admin.list_topics(internal=True)))
        topics = await admin.describe_topics(names) if names else []
    if args.json:
        print(json.dumps({
            "cluster_id": cluster.cluster_id, "controller_id": cluster.controller_id,
            "brokers": [{"id": b.node_id, "name": f"{b.host}:{b.port}", "rack": b.rack}
                        for b in cluster.brokers],
            "topics": [{"topic": t.name, "partitions": [
                {"partition": p.partition, "leader": p.leader, "replicas": [{"id": r} for r in p.replicas],
                 "isrs": [{"id": r} for r in p.isr]} for p in t.partitions]} for t in topics]}))
        return 0
    print(f"Metadata for {'all topics' if not args.topic else ', '.join(names)} "
          f"(cluster {cluster.cluster_id}):")
    print(f" {len(cluster.brokers)} brokers:")
    for b in cluster.brokers:
        note = " (controller)" if b.node_id == cluster.controller_id else ""
        print(f"  broker {b.node_id} at {b.host}:{b.port}{note}")
    print(f" {len(topics)} topics:")
    for t in topics:
        print(f'  topic "{t.name}" with {len(t.partitions)} partitions:')
        for p in t.partitions:
            replicas = ",".join(str(r) for r in p.replicas)
            isrs = ",".join(str(r) for r in p.isr)
            print(f"    partition {p.partition}, leader {p.leader}, replicas: {replicas}, isrs: {isrs}")
    return 0


def parse_time(text: str) -> int:
    """Milliseconds since the epoch from digits or an ISO 8601 date-time (UTC unless it says)."""
    if text.isdigit():
        return int(text)
    try:
        when = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise CLIError(f"bad time {text!r}: use a timestamp in ms or an ISO 8601 date-time", code=2) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return int(when.timestamp() * 1000)


async def partitions_of(admin: Any, topics: list[str], only: list[int] | None) -> list[TopicPartition]:
    tps: list[TopicPartition] = []
    for d in await admin.describe_topics(topics):
        have = sorted(p.partition for p in d.partitions)
        chosen = have if not only else sorted(set(only))
        missing = sorted(set(chosen) - set(have))
        if missing:
            raise CLIError(f"topic {d.name!r} has no partition {missing[0]} (it has {len(have)})")
        tps.extend(TopicPartition(d.name, p) for p in chosen)
    return tps


async def _offsets(args: argparse.Namespace) -> int:
    when = args.time if args.time in ("earliest", "latest") else parse_time(args.time)
    async with started(admin_for(args), args, "admin") as admin:
        tps = await partitions_of(admin, list(dict.fromkeys(args.topics)), args.partition)
        if when == "latest":
            found = await end_offsets(admin, tps)
        else:
            found = {tp: r.offset for tp, r in (await admin.list_offsets({tp: when for tp in tps})).items()}
    for tp in tps:
        if args.json:
            print(json.dumps({"topic": tp.topic, "partition": tp.partition, "offset": found[tp]}))
        else:
            print(f"{tp.topic}\t{tp.partition}\t{found[tp]}")
    return 0


COMMANDS = (
    Action("metadata", _metadata, "brokers, topics and partitions (kcat -L; also `-L`)",
           "List the cluster's brokers and its topics' partitions, leaders, replicas and in-sync replicas, "
           "as kcat -L does.", args=(
               arg("-t", "--topic", action="append", default=None, metavar="TOPIC",
                   help="only this topic; repeatable"),
               arg("-J", "--json", action="store_true", help="one JSON document"))),
    Action("offsets", _offsets, "partition offsets: earliest, latest or by timestamp",
           "Print each partition's offset: the earliest, the latest (the end), or the first record at or "
           "after a time.", args=(
               TOPICS, partitions("only this partition; repeatable"),
               arg("--time", default="latest", metavar="WHEN",
                   help="earliest, latest (default), a timestamp in ms, or an ISO 8601 date-time "
                        "(2026-11-23T20:00:00Z); a time after the last record gives -1")),
           json="one JSON object per partition"),
)

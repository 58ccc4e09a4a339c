"""``aiokafka-lite transactions list|describe|abort|fence`` and ``producers describe``: transaction and
producer state (KIP-664: ListTransactions, DescribeTransactions, DescribeProducers, WriteTxnMarkers;
fencing with InitProducerId)."""

from __future__ import annotations

import argparse
import json

from ..structs import TopicPartition
from ._clients import admin_for, print_table, started
from ._commands import Action, Command, arg, partitions
from ._runtime import CLIError

STATES = ("empty", "ongoing", "prepare_commit", "prepare_abort", "complete_commit", "complete_abort", "dead",
          "prepare_epoch_fence")


async def _list(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        found = await admin.list_transactions(states=args.state or (), producer_ids=args.producer_id or ())
    if args.json:
        for t in found:
            print(json.dumps(t._asdict()))
    else:
        print_table(("TRANSACTIONAL-ID", "PRODUCER-ID", "STATE"),
                    [(t.transactional_id, t.producer_id, t.state) for t in found])
    return 0


async def _describe(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        found = await admin.describe_transactions(args.ids)
    if args.json:
        for d in found.values():
            print(json.dumps(d.as_dict()))
        return 0
    print_table(("TRANSACTIONAL-ID", "COORDINATOR", "STATE", "PRODUCER-ID", "EPOCH", "TIMEOUT-MS",
                 "STARTED-MS", "PARTITIONS"),
                [(d.transactional_id, d.coordinator_id, d.state, d.producer_id, d.producer_epoch,
                  d.transaction_timeout_ms, _known(d.transaction_start_time_ms),
                  ",".join(f"{tp.topic}-{tp.partition}" for tp in d.partitions)) for d in found.values()])
    return 0


async def _fence(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        fenced = await admin.fence_producers(args.ids)
    for tid, f in fenced.items():
        if args.json:
            print(json.dumps({"transactional_id": tid, "producer_id": f.producer_id,
                              "producer_epoch": f.producer_epoch}))
        else:
            print(f"fenced {tid}: producer {f.producer_id} now at epoch {f.producer_epoch}")
    return 0


async def _abort(args: argparse.Namespace) -> int:
    from ..admin import AbortTransactionSpec

    tp = TopicPartition(args.topic, args.partition)
    given = (args.producer_id, args.producer_epoch, args.coordinator_epoch)
    if args.start_offset is None and None in given:
        raise CLIError("give --start-offset, or all of --producer-id, --producer-epoch and "
                       "--coordinator-epoch", code=2)
    if args.start_offset is not None and any(v is not None for v in given):
        raise CLIError("give either --start-offset or the producer options, not both", code=2)
    async with started(admin_for(args), args, "admin") as admin:
        if args.start_offset is not None:
            states = (await admin.describe_producers([tp]))[tp]
            match = [s for s in states if s.current_transaction_start_offset == args.start_offset]
            if not match:
                raise CLIError(f"no producer of {args.topic}-{args.partition} has a transaction open at "
                               f"offset {args.start_offset} (see `producers describe {args.topic}`)")
            s = match[0]
            spec = AbortTransactionSpec(tp, s.producer_id, s.producer_epoch, s.coordinator_epoch)
        else:
            spec = AbortTransactionSpec(tp, *given)
        await admin.abort_transaction(spec)
    if args.json:
        print(json.dumps({"topic": tp.topic, "partition": tp.partition, "producer_id": spec.producer_id,
                          "producer_epoch": spec.producer_epoch,
                          "coordinator_epoch": spec.coordinator_epoch}))
    else:
        print(f"aborted the transaction of producer {spec.producer_id} (epoch {spec.producer_epoch}) in "
              f"{tp.topic}-{tp.partition}")
    return 0


async def _producers(args: argparse.Namespace) -> int:
    from .cmd_metadata import partitions_of

    async with started(admin_for(args), args, "admin") as admin:
        tps = await partitions_of(admin, [args.topic], args.partition)
        found = await admin.describe_producers(tps)
    rows = [{"topic": tp.topic, "partition": tp.partition, **s._asdict()}
            for tp, states in found.items() for s in states]
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    print_table(("TOPIC", "PARTITION", "PRODUCER-ID", "EPOCH", "LAST-SEQUENCE", "LAST-TIMESTAMP",
                 "COORDINATOR-EPOCH", "TXN-START-OFFSET"),
                [(r["topic"], r["partition"], r["producer_id"], r["producer_epoch"], r["last_sequence"],
                  r["last_timestamp"], r["coordinator_epoch"],
                  _known(r["current_transaction_start_offset"])) for r in rows])
    return 0


def _known(value: int) -> int | None:
    """None (shown as "-") for the protocol's -1, "none"."""
    return value if value >= 0 else None


_IDS = arg("ids", nargs="+", metavar="TRANSACTIONAL_ID")
_EACH_ID = "one JSON object per transactional id"

COMMANDS = (
    Command("transactions", "list, describe, abort or fence transactions",
            "Transactions their coordinators know, and hanging ones.", actions=(
        Action("list", _list, "transactional ids on every broker",
               "List transactional ids with their producer id and state.",
               args=(arg("--state", action="append", choices=STATES, help="only these states; repeatable"),
                     arg("--producer-id", action="append", type=int, metavar="ID", help="repeatable")),
               json=_EACH_ID),
        Action("describe", _describe, "state, producer and partitions of transactional ids",
               "Describe transactional ids, as their coordinators know them.", args=(_IDS,), json=_EACH_ID),
        Action("fence", _fence, "abort the open transaction of transactional ids",
               "Fence the producers of each TRANSACTIONAL_ID (kafka-transactions' "
               "--forceTerminateTransaction): the coordinator aborts its open transaction and bumps the "
               "epoch, so the old producer can no longer write.", args=(_IDS,), json=_EACH_ID),
        Action("abort", _abort, "abort a hanging transaction in a partition",
               "Write an abort marker to a partition for a transaction its coordinator no longer knows (a "
               "hanging transaction). Give the producer with --producer-id/--producer-epoch/"
               "--coordinator-epoch, or --start-offset to find it with DescribeProducers.",
               args=(arg("--topic", required=True), arg("-p", "--partition", type=int, required=True),
                     arg("--start-offset", type=int, metavar="N",
                         help="the first offset of the hanging transaction"),
                     arg("--producer-id", type=int), arg("--producer-epoch", type=int),
                     arg("--coordinator-epoch", type=int)),
               json="a JSON object for the marker written"),
    )),
    Command("producers", "describe the producers writing to partitions",
            "Active producers per partition (DescribeProducers).", actions=(
        Action("describe", _producers, "producers of a topic's partitions",
               "The active producers of each partition of TOPIC, as its leader knows them.",
               args=(arg("topic", metavar="TOPIC"), partitions("only this partition; repeatable")),
               json="one JSON object per producer and partition"),
    )),
)

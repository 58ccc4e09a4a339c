"""What the group leader does in a classic rebalance, and what a refused JoinGroup means.

The member JoinGroup names leader decodes every member's subscription, refreshes metadata for all their
topics, and runs the assignor the group chose (with the replicas' racks for the rack-aware built-in
assignors). Kept apart from the coordinator's membership state machine: it needs only the client, the
assignors and the subscription state.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .. import errors as Errors
from ..protocol.messages.describe_groups import DescribeGroupsRequest
from ..structs import TopicPartition
from . import cluster_view as cv
from .assignors import Assignor, GroupMember
from .group_protocol import (
    PROTOCOL_TYPE,
    Assignment,
    Subscription,
    decode_subscription,
    encode_assignment,
)
from .subscription import SubscriptionState

log = logging.getLogger("aiokafka_lite.consumer.coordinator")

__all__ = ["explain_inconsistent", "leader_assign", "partition_racks"]


async def leader_assign(client: cv.ConsumerClient, group_id: str, assignors: list[Assignor],
                        subs: SubscriptionState,
                        protocol_name: str, members: list[Any], request_timeout: float
                        ) -> tuple[dict[str, bytes], dict[str, int]]:
    """The encoded assignment of every member, and the partition counts it was computed from (the
    leader rejoins when they change)."""
    assignor = next((a for a in assignors if a.name == protocol_name), None)
    if assignor is None:
        raise Errors.IllegalStateError(f"the group chose assignor {protocol_name!r}, which we lack")
    group: dict[str, GroupMember] = {}
    for m in members:
        try:
            sub = decode_subscription(m.metadata)
        except Errors.ProtocolError as exc:
            log.warning("group %r: member %s sent an undecodable subscription (%s); it gets nothing",
                        group_id, m.member_id, exc)
            sub = Subscription([])
        group[m.member_id] = GroupMember(m.member_id, sub, m.group_instance_id)
    topics = {t for gm in group.values() for t in gm.subscription.topics}
    subs.group_subscription = set(topics) | set(subs.subscription)
    try:
        await cv.refresh_metadata(client, topics, request_timeout)
    except Errors.KafkaError as exc:
        log.warning("group %r: metadata refresh before assigning failed: %s", group_id, exc)
    partitions = {t: sorted(ps) for t in topics if (ps := cv.partitions_for(client, t))}
    if getattr(assignor, "rack_aware", False):
        rack_assign: Any = assignor.assign  # the built-in assignors take the replicas' racks too
        result = rack_assign(partitions, group, partition_racks=partition_racks(client, partitions))
    else:
        result = assignor.assign(partitions, group)
    log.info("group %r: leader assigned with %s: %s", group_id, protocol_name,
             {m: len(a.partitions) for m, a in result.items()})
    encoded = {m: encode_assignment(result.get(m, Assignment([]))) for m in group}
    return encoded, {t: len(ps) for t, ps in partitions.items()}


def partition_racks(client: cv.ConsumerClient, partitions: dict[str, list[int]]) -> dict[str, dict[int,
                    frozenset[str]]]:
    """Racks of each partition's replicas, from cluster metadata (brokers without a rack are left out)."""
    cluster = client.cluster
    out: dict[str, dict[int, frozenset[str]]] = {}
    for t, ps in partitions.items():
        racks: dict[int, frozenset[str]] = {}
        for p in ps:
            info = cluster.partition_info(TopicPartition(t, p))
            replicas = info.replicas if info is not None else ()
            brokers = (cluster.broker(n) for n in replicas)
            racks[p] = frozenset(b.rack for b in brokers if b is not None and b.rack)
        out[t] = racks
    return out


async def explain_inconsistent(client: cv.ConsumerClient, coordinator: Callable[[], Awaitable[int]],
                               group_id: str,
                               offered: list[str], what: str, request_timeout: float) -> str:
    """INCONSISTENT_GROUP_PROTOCOL names nothing: say what we offered, ask the group what it runs
    (DescribeGroups, best effort) and point at the setting that fixes it."""
    uses = "assignors none of which we offered"
    try:
        node = await coordinator()
        version = await cv.api_version(client, node, DescribeGroupsRequest)
        resp = await asyncio.wait_for(
            cv.send(client, node, DescribeGroupsRequest(groups=[group_id]), version), request_timeout)
        g = resp.groups[0]
        if not g.error_code and g.protocol_type and g.protocol_type != PROTOCOL_TYPE:
            uses = f"protocol type {g.protocol_type!r} (not a consumer group)"
        elif not g.error_code and g.protocol_data:
            uses = f"assignor {g.protocol_data!r} ({len(g.members)} member(s), state {g.group_state})"
    except (Errors.KafkaError, asyncio.TimeoutError, IndexError) as exc:  # the error must still come out
        log.debug("group %r: DescribeGroups after INCONSISTENT_GROUP_PROTOCOL failed: %r", group_id, exc)
    return (f"{what} in group {group_id!r}: the group refused our assignors {offered} because its "
            f"members use {uses}; set partition_assignment_strategy to a list that shares one with them "
            f"(aiokafka offers 'roundrobin', librdkafka 'range,roundrobin', the Java client "
            f"'range,cooperative-sticky'; our default offers all three)")

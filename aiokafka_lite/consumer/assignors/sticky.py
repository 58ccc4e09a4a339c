"""The sticky assignors: balanced like round robin, but partitions stay with their current owner.

``sticky`` (KIP-54, eager) and ``cooperative-sticky`` (KIP-429) compute the same target assignment. The
cooperative one then withholds every partition that changes owner: its old owner sees it missing from its
new assignment, revokes only that partition and rejoins; the follow-up rebalance hands it to the new owner.
Partitions that stay are never revoked.

Who owns what comes from each member's subscription: ``owned_partitions`` and ``generation_id``
(ConsumerProtocolSubscription v1+/v2+, sent by Java and librdkafka) or, for peers and the eager protocol,
the user data. Two user-data layouts exist and both are read:
- StickyAssignorUserData (Java's StickyAssignor and librdkafka's sticky and cooperative-sticky):
  ``[topic string, [partition int32]]`` then, in v1, ``generation int32``;
- Java's CooperativeStickyAssignor: just ``generation int32``.
When two members claim a partition, the one with the higher generation keeps it; equal generations void
both claims.

The assignment is computed by Java's algorithm (``sticky_builders.py``), rack-aware (KIP-881) when the
members send racks and the replicas' racks are known, so that a mixed group agrees whoever leads.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence

from ...errors import ProtocolError
from ...structs import TopicPartition
from ..group_protocol import Assignment, Reader, decode_topic_partitions, encode_topic_partitions
from ._java_order import hashmap_order, string_hash
from .base import Assignor, GroupMember, RebalanceProtocol
from .sticky_builders import PartitionRacks, RackInfo, constrained_assign, general_assign


def encode_sticky_user_data(partitions: Iterable[TopicPartition], generation: int) -> bytes:
    """StickyAssignorUserData v1: the previous assignment and its generation."""
    out = encode_topic_partitions(partitions)
    out += struct.pack(">i", generation)
    return bytes(out)


def decode_sticky_user_data(data: bytes) -> tuple[list[TopicPartition], int]:
    """(previous assignment, generation or -1 for v0); raises ProtocolError when it is not this layout."""
    r = Reader(data)
    parts = decode_topic_partitions(r)
    generation = r.int32() if r.remaining() >= 4 else -1
    return parts, generation


def member_owned(member: GroupMember) -> tuple[list[TopicPartition], int]:
    """What a member owned before this rebalance, and in which generation."""
    sub = member.subscription
    owned = list(sub.owned_partitions)
    generation = sub.generation_id
    data = sub.user_data
    if data:
        if len(data) == 4:
            # Java's CooperativeStickyAssignor: the generation alone.
            if generation < 0:
                generation = struct.unpack(">i", data)[0]
        else:
            try:
                prev, gen = decode_sticky_user_data(data)
            except ProtocolError:
                prev, gen = [], -1
            if not owned:
                owned = prev
            if generation < 0:
                generation = gen
    return owned, generation


Claims = dict[str, tuple[list[TopicPartition], int]]


def _claims(members: Mapping[str, GroupMember], order: list[str], topics: set[str]
            ) -> tuple[dict[str, list[TopicPartition]], set[TopicPartition], Claims]:
    """Resolve ownership claims as Java does: the higher generation keeps a partition; two claims in
    the same generation void it (it is then 'claimed by several', and moves as such)."""
    owned: dict[str, list[TopicPartition]] = {}
    claimed_by: dict[TopicPartition, str] = {}
    several: set[TopicPartition] = set()
    data = {mid: member_owned(members[mid]) for mid in order}
    for mid in order:
        parts, gen = data[mid]
        mine: list[TopicPartition] = []
        owned[mid] = mine
        for tp in parts:
            if tp.topic not in topics:
                continue
            other = claimed_by.get(tp)
            if other is None:
                mine.append(tp)
                claimed_by[tp] = mid
                continue
            other_gen = data[other][1]
            if gen == other_gen:
                several.add(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
                claimed_by[tp] = mid
            elif gen > other_gen:
                mine.append(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
                claimed_by[tp] = mid
    return owned, several, data


def sticky_assign(partitions_per_topic: Mapping[str, Sequence[int]], members: Mapping[str, GroupMember],
                  partition_racks: PartitionRacks | None = None, prefer_rack_aware: bool = False,
                  ) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, str] | None]:
    """Java's AbstractStickyAssignor: (assignment, partitions changing owner or None to compute).

    ``members`` in JoinGroup order (a Java leader keeps them in a HashMap, whose order we reproduce).
    """
    order = hashmap_order(members, string_hash)
    subscribed = {mid: list(members[mid].subscription.topics) for mid in order}
    wanted = set().union(*subscribed.values()) if subscribed else set()
    ppt = {t: sorted(ps) for t, ps in partitions_per_topic.items() if t in wanted and ps}
    if not members:
        return {}, {}
    owned, several, claims = _claims(members, order, set(ppt))
    all_parts = [TopicPartition(t, p) for t in ppt for p in ppt[t]]
    rack = RackInfo(all_parts, partition_racks,
                    {mid: members[mid].subscription.rack_id for mid in order}, prefer_rack_aware)
    first = set(subscribed[order[0]])
    if all(set(ts) == first for ts in subscribed.values()):
        owned_in_java_order = {mid: owned[mid] for mid in hashmap_order(owned, string_hash)}
        return constrained_assign(ppt, rack, owned_in_java_order, several)
    return general_assign(ppt, rack, owned, subscribed, claims), None


class StickyAssignor(Assignor):
    """KIP-54 sticky assignor with the eager protocol; remembers its assignment in the user data."""

    name = "sticky"
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)
    rack_aware = True
    #: Use rack-aware assignment whenever racks match, even if every partition has the same racks
    #: (Java's test hook ``preferRackAwareLogic``; results then equal the rack-unaware ones).
    prefer_rack_aware = False

    def __init__(self) -> None:
        self.previous: list[TopicPartition] = []
        self.generation = -1

    def assign(self, partitions_per_topic: Mapping[str, Sequence[int]], members: Mapping[str, GroupMember],
               partition_racks: PartitionRacks | None = None) -> dict[str, Assignment]:
        target, _ = sticky_assign(partitions_per_topic, members, partition_racks, self.prefer_rack_aware)
        return {mid: Assignment(sorted(target.get(mid, []))) for mid in members}

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        if self.generation < 0 and not self.previous:
            return None
        return encode_sticky_user_data(self.previous, self.generation)

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.previous = list(assignment.partitions)
        self.generation = generation


class CooperativeStickyAssignor(StickyAssignor):
    """KIP-429: the sticky target, minus partitions still owned by someone else (they move next round)."""

    name = "cooperative-sticky"
    supported_protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def assign(self, partitions_per_topic: Mapping[str, Sequence[int]], members: Mapping[str, GroupMember],
               partition_racks: PartitionRacks | None = None) -> dict[str, Assignment]:
        target, moving = sticky_assign(partitions_per_topic, members, partition_racks, self.prefer_rack_aware)
        if moving is None:  # as Java: what someone owned and someone else gets now
            added = {tp: mid for mid, parts in target.items() for tp in parts
                     if tp not in set(member_owned(members[mid])[0])}
            revoked = {tp for mid, parts in target.items()
                       for tp in set(member_owned(members[mid])[0]) - set(parts)}
            moving = {tp: mid for tp, mid in added.items() if tp in revoked}
        return {mid: Assignment(sorted(tp for tp in target.get(mid, []) if tp not in moving))
                for mid in members}

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        # Java's CooperativeStickyAssignor layout; owned partitions travel in the subscription itself.
        return struct.pack(">i", self.generation)

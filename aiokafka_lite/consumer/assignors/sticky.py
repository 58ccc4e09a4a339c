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
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from ...errors import ProtocolError
from ...structs import TopicPartition
from ..group_protocol import Assignment, Reader, decode_topic_partitions, encode_topic_partitions
from .base import Assignor, GroupMember, RebalanceProtocol, subscribed_partitions


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


def resolve_owners(members: Mapping[str, GroupMember]) -> dict[TopicPartition, str]:
    """Resolve ownership claims: the highest generation wins; a tie at the top voids the partition."""
    claims: dict[TopicPartition, list[tuple[int, str]]] = defaultdict(list)
    for mid, m in members.items():
        owned, gen = member_owned(m)
        for tp in set(owned):
            claims[tp].append((gen, mid))
    owners: dict[TopicPartition, str] = {}
    for tp, cl in claims.items():
        cl.sort(reverse=True)
        if len(cl) > 1 and cl[0][0] == cl[1][0]:
            continue
        owners[tp] = cl[0][1]
    return owners


def sticky_assign(partitions_per_topic: Mapping[str, Sequence[int]],
                  members: Mapping[str, GroupMember]) -> tuple[dict[str, list[TopicPartition]],
                                                               dict[TopicPartition, str]]:
    """Return (target assignment, current owner of each claimed partition) for the sticky assignors.

    The target is balanced: no member can take a partition it subscribes to from a member that holds at
    least two more. Within that, owners keep as many of their partitions as balance allows.
    """
    potential = {mid: set(subscribed_partitions(partitions_per_topic, m.subscription.topics))
                 for mid, m in members.items()}
    owners = resolve_owners(members)
    if not members:
        return {}, owners
    # Owners keep what they still subscribe to and still exists.
    target: dict[str, list[TopicPartition]] = {mid: [] for mid in members}
    for tp, mid in sorted(owners.items()):
        if tp in potential[mid]:
            target[mid].append(tp)
    all_parts: set[TopicPartition] = set().union(*potential.values())

    identical = len({frozenset(p) for p in potential.values()}) == 1
    if identical:
        # Quotas: everyone gets floor(P/N), and P mod N members one more; owners keep up to their quota.
        n_parts, n_members = len(all_parts), len(members)
        low, extra = divmod(n_parts, n_members)
        # Members already holding the most get the extra slots, so the fewest partitions move.
        order = sorted(members, key=lambda mid: (-len(target[mid]), mid))
        for rank, mid in enumerate(order):
            quota = low + (1 if rank < extra else 0)
            if len(target[mid]) > quota:
                target[mid] = target[mid][:quota]

    owner: dict[TopicPartition, str] = {tp: mid for mid, parts in target.items() for tp in parts}
    consumers_of: dict[TopicPartition, list[str]] = defaultdict(list)
    for mid in sorted(members):
        for tp in potential[mid]:
            consumers_of[tp].append(mid)

    unassigned = sorted((tp for tp in all_parts if tp not in owner),
                        key=lambda tp: (len(consumers_of[tp]), tp))
    for tp in unassigned:
        best = min(consumers_of[tp], key=lambda mid: (len(target[mid]), mid))
        target[best].append(tp)
        owner[tp] = best

    if not identical:
        _rebalance(target, owner, potential, consumers_of)
    for parts in target.values():
        parts.sort()
    return target, owners


def _rebalance(target: dict[str, list[TopicPartition]], owner: dict[TopicPartition, str],
               potential: Mapping[str, set[TopicPartition]],
               consumers_of: Mapping[TopicPartition, list[str]]) -> None:
    """Move single partitions from fuller to emptier eligible members until none can move.

    Every move lowers the sum of squared member sizes, so the loop ends; the bound is a safety net.
    """
    for _ in range(len(owner) * len(target) + 1):
        moved = False
        for mid in sorted(target, key=lambda m: (-len(target[m]), m)):
            size = len(target[mid])
            # Prefer moving the partitions this member took most recently (the end of its list).
            for tp in reversed(target[mid]):
                takers = [c for c in consumers_of[tp] if len(target[c]) < size - 1]
                if takers:
                    dst = min(takers, key=lambda c: (len(target[c]), c))
                    target[mid].remove(tp)
                    target[dst].append(tp)
                    owner[tp] = dst
                    moved = True
                    break
            if moved:
                break
        if not moved:
            return


class StickyAssignor(Assignor):
    """KIP-54 sticky assignor with the eager protocol; remembers its assignment in the user data."""

    name = "sticky"
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def __init__(self) -> None:
        self.previous: list[TopicPartition] = []
        self.generation = -1

    def assign(self, partitions_per_topic: Mapping[str, Sequence[int]],
               members: Mapping[str, GroupMember]) -> dict[str, Assignment]:
        target, _ = sticky_assign(partitions_per_topic, members)
        return {mid: Assignment(parts) for mid, parts in target.items()}

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

    def assign(self, partitions_per_topic: Mapping[str, Sequence[int]],
               members: Mapping[str, GroupMember]) -> dict[str, Assignment]:
        target, owner = sticky_assign(partitions_per_topic, members)
        out = {}
        for mid, parts in target.items():
            kept = [tp for tp in parts if owner.get(tp, mid) == mid]
            out[mid] = Assignment(kept)
        return out

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        # Java's CooperativeStickyAssignor layout; owned partitions travel in the subscription itself.
        return struct.pack(">i", self.generation)

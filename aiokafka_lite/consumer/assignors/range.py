"""RangeAssignor: per topic, consecutive ranges of partitions to the members subscribed to it.

Same result as Java's RangeAssignor and librdkafka's "range" (members ordered by group instance id, then
member id; the first ``partitions % members`` members get one extra), so a mixed group agrees whoever leads.

Rack awareness (KIP-881) follows Java's algorithm step for step, because a mixed group must agree: when some
member names a rack that some replica is in (and the partitions' rack sets are not all the same), each member
first takes partitions with a replica in its rack (co-partitioned topics with the same members are matched
partition by partition so joins stay local), up to its range quota; the ranges then fill what is left.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from ...structs import TopicPartition
from ..group_protocol import Assignment
from .base import Assignor, GroupMember, sorted_members

PartitionRacks = Mapping[str, Mapping[int, frozenset[str]]]


def use_rack_aware(member_racks: set[str], all_partition_racks: set[str],
                   per_partition: Sequence[frozenset[str]]) -> bool:
    """Java's rule: some member rack is a replica rack, and not every partition has the same rack set."""
    if not member_racks or member_racks.isdisjoint(all_partition_racks):
        return False
    return not all(r == all_partition_racks for r in per_partition)


class _TopicState:
    def __init__(self, topic: str, parts: list[int], consumers: list[GroupMember],
                 racks: Mapping[int, frozenset[str]] | None) -> None:
        self.topic = topic
        self.consumers = [m.member_id for m in consumers]
        self.rack = {m.member_id: m.subscription.rack_id or None for m in consumers}
        self.unassigned = list(parts)
        self.count = dict.fromkeys(self.consumers, 0)
        self.per, self.extra = divmod(len(parts), len(consumers))
        member_racks = {r for r in self.rack.values() if r}
        self.partition_racks: dict[int, frozenset[str]] = {}
        all_racks: set[str] = set()
        if member_racks:
            for p in parts:
                r = frozenset((racks or {}).get(p, frozenset()))
                self.partition_racks[p] = r
                all_racks |= r
        self.needs_rack = use_rack_aware(member_racks, all_racks, list(self.partition_racks.values()))
        self.n_partitions = len(parts)

    def racks_match(self, member: str, p: int) -> bool:
        rack = self.rack[member]
        return rack is None or rack in self.partition_racks.get(p, frozenset())

    def max_assignable(self, member: str) -> int:
        return max(0, self.per + (1 if self.extra > 0 else 0) - self.count[member])

    def take(self, member: str, ps: list[int], out: dict[str, list[TopicPartition]]) -> None:
        out[member].extend(TopicPartition(self.topic, p) for p in ps)
        self.count[member] += len(ps)
        if self.count[member] > self.per:
            self.extra -= 1
        taken = set(ps)
        self.unassigned = [p for p in self.unassigned if p not in taken]


def _assign_ranges(st: _TopicState, may: Callable[[str, int], bool],
                   out: dict[str, list[TopicPartition]]) -> None:
    for m in st.consumers:
        if not st.unassigned:
            break
        limit = st.max_assignable(m)
        ps = [p for p in st.unassigned if may(m, p)][:limit]
        if ps:
            st.take(m, ps, out)


def _assign_co_partitioned(consumers: list[str], n: int, states: list[_TopicState],
                           out: dict[str, list[TopicPartition]]) -> None:
    remaining = list(consumers)
    for p in range(n):
        match = next((c for c in remaining
                      if all(s.racks_match(c, p) and s.max_assignable(c) > 0 for s in states)), None)
        if match is None:
            continue
        for s in states:
            s.take(match, [p], out)
        if all(s.max_assignable(match) == 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break


class RangeAssignor(Assignor):
    name = "range"
    rack_aware = True

    def assign(self, partitions_per_topic: Mapping[str, Sequence[int]],
               members: Mapping[str, GroupMember],
               partition_racks: PartitionRacks | None = None) -> dict[str, Assignment]:
        by_topic: dict[str, list[GroupMember]] = defaultdict(list)
        for m in members.values():
            for t in set(m.subscription.topics):
                by_topic[t].append(m)
        out: dict[str, list[TopicPartition]] = {m: [] for m in members}
        states = []
        for topic in sorted(by_topic):
            parts = sorted(partitions_per_topic.get(topic, ()))
            if parts:
                states.append(_TopicState(topic, parts, sorted_members(by_topic[topic]),
                                          (partition_racks or {}).get(topic)))
        rack_aware = any(s.needs_rack for s in states)
        if rack_aware:
            groups: dict[tuple[tuple[str, ...], int], list[_TopicState]] = defaultdict(list)
            for s in states:
                groups[(tuple(s.consumers), len(s.partition_racks))].append(s)
            for (consumers, n), group in groups.items():
                if len(group) > 1:
                    _assign_co_partitioned(list(consumers), n, group, out)
                elif group[0].needs_rack:
                    _assign_ranges(group[0], group[0].racks_match, out)
        for s in states:
            _assign_ranges(s, lambda _m, _p: True, out)
        if rack_aware:
            for tps in out.values():
                tps.sort()
        return {m: Assignment(tps) for m, tps in out.items()}

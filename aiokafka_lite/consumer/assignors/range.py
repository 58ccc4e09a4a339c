"""RangeAssignor: per topic, consecutive ranges of partitions to the members subscribed to it.

Same result as Java's RangeAssignor and librdkafka's "range" (members ordered by group instance id, then
member id; the first ``partitions % members`` members get one extra), so a mixed group agrees whoever leads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from ...structs import TopicPartition
from ..group_protocol import Assignment
from .base import Assignor, GroupMember, sorted_members


class RangeAssignor(Assignor):
    name = "range"

    def assign(self, partitions_per_topic: Mapping[str, Sequence[int]],
               members: Mapping[str, GroupMember]) -> dict[str, Assignment]:
        by_topic: dict[str, list[GroupMember]] = defaultdict(list)
        for m in members.values():
            for t in set(m.subscription.topics):
                by_topic[t].append(m)
        out: dict[str, list[TopicPartition]] = {m: [] for m in members}
        for topic in sorted(by_topic):
            parts = sorted(partitions_per_topic.get(topic, ()))
            if not parts:
                continue
            consumers = sorted_members(by_topic[topic])
            per, extra = divmod(len(parts), len(consumers))
            start = 0
            for i, m in enumerate(consumers):
                n = per + (1 if i < extra else 0)
                out[m.member_id].extend(TopicPartition(topic, p) for p in parts[start:start + n])
                start += n
        return {m: Assignment(tps) for m, tps in out.items()}

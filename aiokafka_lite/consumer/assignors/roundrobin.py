"""RoundRobinAssignor: all subscribed partitions, in (topic, partition) order, dealt out in turn.

A partition goes to the next member in the cycle that subscribes to its topic, as Java's RoundRobinAssignor
and librdkafka's "roundrobin" do, so they compute the same assignment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...structs import TopicPartition
from ..group_protocol import Assignment
from .base import Assignor, GroupMember, sorted_members, subscribed_partitions


class RoundRobinAssignor(Assignor):
    name = "roundrobin"

    def assign(self, partitions_per_topic: Mapping[str, Sequence[int]],
               members: Mapping[str, GroupMember]) -> dict[str, Assignment]:
        out: dict[str, list[TopicPartition]] = {m: [] for m in members}
        ring = sorted_members(members.values())
        if not ring:
            return {}
        all_topics = {t for m in ring for t in m.subscription.topics}
        subs = {m.member_id: set(m.subscription.topics) for m in ring}
        i = 0
        for tp in subscribed_partitions(partitions_per_topic, all_topics):
            for _ in range(len(ring)):
                m = ring[i % len(ring)]
                i += 1
                if tp.topic in subs[m.member_id]:
                    out[m.member_id].append(tp)
                    break
        return {m: Assignment(tps) for m, tps in out.items()}

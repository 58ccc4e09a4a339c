"""The assignor interface: the group leader turns every member's subscription into assignments.

Assignors are pure functions of (partitions per topic, members) so that they can be tested without a broker
and give the same answer as the Java and librdkafka assignors of the same name in a mixed group.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ...structs import TopicPartition
from ..group_protocol import Assignment, Subscription


class RebalanceProtocol(enum.IntEnum):
    """EAGER revokes everything before rejoining; COOPERATIVE (KIP-429) revokes only what moves."""

    EAGER = 0
    COOPERATIVE = 1


@dataclass
class GroupMember:
    """A member as the leader sees it in the JoinGroup response."""

    member_id: str
    subscription: Subscription
    group_instance_id: str | None = None

    def sort_key(self) -> tuple[int, str, str]:
        # Static members order by their stable instance id so that a restart keeps their partitions.
        if self.group_instance_id is not None:
            return (0, self.group_instance_id, self.member_id)
        return (1, "", self.member_id)


class Assignor(ABC):
    """Base of every assignor; ``name`` is the protocol name sent in JoinGroup."""

    name: str = ""
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    @abstractmethod
    def assign(self, partitions_per_topic: Mapping[str, Sequence[int]],
               members: Mapping[str, GroupMember]) -> dict[str, Assignment]:
        """Assign every partition of the subscribed topics to one member; every member gets an entry."""

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        """Bytes this member adds to its subscription (the sticky assignors remember their assignment)."""
        return None

    def on_assignment(self, assignment: Assignment, generation: int) -> None:  # noqa: B027
        """Called with this member's assignment after every SyncGroup (optional hook)."""


def sorted_members(members: Iterable[GroupMember]) -> list[GroupMember]:
    return sorted(members, key=GroupMember.sort_key)


def subscribed_partitions(partitions_per_topic: Mapping[str, Sequence[int]],
                          topics: Iterable[str]) -> list[TopicPartition]:
    """Partitions of the given topics that exist in metadata, sorted by (topic, partition)."""
    out = []
    for t in sorted(set(topics)):
        for p in sorted(partitions_per_topic.get(t, ())):
            out.append(TopicPartition(t, p))
    return out


def empty_assignments(members: Iterable[str]) -> dict[str, list[TopicPartition]]:
    return {m: [] for m in members}

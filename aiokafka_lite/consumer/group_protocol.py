"""The consumer's embedded group protocol: member subscriptions and assignments inside JoinGroup/SyncGroup.

The wire formats (ConsumerProtocolSubscription / ConsumerProtocolAssignment v0-v3, an int16 version then the
body; newer versions read with the newest layout) belong to the protocol layer; this module converts them to
and from the consumer's own value types, whose partitions are :class:`TopicPartition` lists, and checks what
another member sent (bytes from a peer that do not decode raise :class:`ProtocolError`).
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import ProtocolError
from ..protocol import Reader
from ..protocol import consumer_protocol as cp
from ..protocol.messages import consumer_protocol_assignment as cpa
from ..protocol.messages import consumer_protocol_subscription as cps
from ..structs import TopicPartition

#: The versions we write: v3 carries owned partitions, generation and rack, which cooperative rebalancing
#: and the sticky assignors of Java and librdkafka read.
#: The protocol type of consumer groups in JoinGroup and DescribeGroups.
PROTOCOL_TYPE = "consumer"
SUBSCRIPTION_VERSION = 3
ASSIGNMENT_VERSION = 3

_I32 = struct.Struct(">i")


@dataclass
class Subscription:
    """One member's subscription as sent in JoinGroup."""

    topics: list[str]
    user_data: bytes | None = None
    owned_partitions: list[TopicPartition] = field(default_factory=list)
    generation_id: int = -1
    rack_id: str | None = None
    version: int = SUBSCRIPTION_VERSION


@dataclass
class Assignment:
    """One member's assignment as sent in SyncGroup."""

    partitions: list[TopicPartition]
    user_data: bytes | None = None
    version: int = ASSIGNMENT_VERSION


def _group(partitions: Iterable[TopicPartition]) -> list[tuple[str, list[int]]]:
    by_topic: dict[str, list[int]] = defaultdict(list)
    for tp in partitions:
        by_topic[tp.topic].append(tp.partition)
    return [(t, sorted(ps)) for t, ps in sorted(by_topic.items())]


def encode_subscription(sub: Subscription, version: int = SUBSCRIPTION_VERSION) -> bytes:
    if not 0 <= version <= 3:
        raise ValueError(f"ConsumerProtocolSubscription version {version} is not 0-3")
    msg = cps.ConsumerProtocolSubscription(
        topics=sorted(sub.topics), user_data=sub.user_data,
        owned_partitions=[cps.TopicPartition(topic=t, partitions=ps)
                          for t, ps in _group(sub.owned_partitions)] if version >= 1 else [],
        generation_id=sub.generation_id if version >= 2 else -1,
        rack_id=sub.rack_id if version >= 3 else None)
    return cp.encode_subscription(msg, version)


def decode_subscription(data: bytes | memoryview | None) -> Subscription:
    sent, msg = cp.decode_subscription(data or b"")
    owned = [TopicPartition(t.topic, p) for t in msg.owned_partitions for p in t.partitions]
    return Subscription(list(msg.topics), msg.user_data, owned, msg.generation_id, msg.rack_id, sent)


def encode_assignment(assignment: Assignment, version: int = ASSIGNMENT_VERSION) -> bytes:
    if not 0 <= version <= 3:
        raise ValueError(f"ConsumerProtocolAssignment version {version} is not 0-3")
    msg = cpa.ConsumerProtocolAssignment(
        assigned_partitions=[cpa.TopicPartition(topic=t, partitions=ps)
                             for t, ps in _group(assignment.partitions)],
        user_data=assignment.user_data)
    return cp.encode_assignment(msg, version)


def decode_assignment(data: bytes | memoryview | None) -> Assignment:
    """An empty SyncGroup assignment (the broker sends b"" when the leader gave us nothing) is empty."""
    if not data:
        return Assignment([], None, 0)
    sent, msg = cp.decode_assignment(data)
    parts = [TopicPartition(t.topic, p) for t in msg.assigned_partitions for p in t.partitions]
    return Assignment(parts, msg.user_data, sent)


# -- the sticky assignors' user data: [topic string, [partition int32]] (+ generation int32) -------------

def encode_topic_partitions(partitions: Iterable[TopicPartition]) -> bytearray:
    out = bytearray()
    grouped = _group(partitions)
    out += _I32.pack(len(grouped))
    for topic, parts in grouped:
        raw = topic.encode("utf-8")
        out += struct.pack(">h", len(raw)) + raw + _I32.pack(len(parts))
        for p in parts:
            out += _I32.pack(p)
    return out


def decode_topic_partitions(reader: Reader) -> list[TopicPartition]:
    out: list[TopicPartition] = []
    n_topics = reader.array_len()
    for _ in range(max(n_topics, 0)):
        topic = reader.string()
        for _ in range(max(reader.array_len(), 0)):
            out.append(TopicPartition(topic, reader.int32()))
    return out


__all__ = [
    "PROTOCOL_TYPE",
    "Assignment",
    "ProtocolError",
    "Reader",
    "Subscription",
    "decode_assignment",
    "decode_subscription",
    "decode_topic_partitions",
    "encode_assignment",
    "encode_subscription",
    "encode_topic_partitions",
]

"""Offsets as Spark's checkpoint stores them, and the starting/ending offset specifications.

A stream's position belongs to Spark's checkpoint, never to a consumer group. Its JSON form is the one
Spark's own Kafka source writes, ``{"topic": {"0": 42, "1": 7}}``: the next offset to read per
partition, so a micro-batch covers ``[start, end)``. Keys are sorted (topics by name, partitions by
number) because Spark compares offsets by their serialized text: two equal positions must serialize
identically or Spark would see "new data" that is not there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ConfigError, IllegalArgumentError
from ..structs import TopicPartition

__all__ = [
    "EARLIEST",
    "LATEST",
    "OffsetSpec",
    "PartitionOffsets",
    "from_json_dict",
    "parse_partition_json",
    "to_json_dict",
]

#: Special values in startingOffsets / endingOffsets JSON, as in Spark.
EARLIEST = -2
LATEST = -1

PartitionOffsets = dict[TopicPartition, int]


def to_json_dict(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """``{tp: n}`` -> ``{"topic": {"0": n}}`` with deterministic (sorted) key order."""
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return out


def from_json_dict(data: Any, what: str = "offset") -> PartitionOffsets:
    """The inverse of :func:`to_json_dict`; anything malformed raises IllegalArgumentError.

    The input comes from Spark's checkpoint (the offset log), so a failure here means the checkpoint
    was written by a different source or edited by hand.
    """
    if not isinstance(data, dict):
        raise IllegalArgumentError(f"{what} must be a JSON object of topics, got {type(data).__name__}")
    out: PartitionOffsets = {}
    for topic, parts in data.items():
        if not isinstance(topic, str) or not isinstance(parts, dict):
            raise IllegalArgumentError(f"{what}: topic {topic!r} must map partition numbers to offsets")
        for part, offset in parts.items():
            try:
                partition = int(part)
            except (TypeError, ValueError):
                raise IllegalArgumentError(
                    f"{what}: partition {part!r} of topic {topic!r} is not a number") from None
            if not isinstance(offset, int) or isinstance(offset, bool) or partition < 0:
                raise IllegalArgumentError(f"{what}: bad entry {topic!r}/{part!r}: {offset!r}")
            out[TopicPartition(topic, partition)] = offset
    return out


def parse_partition_json(text: str, option: str) -> PartitionOffsets:
    """Parse a user option like ``{"topicA":{"0":23,"1":-1}}`` (offsets or timestamps)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"option {option!r} is not valid JSON ({exc}): {text!r}") from None
    if not isinstance(data, dict) or not data:
        raise ConfigError(
            f"option {option!r} must be JSON like {{\"topicA\":{{\"0\":23,\"1\":-1}}}}, got {text!r}")
    try:
        out = from_json_dict(data, f"option {option!r}")
    except IllegalArgumentError as exc:
        raise ConfigError(str(exc.args[0])) from None
    if not out:
        raise ConfigError(f"option {option!r} names no partitions")
    return out


@dataclass(frozen=True)
class OffsetSpec:
    """Where to start or stop: earliest, latest, per-partition offsets, or by record timestamp.

    ``specific`` offsets may hold :data:`EARLIEST` / :data:`LATEST`; ``by_timestamp`` maps partitions to
    a timestamp (ms) and resolves to the first offset whose record timestamp is >= it.
    """

    kind: Literal["earliest", "latest", "specific", "timestamp", "by_timestamp"]
    offsets: Mapping[TopicPartition, int] | None = None
    timestamp_ms: int | None = None

    @classmethod
    def earliest(cls) -> OffsetSpec:
        return cls("earliest")

    @classmethod
    def latest(cls) -> OffsetSpec:
        return cls("latest")

    @classmethod
    def specific(cls, offsets: Mapping[TopicPartition, int]) -> OffsetSpec:
        return cls("specific", offsets=dict(offsets))

    @classmethod
    def timestamp(cls, ms: int) -> OffsetSpec:
        return cls("timestamp", timestamp_ms=ms)

    @classmethod
    def by_timestamp(cls, per_partition: Mapping[TopicPartition, int]) -> OffsetSpec:
        return cls("by_timestamp", offsets=dict(per_partition))

    def partition_values(self) -> Mapping[TopicPartition, int]:
        """The per-partition values of a ``specific`` / ``by_timestamp`` spec (empty otherwise)."""
        return self.offsets or {}

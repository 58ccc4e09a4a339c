"""aiokafka's value types (``aiokafka.structs``), field for field.

They differ from aiokafka_lite's on purpose, so they live here: aiokafka's ``OffsetAndMetadata`` and
``OffsetAndTimestamp`` are 2-tuples (``offset, ts = ...`` unpacks them), its ``RecordMetadata`` carries
``topic_partition`` and ``timestamp_type`` as fields in that positional order, and its ``ConsumerRecord``
is a dataclass (not a tuple: frameworks tell a record from a batch with ``isinstance(raw, tuple)``) with
``checksum``. ``TopicPartition`` is the native one (the same fields in both).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from ..structs import ConsumerRecord as NativeRecord
from ..structs import RecordMetadata as NativeMetadata
from ..structs import TopicPartition

KT = TypeVar("KT")
VT = TypeVar("VT")


class OffsetAndMetadata(NamedTuple):
    """A committed position: the next offset to read, and free-form metadata."""

    offset: int
    metadata: str


class OffsetAndTimestamp(NamedTuple):
    """``offsets_for_times``'s answer for a partition."""

    offset: int
    timestamp: int | None


class BrokerMetadata(NamedTuple):
    nodeId: int | str
    host: str
    port: int
    rack: str | None


class PartitionMetadata(NamedTuple):
    topic: str
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]
    error: Any


class RecordMetadata(NamedTuple):
    """Where the broker put a produced record (aiokafka's field order)."""

    topic: str
    partition: int
    topic_partition: TopicPartition
    offset: int
    timestamp: int | None
    timestamp_type: int
    log_start_offset: int | None


def record_metadata(md: NativeMetadata) -> RecordMetadata:
    """aiokafka's RecordMetadata for the native one. aiokafka reports the broker's time with
    LogAppendTime and the producer's otherwise; the native keeps both."""
    log_append = md.log_append_time >= 0
    return RecordMetadata(md.topic, md.partition, TopicPartition(md.topic, md.partition), md.offset,
                          md.log_append_time if log_append else md.timestamp, 1 if log_append else 0, -1)


@dataclass
class ConsumerRecord(Generic[KT, VT]):
    """One consumed record, as aiokafka's dataclass. ``checksum`` is None: v2 batches have no per-record
    CRC (aiokafka also reports None for them)."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: KT | None
    value: VT | None
    checksum: int | None
    serialized_key_size: int
    serialized_value_size: int
    headers: Sequence[tuple[str, bytes | None]]


def consumer_record(r: NativeRecord[Any, Any]) -> ConsumerRecord[Any, Any]:
    """aiokafka's ConsumerRecord for the native one."""
    return ConsumerRecord(r.topic, r.partition, r.offset, r.timestamp, r.timestamp_type, r.key, r.value, None,
                          r.serialized_key_size, r.serialized_value_size, r.headers)


__all__ = ["BrokerMetadata", "ConsumerRecord", "OffsetAndMetadata", "OffsetAndTimestamp", "PartitionMetadata",
           "RecordMetadata", "TopicPartition"]

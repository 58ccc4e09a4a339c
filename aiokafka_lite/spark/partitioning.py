"""Splitting a micro-batch (or a batch read) into Spark tasks: one offset range per task.

As in Spark's own Kafka source, each Kafka partition's range ``[start, end)`` becomes one task, unless
``maxRecordsPerPartition`` caps a task's size or ``minPartitions`` asks for more tasks than there are
Kafka partitions; then ranges are cut into contiguous pieces, the bigger ranges into more pieces.
Pieces never overlap and always cover the whole range, so the tasks together read each offset once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql.datasource import InputPartition

from ..structs import TopicPartition

__all__ = ["KafkaInputPartition", "OffsetRange", "plan_ranges"]


@dataclass(frozen=True, order=True)
class OffsetRange:
    """Offsets ``[start, end)`` of one Kafka partition."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return max(0, self.end - self.start)

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


class KafkaInputPartition(InputPartition):
    """What one Spark task reads; a plain picklable value (no client, no socket)."""

    def __init__(self, index: int, range_: OffsetRange) -> None:
        super().__init__(index)
        self.range = range_

    def __repr__(self) -> str:
        r = self.range
        return f"KafkaInputPartition({self.value}, {r.topic}-{r.partition} [{r.start}, {r.end}))"


def _divide(rng: OffsetRange, parts: int) -> list[OffsetRange]:
    """Cut a range into ``parts`` contiguous pieces whose sizes differ by at most one."""
    parts = max(1, min(parts, rng.size))
    base, extra = divmod(rng.size, parts)
    out: list[OffsetRange] = []
    start = rng.start
    for i in range(parts):
        end = start + base + (1 if i < extra else 0)
        out.append(OffsetRange(rng.topic, rng.partition, start, end))
        start = end
    return out


def plan_ranges(start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int], *,
                min_partitions: int | None = None,
                max_records_per_partition: int | None = None) -> list[OffsetRange]:
    """The offset ranges of one read, in a deterministic order; empty ranges are dropped.

    ``start`` must hold every partition of ``end``.
    """
    ranges = [OffsetRange(tp.topic, tp.partition, start[tp], end[tp]) for tp in sorted(end)]
    ranges = [r for r in ranges if r.size > 0]
    if max_records_per_partition is not None:
        ranges = [piece for r in ranges for piece in _divide(r, -(-r.size // max_records_per_partition))]
    if min_partitions is not None and len(ranges) < min_partitions:
        total = sum(r.size for r in ranges)
        ranges = [piece for r in ranges
                  for piece in _divide(r, max(1, round(r.size / total * min_partitions)))]
    return ranges

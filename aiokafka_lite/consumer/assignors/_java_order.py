"""The iteration order of Java's HashMap / HashSet, for the few places where Java's sticky assignor
lets it decide the result (which member keeps its owned partitions first, which moved partition moves
back). Reproducing it is what makes a mixed group agree with a Java leader on the same inputs.

A HashMap's table starts at 16 buckets and doubles whenever it holds more than 3/4 of that; entries are
visited bucket by bucket (bucket = spread hash & (size - 1)), and in insertion order within a bucket
(resizes split chains without reordering them). Bins that Java turns into trees (8+ collisions in one
bucket) are not modelled: member ids and partitions do not collide that much.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

from ...structs import TopicPartition

K = TypeVar("K", bound=Hashable)

_MASK = 0xFFFFFFFF


def string_hash(s: str) -> int:
    """java.lang.String.hashCode() as an unsigned 32-bit value (over UTF-16 code units)."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK
    return h


def tp_hash(tp: TopicPartition) -> int:
    """org.apache.kafka.common.TopicPartition.hashCode() (unsigned 32-bit)."""
    return (31 * (31 + tp.partition) + string_hash(tp.topic)) & _MASK


def _bucket(h: int, size: int) -> int:
    return (h ^ (h >> 16)) & (size - 1)


def table_size(entries: int, start: int = 16) -> int:
    """Buckets of a HashMap made with ``start`` buckets once it has held ``entries`` entries."""
    size = start
    while entries > size * 3 // 4:
        size *= 2
    return size


def hashmap_order(keys: Iterable[K], hash_fn: Callable[[K], int], size: int | None = None) -> list[K]:
    """``keys`` (distinct, in insertion order) in the order a java.util.HashMap iterates them."""
    items = list(keys)
    n = table_size(len(items)) if size is None else size
    hashes = [hash_fn(k) for k in items]
    order = sorted(range(len(items)), key=lambda i: (_bucket(hashes[i], n), i))
    return [items[i] for i in order]


class JavaHashSet:
    """Just enough of java.util.HashSet[TopicPartition] to know which element ``iterator().next()`` gives."""

    def __init__(self) -> None:
        self._seq: dict[TopicPartition, int] = {}
        self._next = 0
        self._size = 16

    def add(self, tp: TopicPartition) -> None:
        if tp not in self._seq:
            self._seq[tp] = self._next
            self._next += 1
            self._size = max(self._size, table_size(len(self._seq)))

    def discard(self, tp: TopicPartition) -> None:
        self._seq.pop(tp, None)

    def __len__(self) -> int:
        return len(self._seq)

    def first(self) -> TopicPartition:
        return min(self._seq, key=lambda tp: (_bucket(tp_hash(tp), self._size), self._seq[tp]))

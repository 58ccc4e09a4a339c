"""aiokafka's ``aiokafka.partitioner``: ``DefaultPartitioner`` and ``murmur2``.

Passing ``DefaultPartitioner`` (or an instance) as ``partitioner`` to the compat producer selects the
native default, which hashes keys with the same murmur2 (Java's); keyless records then go to a sticky
partition per batch, where aiokafka picks one at random per record.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..producer.partitioner import murmur2 as _signed_murmur2


def murmur2(data: bytes) -> int:
    """Java's murmur2 of ``data`` as aiokafka returns it: unsigned 32 bits."""
    return _signed_murmur2(data) & 0xFFFFFFFF


class DefaultPartitioner:
    """``partitioner(key, all_partitions, available)``: murmur2 of the key, or a random partition."""

    @classmethod
    def __call__(cls, key: bytes | None, all_partitions: Sequence[int], available: Sequence[int]) -> int:
        if key is None:
            return random.choice(available or all_partitions)
        return all_partitions[(murmur2(key) & 0x7FFFFFFF) % len(all_partitions)]


__all__ = ["DefaultPartitioner", "murmur2"]

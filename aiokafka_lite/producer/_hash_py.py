"""Pure-Python twin of ``_hash.pyx``: the key hashes the partitioners need.

Used when the compiled module is absent (AIOKAFKA_LITE_NO_EXT=1 or no compiler); the results are
identical, only slower. Each hash returns what its reference implementation returns, so that keyed
records land where Java, librdkafka and Sarama producers put them.
"""

from __future__ import annotations

import struct

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Java's ``Utils.murmur2``: 32-bit MurmurHash2, seed 0x9747b28c, as a signed int."""
    data = bytes(data)
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    n4 = length >> 2
    if n4:
        for k in struct.unpack_from(f"<{n4}I", data):
            k = (k * _M) & _MASK
            k ^= k >> 24
            k = (k * _M) & _MASK
            h = ((h * _M) & _MASK) ^ k
    tail = length & 3
    base = length & ~3
    if tail == 3:
        h ^= data[base + 2] << 16
    if tail >= 2:
        h ^= data[base + 1] << 8
    if tail >= 1:
        h ^= data[base]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - 0x100000000 if h & 0x80000000 else h


def murmur2_partition(key: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """``toPositive(murmur2(key)) % num_partitions``, the Java default partitioner's choice for a key."""
    if num_partitions <= 0:
        raise ValueError("num_partitions must be > 0")
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions


def fnv1a(data: bytes | bytearray | memoryview) -> int:
    """32-bit FNV-1a as a signed int (Sarama's ``hash/fnv`` New32a)."""
    h = 0x811C9DC5
    for b in bytes(data):
        h = ((h ^ b) * 0x01000193) & _MASK
    return h - 0x100000000 if h & 0x80000000 else h


def fnv1a_partition(key: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """Sarama's hash partitioner: ``abs(int32(fnv1a(key)) % n)`` (librdkafka's ``fnv1a`` agrees)."""
    if num_partitions <= 0:
        raise ValueError("num_partitions must be > 0")
    # Go's % truncates toward zero, so the remainder keeps the dividend's sign; abs() of it.
    return abs(fnv1a(key)) % num_partitions

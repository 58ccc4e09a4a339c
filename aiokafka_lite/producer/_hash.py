# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, annotation_typing=False
"""The key hashes the partitioners need.

Each hash returns what its reference implementation returns, so that keyed records land where Java,
librdkafka and Sarama producers put them. One source for both forms: setup.py compiles this module with
Cython, ``_hash.pxd`` making the hash loops C functions over the key's bytes (32-bit unsigned locals, so
the ``& _MASK`` cost nothing there); run as Python (``AIOKAFKA_LITE_PURE=1``, or not built) it is the same
code over the ``bytes``.
"""

from __future__ import annotations

# Constants as module globals, so that compiled they are C integers (_hash.pxd), not Python ints.
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF
_MURMUR2_SEED = 0x9747B28C
_FNV_BASIS = 0x811C9DC5
_INT32_SIGN = 0x80000000
_INT32_WRAP = 0x100000000


def _murmur2(data: bytes, length: int) -> int:
    """32-bit MurmurHash2 (seed 0x9747b28c) of ``data[:length]``, unsigned."""
    m = _M
    h = (_MURMUR2_SEED ^ length) & _MASK
    for i in range(0, length & ~3, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * m) & _MASK
        k ^= k >> 24
        k = (k * m) & _MASK
        h = ((h * m) & _MASK) ^ k
    base = length & ~3
    tail = length & 3
    if tail == 3:
        h ^= data[base + 2] << 16
    if tail >= 2:
        h ^= data[base + 1] << 8
    if tail >= 1:
        h ^= data[base]
        h = (h * m) & _MASK
    h ^= h >> 13
    h = (h * m) & _MASK
    h ^= h >> 15
    return h


def _fnv1a(data: bytes, length: int) -> int:
    """32-bit FNV-1a of ``data[:length]``, unsigned."""
    h = _FNV_BASIS
    for i in range(length):
        h = ((h ^ data[i]) * 0x01000193) & _MASK
    return h


def _signed(h: int) -> int:
    """A 32-bit unsigned hash as Java's and Go's int32."""
    return h - _INT32_WRAP if h & _INT32_SIGN else h


def _key(data: bytes | bytearray | memoryview, num_partitions: int) -> bytes:
    """The key as bytes (a copy only if it is not bytes); ``num_partitions`` checked."""
    if num_partitions <= 0:
        raise ValueError("num_partitions must be > 0")
    return data if type(data) is bytes else bytes(data)


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Java's ``Utils.murmur2``: 32-bit MurmurHash2, seed 0x9747b28c, as a signed int."""
    key = _key(data, 1)
    return _signed(_murmur2(key, len(key)))


def murmur2_partition(data: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """``toPositive(murmur2(key)) % num_partitions``, the Java default partitioner's choice for a key."""
    key = _key(data, num_partitions)
    return (_murmur2(key, len(key)) & 0x7FFFFFFF) % num_partitions


def fnv1a(data: bytes | bytearray | memoryview) -> int:
    """32-bit FNV-1a as a signed int (Sarama's ``hash/fnv`` New32a)."""
    key = _key(data, 1)
    return _signed(_fnv1a(key, len(key)))


def fnv1a_partition(data: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """Sarama's hash partitioner: ``abs(int32(fnv1a(key)) % n)`` (librdkafka's ``fnv1a`` agrees)."""
    # Go's % truncates toward zero, so the remainder keeps the dividend's sign; abs() of it.
    return abs(fnv1a(_key(data, num_partitions))) % num_partitions

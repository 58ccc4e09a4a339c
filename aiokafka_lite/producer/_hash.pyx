# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled key hashes for the partitioners; ``_hash_py.py`` is the pure-Python twin (same results)."""

from libc.stdint cimport int32_t, int64_t, uint32_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE


cdef inline uint32_t _murmur2(const unsigned char* data, Py_ssize_t length) noexcept nogil:
    cdef uint32_t m = 0x5BD1E995
    cdef uint32_t h = 0x9747B28CU ^ <uint32_t>length
    cdef uint32_t k
    cdef Py_ssize_t i, n4 = length >> 2, base
    for i in range(n4):
        k = (<uint32_t>data[4 * i]) | (<uint32_t>data[4 * i + 1] << 8) | \
            (<uint32_t>data[4 * i + 2] << 16) | (<uint32_t>data[4 * i + 3] << 24)
        k *= m
        k ^= k >> 24
        k *= m
        h *= m
        h ^= k
    base = length & ~3
    i = length & 3
    if i == 3:
        h ^= <uint32_t>data[base + 2] << 16
    if i >= 2:
        h ^= <uint32_t>data[base + 1] << 8
    if i >= 1:
        h ^= <uint32_t>data[base]
        h *= m
    h ^= h >> 13
    h *= m
    h ^= h >> 15
    return h


cdef inline uint32_t _fnv1a(const unsigned char* data, Py_ssize_t length) noexcept nogil:
    cdef uint32_t h = 0x811C9DC5U
    cdef Py_ssize_t i
    for i in range(length):
        h = (h ^ data[i]) * 0x01000193
    return h


def murmur2(data) -> int:
    """Java's ``Utils.murmur2``: 32-bit MurmurHash2, seed 0x9747b28c, as a signed int."""
    cdef const unsigned char[::1] view
    if type(data) is bytes:
        return <int32_t>_murmur2(<const unsigned char*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))
    view = memoryview(data).cast("B")
    if view.shape[0] == 0:
        return <int32_t>_murmur2(<const unsigned char*>b"", 0)
    return <int32_t>_murmur2(&view[0], view.shape[0])


def murmur2_partition(data, Py_ssize_t num_partitions) -> int:
    """``toPositive(murmur2(key)) % num_partitions``, the Java default partitioner's choice for a key."""
    cdef uint32_t h
    cdef const unsigned char[::1] view
    if num_partitions <= 0:
        raise ValueError("num_partitions must be > 0")
    if type(data) is bytes:
        h = _murmur2(<const unsigned char*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))
    else:
        view = memoryview(data).cast("B")
        if view.shape[0] == 0:
            h = _murmur2(<const unsigned char*>b"", 0)
        else:
            h = _murmur2(&view[0], view.shape[0])
    return <Py_ssize_t>(h & 0x7FFFFFFF) % num_partitions


def fnv1a(data) -> int:
    """32-bit FNV-1a as a signed int (Sarama's ``hash/fnv`` New32a)."""
    cdef const unsigned char[::1] view
    if type(data) is bytes:
        return <int32_t>_fnv1a(<const unsigned char*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))
    view = memoryview(data).cast("B")
    if view.shape[0] == 0:
        return <int32_t>_fnv1a(<const unsigned char*>b"", 0)
    return <int32_t>_fnv1a(&view[0], view.shape[0])


def fnv1a_partition(data, Py_ssize_t num_partitions) -> int:
    """Sarama's hash partitioner: ``abs(int32(fnv1a(key)) % n)`` (librdkafka's ``fnv1a`` agrees)."""
    cdef int64_t h = fnv1a(data)
    if num_partitions <= 0:
        raise ValueError("num_partitions must be > 0")
    if h < 0:
        h = -h
    return <Py_ssize_t>(h % num_partitions)

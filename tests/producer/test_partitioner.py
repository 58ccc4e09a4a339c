"""Partitioners: hashes against the reference clients' own test vectors, sticky and round-robin rules."""

from __future__ import annotations

import random
import zlib

import mmh3
import pytest

from aiokafka_lite._native import pure_module
from aiokafka_lite.errors import ConfigError, IllegalArgumentError
from aiokafka_lite.producer.partitioner import (
    StickyPartitioner,
    call_custom,
    crc32_partition,
    fnv1a,
    fnv1a_partition,
    murmur2,
    murmur2_partition,
    murmur3_partition,
    resolve_partitioner,
)

# The hashes' one source (_hash.py) run as Python, even where it is compiled.
_hash_py = pure_module("aiokafka_lite.producer._hash")

# Kafka's clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java, testMurmur2.
JAVA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}

# FNV-1a 32-bit reference values (the algorithm's published test suite): "" and "a", "foobar".
FNV1A_32 = {b"": 0x811C9DC5, b"a": 0xE40C292C, b"foobar": 0xBF9CF968}


def _signed(v: int) -> int:
    return v - (1 << 32) if v & 0x80000000 else v


@pytest.mark.parametrize("impl", ["compiled", "python"])
def test_murmur2_java_vectors(impl: str) -> None:
    fn = murmur2 if impl == "compiled" else _hash_py.murmur2
    for key, expected in JAVA_MURMUR2.items():
        assert fn(key) == expected
        assert fn(bytearray(key)) == expected
        assert fn(memoryview(key)) == expected


def test_compiled_hashes_are_in_use() -> None:
    # The compiled module must be built in this tree; the twin is only a fallback.
    from aiokafka_lite.producer import partitioner
    from aiokafka_lite.producer.handles import PURE

    if PURE:
        pytest.skip("pure-Python run requested (AIOKAFKA_LITE_PURE)")
    assert partitioner.murmur2 is not _hash_py.murmur2
    assert type(partitioner.murmur2).__name__ != "function"  # a compiled callable, not Python code


def test_murmur2_partition_is_to_positive_mod() -> None:
    for key, h in JAVA_MURMUR2.items():
        for n in (1, 3, 4, 6, 7, 100):
            assert murmur2_partition(key, n) == (h & 0x7FFFFFFF) % n
    with pytest.raises(ValueError):
        murmur2_partition(b"x", 0)


@pytest.mark.parametrize("impl", ["compiled", "python"])
def test_fnv1a_vectors(impl: str) -> None:
    fn = fnv1a if impl == "compiled" else _hash_py.fnv1a
    for key, expected in FNV1A_32.items():
        assert fn(key) == _signed(expected)


def test_fnv1a_partition_matches_sarama_rule() -> None:
    rng = random.Random(7)
    for _ in range(500):
        key = rng.randbytes(rng.randrange(0, 40))
        h = fnv1a(key)
        n = rng.randrange(1, 50)
        # Sarama: p := int32(h) % n, Go's remainder takes the dividend's sign; if p < 0 { p = -p }
        p = int(h - n * int(h / n)) if abs(h) < 2**52 else h % n
        assert fnv1a_partition(key, n) == abs(p)
        assert fnv1a_partition(key, n) == _hash_py.fnv1a_partition(key, n)


def test_compiled_and_python_twins_agree() -> None:
    rng = random.Random(1)
    for i in range(3000):
        raw = rng.randbytes(rng.randrange(0, 70))
        key = (raw, bytearray(raw), memoryview(raw))[i % 3]
        assert murmur2(key) == _hash_py.murmur2(key)
        assert fnv1a(key) == _hash_py.fnv1a(key)
        n = rng.randrange(1, 64)
        assert murmur2_partition(key, n) == _hash_py.murmur2_partition(key, n)
        assert fnv1a_partition(key, n) == _hash_py.fnv1a_partition(key, n)


def test_crc32_and_murmur3() -> None:
    assert crc32_partition(b"123456789", 1 << 32) == 0xCBF43926  # the CRC-32 check value
    assert crc32_partition(b"", 5) == 0  # librdkafka "consistent": empty/NULL keys -> partition 0
    assert murmur3_partition(b"foo", 10) == mmh3.hash(b"foo", 0, signed=False) % 10
    assert mmh3.hash(b"", 0, signed=False) == 0  # MurmurHash3 x86_32 reference: "" seed 0 -> 0
    assert crc32_partition(bytearray(b"key"), 7) == zlib.crc32(b"key") % 7


def test_resolve_names() -> None:
    assert resolve_partitioner("default").null_key == "sticky"
    assert resolve_partitioner("default").key_hash is murmur2_partition
    assert resolve_partitioner("murmur2_random").key_hash is murmur2_partition
    assert resolve_partitioner("murmur2").null_key == "hash"
    assert resolve_partitioner("consistent").key_hash is crc32_partition
    assert resolve_partitioner("crc32_random").null_key == "sticky"
    assert resolve_partitioner("fnv1a").key_hash is fnv1a_partition
    assert resolve_partitioner("murmur3_random").key_hash is murmur3_partition
    assert resolve_partitioner("round_robin").key_hash is None
    assert resolve_partitioner("uniform_sticky").key_hash is None
    assert resolve_partitioner("default", ignore_keys=True).key_hash is None
    with pytest.raises(ConfigError, match="unknown partitioner 'nope'"):
        resolve_partitioner("nope")
    with pytest.raises(ConfigError):
        resolve_partitioner(42)


def test_custom_partitioner_checked() -> None:
    spec = resolve_partitioner(lambda key, all_p, avail: 2)
    assert call_custom(spec, b"k", [0, 1, 2], [0, 1, 2]) == 2
    bad = resolve_partitioner(lambda key, all_p, avail: 9)
    with pytest.raises(IllegalArgumentError, match="returned 9"):
        call_custom(bad, b"k", [0, 1, 2], [0, 1, 2])


def test_sticky_choice_is_uniform_over_available() -> None:
    sp = StickyPartitioner(rng=random.Random(3))
    counts = dict.fromkeys(range(6), 0)
    for _ in range(6000):
        counts[sp.choose("t", 6, [0, 1, 2, 3, 4, 5])] += 1
    assert min(counts.values()) > 800  # ~1000 each


def test_sticky_prefers_short_queues() -> None:
    queues = {0: 50, 1: 0, 2: 50}
    sp = StickyPartitioner(queue_sizes=lambda t, ps: [queues[p] for p in ps], rng=random.Random(5))
    counts = {0: 0, 1: 0, 2: 0}
    for _ in range(3000):
        counts[sp.choose("t", 4, [0, 1, 2])] += 1  # partition 3 has no leader: a KeyError if chosen
    assert counts[1] > 10 * max(counts[0], counts[2])


def test_sticky_never_picks_unavailable() -> None:
    sp = StickyPartitioner(rng=random.Random(9))
    for _ in range(200):
        assert sp.choose("t", 8, [2, 5]) in (2, 5)
    # No partition available at all: any partition (the record waits for a leader in the accumulator).
    assert {sp.choose("u", 3, []) for _ in range(100)} == {0, 1, 2}


def test_round_robin_cycles_available() -> None:
    sp = StickyPartitioner()
    got = [sp.round_robin("t", 4, [0, 2, 3]) for _ in range(6)]
    assert got == [0, 2, 3, 0, 2, 3]
    assert [sp.round_robin("u", 3, []) for _ in range(4)] == [0, 1, 2, 0]

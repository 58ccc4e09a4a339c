"""The v2 batch builder and varints: exact bytes, batch-full rules, producer-state patching."""

from __future__ import annotations

import os
import subprocess
import sys
from types import ModuleType

import pytest
from _records_helpers import IMPLS, build
from aiokafka.record._crecords import DefaultRecordBatch as AioBatch
from aiokafka.record._crecords import DefaultRecordBatchBuilder as AioBuilder

from aiokafka_lite import records
from aiokafka_lite.errors import CorruptRecordError, IllegalArgumentError, IllegalStateError

VARINTS = [
    (0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (63, b"\x7e"), (-64, b"\x7f"), (64, b"\x80\x01"),
    (300, b"\xd8\x04"), ((1 << 63) - 1, b"\xfe" + b"\xff" * 8 + b"\x01"), (-(1 << 63), b"\xff" * 9 + b"\x01"),
]


def test_implementation_selection() -> None:
    # `make test` runs these tests once on the compiled core and once with AIOKAFKA_LITE_PURE=1.
    assert records.IMPLEMENTATION == ("python" if os.environ.get("AIOKAFKA_LITE_PURE") else "cython")
    env = dict(os.environ, AIOKAFKA_LITE_PURE="1")
    out = subprocess.run([sys.executable, "-c", "import aiokafka_lite.records as r; print(r.IMPLEMENTATION)"],
                         env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "python"


def test_same_public_api() -> None:
    names = {n for n in dir(IMPLS["python"]) if callable(getattr(IMPLS["python"], n))} & set(records.__all__)
    for name in names:
        assert hasattr(IMPLS["cython"], name), name
    for attr in dir(IMPLS["python"].BatchBuilder):
        if not attr.startswith("_"):
            assert hasattr(IMPLS["cython"].BatchBuilder, attr), attr


@pytest.mark.parametrize(("value", "encoded"), VARINTS)
def test_varint_vectors(impl: ModuleType, value: int, encoded: bytes) -> None:
    assert impl.encode_varint(value) == encoded
    assert impl.size_of_varint(value) == len(encoded)
    assert impl.decode_varint(b"\xaa" + encoded + b"\xbb", 1) == (value, 1 + len(encoded))


@pytest.mark.parametrize("data", [b"\xff" * 11, b"\xff" * 9 + b"\x02", b"\x80" * 10 + b"\x00"])
def test_varint_overflow(impl: ModuleType, data: bytes) -> None:
    with pytest.raises(CorruptRecordError, match="overflows"):
        impl.decode_varint(data)


@pytest.mark.parametrize("size", [0, 1, 4096, 1 << 20])
def test_recv_buffer(impl: ModuleType, size: int) -> None:
    """A receive buffer is a bytearray of the size asked for, each its own, writable end to end."""
    a, b = impl.recv_buffer(size), impl.recv_buffer(size)
    assert type(a) is bytearray and len(a) == size and a is not b
    a[:] = b"\x5a" * size
    memoryview(a)[size // 2:] = bytes(size - size // 2)
    assert a == b"\x5a" * (size // 2) + bytes(size - size // 2)


def test_recv_buffer_negative(impl: ModuleType) -> None:
    with pytest.raises(IllegalArgumentError, match="negative buffer size"):
        impl.recv_buffer(-1)


def test_varint_errors(impl: ModuleType) -> None:
    with pytest.raises(CorruptRecordError, match="past the end"):
        impl.decode_varint(b"\x80\x80")
    with pytest.raises(CorruptRecordError, match="past the end"):
        impl.decode_varint(b"\x00", 1)
    with pytest.raises(IllegalArgumentError):
        impl.encode_varint(1 << 63)
    with pytest.raises(IllegalArgumentError):
        impl.size_of_varint(-(1 << 63) - 1)


RECORDS = [
    (1_700_000_000_000, b"key-0", b"value-0", [("h1", b"v1"), ("h2", None)]),
    (1_700_000_000_005, None, b"value-1", []),
    (1_699_999_999_990, b"key-2", None, None),
    (1_700_000_000_001, b"", b"", [("", b"")]),
    (1_700_000_000_002, b"k" * 300, b"v" * 5000, [("\u00e9t\u00e9", b"x" * 200)]),
]


def test_bytes_identical_to_aiokafka(impl: ModuleType) -> None:
    ours = build(impl, RECORDS, producer_id=5, producer_epoch=1, base_sequence=10)
    aio = AioBuilder(2, 0, 0, 5, 1, 10, 1 << 30)
    for i, (ts, key, value, headers) in enumerate(RECORDS):
        aio.append(i, ts, key, value, headers or [])
    assert ours == bytes(aio.build())


def test_batch_full_and_first_record_always_fits(impl: ModuleType) -> None:
    b = impl.BatchBuilder(0, 200)
    assert b.append(1, None, b"x" * 500) == 0  # over the size, but first
    assert b.append(1, None, b"y") is None
    assert b.record_count == 1
    b = impl.BatchBuilder(0, 61 + 3 * 11)
    deltas = [b.append(5, None, b"abcd") for _ in range(4)]
    assert deltas == [0, 1, 2, None]  # each record takes 11 bytes: 3 fit exactly
    assert b.size == 61 + 33
    data = b.build()
    assert len(data) == 61 + 33
    assert b.is_built
    assert b.build() is data


def test_an_open_batch_holds_memory_for_its_records_not_its_batch_size(impl: ModuleType) -> None:
    """Thousands of partitions each with an open one-record batch (batch_size 16 KiB): each store holds
    about its records, not batch_size (a page touched per 16 KiB store cost 10,000 partitions ~40 MB)."""
    import tracemalloc

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        builders = []
        for _ in range(1000):
            b = impl.BatchBuilder(0, 16384)
            assert b.append(1, None, b"x" * 10) == 0
            builders.append(b)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 4 << 20, f"1,000 one-record batches hold {held / 1e6:.1f} MB"
    big = impl.BatchBuilder(0, 1 << 20)  # and a store still grows to whatever the batch takes
    assert all(big.append(1, None, b"y" * 1000) is not None for _ in range(900))
    assert len(big.build()) > 900_000


def test_append_many_matches_append(impl: ModuleType) -> None:
    values = [b"v%d" % i * (i % 7) for i in range(300)]
    keys = [None if i % 3 else b"k%d" % i for i in range(300)]
    headers = [[("n", b"%d" % i)] if i % 5 == 0 else None for i in range(300)]
    timestamps = [1000 + i % 13 for i in range(300)]
    for ts_arg, hdrs in ((1234, None), (timestamps, headers)):
        one = impl.BatchBuilder(1, 2000)
        many = impl.BatchBuilder(1, 2000)
        n = many.append_many(values, keys, ts_arg, hdrs, start=10)
        for i in range(10, 300):
            ts = ts_arg if isinstance(ts_arg, int) else ts_arg[i]
            if one.append(ts, keys[i], values[i], None if hdrs is None else hdrs[i]) is None:
                break
        assert 0 < n < 290
        assert one.record_count == n
        assert one.build() == many.build()


def test_patch_producer_state(impl: ModuleType) -> None:
    plain = build(impl, RECORDS, codec=3)
    patched = impl.patch_producer_state(plain, 4711, 3, 99, is_transactional=True)
    direct = build(impl, RECORDS, codec=3, producer_id=4711, producer_epoch=3, base_sequence=99,
                   is_transactional=True)
    assert patched == direct
    (batch,) = impl.read_batches(patched, strict=True)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (4711, 3, 99)
    assert batch.is_transactional
    aio = AioBatch(patched)
    assert aio.validate_crc() and aio.producer_id == 4711 and aio.base_sequence == 99
    unset = impl.patch_producer_state(bytearray(patched), 1, 2, 3, is_transactional=False)
    assert unset[21:23] == b"\x00\x03"
    with pytest.raises(IllegalArgumentError):
        impl.patch_producer_state(b"\x00" * 30, 1, 2, 3)
    with pytest.raises(IllegalArgumentError):
        impl.patch_producer_state(plain, 1, 1 << 15, 3)


def test_set_producer_state_and_headers_fields(impl: ModuleType) -> None:
    b = impl.BatchBuilder(0, 1000, partition_leader_epoch=7, base_offset=100, timestamp_type=1)
    b.append(10, b"k", b"v")
    b.append(30, b"k", b"v")
    b.set_producer_state(1, 2, 3)
    (batch,) = impl.read_batches(b.build(), strict=True)
    assert (batch.base_offset, batch.partition_leader_epoch, batch.first_timestamp, batch.max_timestamp) == (
        100, 7, 10, 30)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (1, 2, 3)
    assert batch.timestamp_type == 1
    assert [r.timestamp for r in batch.records] == [30, 30]  # LogAppendTime: the batch's max timestamp
    assert [r.offset for r in batch.records] == [100, 101]


def test_builder_errors(impl: ModuleType) -> None:
    b = impl.BatchBuilder(0, 100)
    with pytest.raises(IllegalStateError):
        b.build()
    with pytest.raises(IllegalArgumentError):
        b.append(-5, None, b"v")
    with pytest.raises(IllegalArgumentError):
        b.append(1 << 63, None, b"v")
    with pytest.raises(TypeError):
        b.append(1, "text", b"v")
    with pytest.raises(TypeError):
        b.append(1, None, 5)
    with pytest.raises(TypeError):
        b.append(1, None, b"v", [(b"bytes-key", b"v")])
    with pytest.raises(TypeError):
        b.append(1.5, None, b"v")
    b.append(None, bytearray(b"k"), memoryview(b"v"), [("h", bytearray(b"x"))])
    b.build()
    with pytest.raises(IllegalStateError):
        b.append(1, None, b"v")
    with pytest.raises(IllegalArgumentError):
        impl.BatchBuilder(7)
    with pytest.raises(IllegalArgumentError):
        impl.BatchBuilder(0, producer_epoch=1 << 16)


def test_now_timestamp(impl: ModuleType) -> None:
    import time

    before = time.time_ns() // 1_000_000
    b = impl.BatchBuilder()
    b.append(None, None, b"v")
    after = time.time_ns() // 1_000_000
    assert before <= b.first_timestamp <= after


def test_control_batch() -> None:
    data = records.build_control_batch(records.CONTROL_COMMIT, producer_id=9, producer_epoch=2,
                                       base_offset=40, coordinator_epoch=5)
    (batch,) = records.read_batches(data, strict=True)
    assert batch.is_control and batch.is_transactional
    assert batch.control_type == records.CONTROL_COMMIT
    assert records.parse_control_key(batch.records[0].key) == (0, records.CONTROL_COMMIT)
    assert batch.records[0].value == b"\x00\x00\x00\x00\x00\x05"
    assert records.parse_control_value(batch.records[0].value) == (0, 5)
    with pytest.raises(CorruptRecordError):
        records.parse_control_value(b"\x00\x00")
    with pytest.raises(CorruptRecordError):
        records.parse_control_key(b"\x00")
    with pytest.raises(CorruptRecordError):
        records.parse_control_key(b"\xff\xff\x00\x00")


def test_estimate_record_size() -> None:
    b = records.BatchBuilder(0, 1 << 20)
    for key, value, headers in [(None, b"v" * 100, None), (b"k" * 1000, b"", [("hh", b"x"), ("y", None)])]:
        before = b.size
        b.append(1 << 40, key, value, headers)
        assert b.size - before <= records.estimate_record_size(key, value, headers)


def test_codec_from_name() -> None:
    names = (None, "none", "gzip", "snappy", "lz4", "zstd")
    assert [records.codec_from_name(n) for n in names] == [0, 0, 1, 2, 3, 4]
    with pytest.raises(IllegalArgumentError):
        records.codec_from_name("brotli")


def _pooled_batch(pool: object, fill: bytes, n: int = 40, codec: int = 0) -> bytes:
    b = records._core.BatchBuilder(codec, 1 << 20, capacity=64 * 1024, pool=pool)
    for i in range(n):
        assert b.append(1000 + i, None, fill * 1000) is not None
    return b.build()


def test_a_pooled_store_is_reused_only_once_nothing_holds_its_batch() -> None:
    """StorePool: a built batch's store is written into again only after its last reference is gone,
    so a batch still held (in flight, to be retried) never changes under its holder."""
    from aiokafka_lite.records import _core

    pool = _core.StorePool()
    first = _pooled_batch(pool, b"a")
    copy = bytearray(first)
    assert pool.idle == 0  # `first` is held here
    second = _pooled_batch(pool, b"b")
    assert second is not first and first == copy
    first_id, size = id(first), len(first)
    del first
    assert pool.idle == 64 * 1024 + records.BATCH_OVERHEAD  # the pool alone held it: back, at full size
    third = _pooled_batch(pool, b"c", n=20)
    assert id(third) == first_id and pool.idle == 0  # the same store, its old bytes overwritten ...
    assert len(third) < size and third == build(IMPLS["python"], [(1000 + i, None, b"c" * 1000, None)
                                                                   for i in range(20)])  # ... exactly
    assert second == _pooled_batch(None, b"b")  # the batch held all along is intact
    gz = _pooled_batch(pool, b"d", codec=records.CODEC_GZIP)  # compressed: the store comes back at once
    assert pool.idle == 64 * 1024 + records.BATCH_OVERHEAD and len(gz) < 1000


def test_the_pool_keeps_at_most_max_idle_bytes_and_small_stores_stay_out() -> None:
    from aiokafka_lite.records import _core

    pool = _core.StorePool(max_idle=100_000)
    batches = [_pooled_batch(pool, b"x") for _ in range(3)]
    del batches
    assert pool.idle == 64 * 1024 + records.BATCH_OVERHEAD  # one fits in 100,000 bytes, the others went
    small = _core.BatchBuilder(0, 1 << 20, capacity=1000, pool=pool)
    small.append(1, None, b"s")
    del small
    kept = [_core.BatchBuilder(0, 1 << 20, capacity=1000, pool=pool) for _ in range(3)]
    for b in kept:
        b.append(1, None, b"s")
        b.build()
    del kept
    assert pool.idle == 64 * 1024 + records.BATCH_OVERHEAD
    with pytest.raises(IllegalArgumentError):
        _core.StorePool(max_idle=-1)


def test_a_batch_filling_less_than_half_its_pooled_store_gives_the_rest_back() -> None:
    """A store presized from a larger last batch but holding little is cut to its bytes at build (the
    batch is held until answered, and buffer_memory counts only its bytes) and not pooled."""
    import tracemalloc

    from aiokafka_lite.records import _core

    pool = _core.StorePool()
    tracemalloc.start()
    try:
        b = _core.BatchBuilder(0, 1 << 20, capacity=1 << 20, pool=pool)
        b.append(1, None, b"z" * 100)
        before = tracemalloc.get_traced_memory()[0]
        data = b.build()
        del b
        freed = before - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert freed > 900_000 and len(data) < 300
    del data
    assert pool.idle == 0

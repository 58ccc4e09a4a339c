"""Fuzzing every reader of both implementations: random and mutated bytes end in a result or in
CorruptRecordError (never IndexError, MemoryError, struct.error, zlib.error or a hang), and the two
implementations agree on which."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import Any

import google_crc32c
import pyarrow as pa
from _records_helpers import IMPLS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from aiokafka_lite.errors import CorruptRecordError
from aiokafka_lite.records import CONTROL_ABORT, build_control_batch
from aiokafka_lite.records._codecs import decompress

CORE, PY = IMPLS["cython"], IMPLS["python"]
# RECORDS_FUZZ_EXAMPLES=20000 runs a longer campaign by hand; the suite keeps it short.
FUZZ = settings(max_examples=int(os.environ.get("RECORDS_FUZZ_EXAMPLES", "200")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def _seeds() -> list[bytes]:
    seeds = []
    for codec in range(5):
        b = PY.BatchBuilder(codec, 1 << 20, base_offset=10 * codec, producer_id=3, producer_epoch=0,
                            is_transactional=codec % 2 == 1)
        for i in range(6):
            headers = [("h", b"v"), ("n", None)][: i % 3]
            b.append(1000 + i, None if i % 2 else b"key", b"value %d" % i * 3, headers)
        seeds.append(b.build())
    seeds.append(build_control_batch(CONTROL_ABORT, producer_id=3, producer_epoch=0, base_offset=60))
    for magic in (0, 1):
        for codec in (0, 1, 2, 3):
            lb = LegacyRecordBatchBuilder(magic, codec, 1 << 20)
            for i in range(3):
                lb.append(i, 1000 + i, b"k" if i else None, b"legacy %d" % i)
            seeds.append(bytes(lb.build()))
    return seeds


SEEDS = _seeds()


def _readers(impl: Any, check_crcs: bool) -> list[Callable[[bytes], Any]]:
    return [
        lambda d: impl.read_batches(d, check_crcs=check_crcs),
        lambda d: impl.read_batches(d, check_crcs=check_crcs, strict=True),
        lambda d: impl.decode_records(d, "t", 0, check_crcs=check_crcs),
        lambda d: impl.decode_records(d, "t", 0, check_crcs=check_crcs, skip_control=False, start_offset=12,
                                      end_offset=40, aborted=[(3, 0)]),
        lambda d: impl.decode_arrow(d, "t", 0, check_crcs=check_crcs, aborted=[(3, 15)], start_offset=2),
        lambda d: impl.decode_varint(d, 0),
    ]


def _outcome(fn: Callable[[bytes], Any], data: bytes) -> Any:
    try:
        out = fn(data)
    except CorruptRecordError:
        return CorruptRecordError
    if hasattr(out, "batch"):  # DecodedArrow: compare its contents (timestamps as ints: any int64 is valid)
        out.batch.validate(full=True)
        columns = {name: out.batch.column(name) for name in out.batch.schema.names}
        columns["timestamp"] = columns["timestamp"].cast(pa.int64())
        return ({name: col.to_pylist() for name, col in columns.items()}, *out[1:])
    return out


def _check(data: bytes) -> None:
    for check_crcs in (True, False):
        for ours, twin in zip(_readers(CORE, check_crcs), _readers(PY, check_crcs), strict=True):
            assert _outcome(ours, data) == _outcome(twin, data)


def _fix_v2_crcs(data: bytearray) -> bytes:
    """Recompute the CRC of every well-framed v2 batch, so that mutations reach the record parser."""
    pos = 0
    while pos + 21 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if length < 9 or end > len(data):
            break
        if data[pos + 16] == 2:
            struct.pack_into(">I", data, pos + 17, google_crc32c.value(bytes(data[pos + 21:end])))
        pos = end
    return bytes(data)


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    _check(data)


@FUZZ
@given(st.binary(min_size=12, max_size=200))
def test_random_bytes_after_a_plausible_header(tail: bytes) -> None:
    for magic in (0, 1, 2):
        head = struct.pack(">qiib", 5, len(tail) + 5, 0, magic)
        _check(head + tail)


@FUZZ
@given(seeds=st.lists(st.sampled_from(SEEDS), min_size=1, max_size=3),
       edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255), st.sampled_from("sid")),
                      max_size=6),
       fix_crcs=st.booleans(), cut=st.none() | st.integers(0, 1 << 16))
def test_mutated_batches(seeds: list[bytes], edits: list[tuple[int, int, str]], fix_crcs: bool,
                         cut: int | None) -> None:
    data = bytearray(b"".join(seeds))
    for pos, value, kind in edits:
        pos %= len(data) + 1
        if kind == "s" and pos < len(data):
            data[pos] = value
        elif kind == "i":
            data[pos:pos] = bytes([value])
        elif pos < len(data):
            del data[pos]
    if cut is not None:
        del data[cut % (len(data) + 1):]
    _check(_fix_v2_crcs(data) if fix_crcs else bytes(data))


@FUZZ
@given(codec=st.integers(0, 7), payload=st.binary(max_size=300), magic=st.integers(0, 2))
def test_codecs_only_raise_corrupt(codec: int, payload: bytes, magic: int) -> None:
    try:
        decompress(codec, payload, magic)
    except CorruptRecordError:
        pass

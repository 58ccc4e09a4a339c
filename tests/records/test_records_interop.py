"""Byte-level interop with aiokafka's and kafka-python's record code, in both directions."""

from __future__ import annotations

import struct
import zlib
from types import ModuleType

import pytest
from _records_helpers import build
from aiokafka.record._crecords import DefaultRecordBatch as AioBatch
from aiokafka.record._crecords import DefaultRecordBatchBuilder as AioBuilder
from kafka.record.default_records import DefaultRecordBatch as KBatch
from kafka.record.default_records import DefaultRecordBatchBuilder as KBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

CODECS = [0, 1, 2, 3, 4]
RECORDS = [
    (1_700_000_000_000 + i, None if i % 3 == 0 else b"key-%d" % i,
     None if i % 7 == 3 else b"value-%d-" % i * (i % 5 + 1),
     [("trace", b"t%d" % i), ("nullable", None)] if i % 2 else [])
    for i in range(40)
]


def _theirs(batch: object) -> list[tuple]:
    return [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch]  # type: ignore[attr-defined]


def _ours(batch: object) -> list[tuple]:
    return [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch.records]  # type: ignore[attr-defined]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("peer", ["aiokafka", "kafka-python"])
def test_peer_batches_decode_in_ours(impl: ModuleType, codec: int, peer: str) -> None:
    builder = (AioBuilder if peer == "aiokafka" else KBuilder)(2, codec, 0, 77, 4, 1000, 1 << 30)
    for i, (ts, key, value, headers) in enumerate(RECORDS):
        builder.append(i, ts, key, value, headers)
    data = bytes(builder.build())
    aio = AioBatch(data)
    theirs = _theirs(aio)  # aiokafka's batch iterates once
    (batch,) = impl.read_batches(data, strict=True)
    assert _ours(batch) == theirs
    assert batch.crc == aio.crc
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (77, 4, 1000)
    assert batch.compression == codec
    res = impl.decode_records(data, "t", 3, strict=True)
    assert [(r.offset, r.key, r.value) for r in res.records] == [(r[0], r[2], r[3]) for r in theirs]
    assert res.next_offset == len(RECORDS)


@pytest.mark.parametrize("codec", CODECS)
def test_our_batches_decode_in_peers(impl: ModuleType, codec: int) -> None:
    data = build(impl, RECORDS, codec, producer_id=77, producer_epoch=4, base_sequence=1000)
    (ours,) = impl.read_batches(data, strict=True)
    aio = AioBatch(data)
    assert aio.validate_crc()
    assert aio.crc == ours.crc
    assert _theirs(aio) == _ours(ours)
    kp = KBatch(data)
    assert kp.validate_crc()
    assert _theirs(kp) == _ours(ours)
    assert [r[1] for r in _ours(ours)] == [r[0] for r in RECORDS]


def _legacy(magic: int, codec: int, first_offset: int, n: int) -> bytes:
    """A kafka-python legacy message set; compressed ones get the wrapper offset a broker assigns."""
    builder = LegacyRecordBatchBuilder(magic, codec, 1 << 30)
    relative = magic == 1 and codec != 0
    for i in range(n):
        offset = i if relative else first_offset + i
        builder.append(offset, 1_600_000_000_000 + i, None if i % 2 else b"k%d" % i, b"legacy-%d" % i)
    data = bytearray(builder.build())
    if codec:  # one wrapper message: its offset is the absolute offset of the last inner message
        struct.pack_into(">q", data, 0, first_offset + n - 1)
    return bytes(data)


@pytest.mark.parametrize("codec", [0, 1, 2, 3])
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_message_sets(impl: ModuleType, magic: int, codec: int) -> None:
    data = _legacy(magic, codec, 500, 6)
    batches = impl.read_batches(data, strict=True)
    recs = [r for b in batches for r in b.records]
    assert [r.offset for r in recs] == list(range(500, 506))
    assert [r.value for r in recs] == [b"legacy-%d" % i for i in range(6)]
    assert [r.key for r in recs] == [None if i % 2 else b"k%d" % i for i in range(6)]
    if magic == 0:
        assert {(r.timestamp, r.timestamp_type) for r in recs} == {(-1, -1)}
    else:
        assert [r.timestamp for r in recs] == [1_600_000_000_000 + i for i in range(6)]
        assert {r.timestamp_type for r in recs} == {0}
    assert {b.magic for b in batches} == {magic}
    res = impl.decode_records(data, "old", 0, start_offset=502, strict=True)
    assert [r.offset for r in res.records] == [502, 503, 504, 505]
    assert res.next_offset == 506 and res.leader_epoch == -1
    arrow = impl.decode_arrow(data, "old", 0, start_offset=502, strict=True)
    assert arrow.batch.column("offset").to_pylist() == [502, 503, 504, 505]


def test_legacy_log_append_time_wrapper(impl: ModuleType) -> None:
    data = bytearray(_legacy(1, 1, 10, 3))
    data[17] |= 0x08  # wrapper attributes: LogAppendTime
    struct.pack_into(">q", data, 18, 1_777_000_000_000)  # the broker's append time on the wrapper
    struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    (batch,) = impl.read_batches(bytes(data), strict=True)
    assert [(r.timestamp, r.timestamp_type) for r in batch.records] == [(1_777_000_000_000, 1)] * 3


def test_legacy_crc_checked(impl: ModuleType) -> None:
    from aiokafka_lite.errors import CorruptRecordError

    data = bytearray(_legacy(1, 0, 0, 2))
    data[-1] ^= 1
    with pytest.raises(CorruptRecordError, match="CRC"):
        impl.read_batches(bytes(data))
    assert len(impl.read_batches(bytes(data), check_crcs=False)) == 2


def test_mixed_legacy_and_v2_in_one_fetch(impl: ModuleType) -> None:
    v2 = bytearray(build(impl, RECORDS[:5], 4))
    struct.pack_into(">q", v2, 0, 100)  # base offset is outside the CRC
    data = _legacy(1, 2, 90, 10) + bytes(v2)
    res = impl.decode_records(data, "t", 0, strict=True)
    assert [r.offset for r in res.records] == list(range(90, 105))
    assert res.next_offset == 105

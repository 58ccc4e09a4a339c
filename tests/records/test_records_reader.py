"""Reader semantics: filters (offsets, control batches, read_committed), fetch-mode truncation, errors."""

from __future__ import annotations

import struct
from types import ModuleType

import pytest
from _records_helpers import build, fix_crc

from aiokafka_lite.errors import CorruptRecordError
from aiokafka_lite.records import CONTROL_ABORT, CONTROL_COMMIT, control_key, control_value
from aiokafka_lite.structs import ConsumerRecord


def _batch(impl: ModuleType, base: int, n: int, *, pid: int = -1, txn: bool = False, codec: int = 0,
           ple: int = 0, tag: bytes = b"v") -> bytes:
    state = 0 if pid >= 0 else -1
    b = impl.BatchBuilder(codec, 1 << 20, base_offset=base, producer_id=pid, producer_epoch=state,
                          base_sequence=state, is_transactional=txn, partition_leader_epoch=ple)
    for i in range(n):
        b.append(1000 + i, None, tag + b"%d" % (base + i))
    return b.build()


def _marker(impl: ModuleType, base: int, pid: int, ctype: int) -> bytes:
    b = impl.BatchBuilder(0, 1 << 20, base_offset=base, producer_id=pid, producer_epoch=0,
                          is_transactional=True, is_control=True)
    b.append(5000, control_key(ctype), control_value(3))
    return b.build()


def _offsets(res: object) -> list[int]:
    return [r.offset for r in res.records]  # type: ignore[attr-defined]


def test_consumer_records(impl: ModuleType) -> None:
    data = build(impl, [(77, b"k", b"value", [("h", b"x"), ("n", None)]), (78, None, None, None)],
                 partition_leader_epoch=12)
    res = impl.decode_records(data, "topic", 5)
    assert res.records == [
        ConsumerRecord("topic", 5, 0, 77, 0, b"k", b"value", (("h", b"x"), ("n", None)), 1, 5, 12),
        ConsumerRecord("topic", 5, 1, 78, 0, None, None, (), -1, -1, 12),
    ]
    assert (res.next_offset, res.leader_epoch, res.truncated) == (2, 12, False)
    assert impl.decode_records(bytearray(data), "topic", 5) == res
    assert impl.decode_records(memoryview(data), "topic", 5) == res
    assert impl.decode_records(b"", "t", 0) == ([], -1, -1, False)
    with pytest.raises(TypeError):
        impl.decode_records(data, b"topic", 5)


def test_start_and_end_offsets(impl: ModuleType) -> None:
    data = _batch(impl, 0, 10, codec=1) + _batch(impl, 10, 10, codec=1) + _batch(impl, 20, 10, codec=1)
    res = impl.decode_records(data, "t", 0, start_offset=14)
    assert _offsets(res) == list(range(14, 30)) and res.next_offset == 30
    res = impl.decode_records(data, "t", 0, start_offset=14, end_offset=23)
    assert _offsets(res) == list(range(14, 23)) and res.next_offset == 23
    res = impl.decode_records(data, "t", 0, end_offset=20)  # stops at a batch boundary
    assert _offsets(res) == list(range(20)) and res.next_offset == 20
    res = impl.decode_records(data, "t", 0, start_offset=40)
    assert res.records == [] and res.next_offset == 40
    arrow = impl.decode_arrow(data, "t", 0, start_offset=14, end_offset=23)
    assert arrow.batch.column("offset").to_pylist() == list(range(14, 23)) and arrow.next_offset == 23


def test_control_batches(impl: ModuleType) -> None:
    data = _batch(impl, 0, 2, pid=1, txn=True) + _marker(impl, 2, 1, CONTROL_COMMIT) + _batch(impl, 3, 1)
    res = impl.decode_records(data, "t", 0)
    assert _offsets(res) == [0, 1, 3] and res.next_offset == 4
    res = impl.decode_records(data, "t", 0, skip_control=False)
    assert _offsets(res) == [0, 1, 2, 3]
    assert res.records[2].key == control_key(CONTROL_COMMIT)
    res = impl.decode_records(_marker(impl, 7, 1, CONTROL_ABORT), "t", 0)
    assert res.records == [] and res.next_offset == 8  # a lone marker still moves the position
    batches = impl.read_batches(data)
    assert [b.control_type for b in batches] == [-1, CONTROL_COMMIT, -1]


def test_read_committed(impl: ModuleType) -> None:
    data = b"".join([
        _batch(impl, 0, 3, pid=7, txn=True, tag=b"aborted"),
        _batch(impl, 3, 2, pid=8, txn=True, tag=b"committed"),
        _marker(impl, 5, 7, CONTROL_ABORT),
        _marker(impl, 6, 8, CONTROL_COMMIT),
        _batch(impl, 7, 2, tag=b"plain"),
        _batch(impl, 9, 2, pid=7, txn=True, tag=b"second-txn"),  # pid 7 again, after its abort: kept
        _batch(impl, 11, 1, pid=9, txn=True, codec=4, tag=b"aborted"),
        _marker(impl, 12, 9, CONTROL_ABORT),
        _batch(impl, 13, 1, pid=9, txn=False, tag=b"idempotent"),  # same pid, not transactional: kept
    ])
    aborted = [(9, 11), (7, 0)]  # unsorted on purpose
    res = impl.decode_records(data, "t", 0, aborted=aborted)
    assert _offsets(res) == [3, 4, 7, 8, 9, 10, 13]
    assert all(not r.value.startswith(b"aborted") for r in res.records)
    assert res.next_offset == 14
    arrow = impl.decode_arrow(data, "t", 0, aborted=aborted)
    assert arrow.batch.column("offset").to_pylist() == [3, 4, 7, 8, 9, 10, 13]
    uncommitted = impl.decode_records(data, "t", 0)  # read_uncommitted
    assert _offsets(uncommitted) == [0, 1, 2, 3, 4, 7, 8, 9, 10, 11, 13]
    # the fetch's aborted list only names transactions overlapping it: no entry, nothing dropped
    assert _offsets(impl.decode_records(data, "t", 0, aborted=[])) == _offsets(uncommitted)


def test_log_append_time(impl: ModuleType) -> None:
    b = impl.BatchBuilder(0, 1000, timestamp_type=1)
    b.append(10, None, b"a")
    b.append(20, None, b"b")
    res = impl.decode_records(b.build(), "t", 0)
    assert [(r.timestamp, r.timestamp_type) for r in res.records] == [(20, 1), (20, 1)]


def test_truncated_fetch(impl: ModuleType) -> None:
    full = _batch(impl, 0, 3, ple=4) + _batch(impl, 3, 3, codec=2, ple=5)
    first = len(_batch(impl, 0, 3, ple=4))
    for cut in range(first, len(full)):
        res = impl.decode_records(full[:cut], "t", 0)
        assert _offsets(res) == [0, 1, 2]
        assert (res.next_offset, res.leader_epoch) == (3, 4)
        assert res.truncated == (cut > first)
        arrow = impl.decode_arrow(full[:cut], "t", 0)
        assert arrow.batch.num_rows == 3 and arrow.truncated == (cut > first)
        assert len(impl.read_batches(full[:cut])) == 1
        if cut > first:
            with pytest.raises(CorruptRecordError, match="truncated"):
                impl.decode_records(full[:cut], "t", 0, strict=True)
            with pytest.raises(CorruptRecordError, match="truncated"):
                impl.read_batches(full[:cut], strict=True)
    res = impl.decode_records(full, "t", 0, strict=True)
    assert res.next_offset == 6 and res.leader_epoch == 5 and not res.truncated


def _corrupt(impl: ModuleType, offset: int, fmt: str, value: int, crc: bool = True) -> bytes:
    data = bytearray(build(impl, [(1, b"key", b"value", [("h", b"v")])] * 2))
    struct.pack_into(fmt, data, offset, value)
    return fix_crc(data) if crc else bytes(data)


@pytest.mark.parametrize(("offset", "fmt", "value", "message"), [
    (21, ">h", 5, "unknown compression codec 5"),
    (21, ">h", 7, "unknown compression codec 7"),
    (57, ">i", -1, "negative record count"),
    (57, ">i", 6, "record count 6 is impossible in 38 bytes"),
    (57, ">i", 3, "varint runs past the end"),
    (57, ">i", 1, "left over"),
    (57, ">i", 1 << 30, "record count"),
    (61, ">b", 100, "record length 50 runs past the end"),
    (61, ">b", 0, "record is empty"),
    (65, ">b", 40, "key length 20 runs past the end"),
    (65, ">b", 5, "key length -3 runs past the end"),
    (65, ">b", 0x7F, "key length -64"),
    (75, ">b", 1, "negative header count -1"),
    (16, ">b", 3, "unknown magic byte 3"),
    (16, ">b", -1, "unknown magic byte 255"),
    (8, ">i", 13, "impossible"),
    (8, ">i", 30, "below the minimum for magic 2"),
    (8, ">i", -5, "impossible"),
])
def test_corrupt_batches(impl: ModuleType, offset: int, fmt: str, value: int, message: str) -> None:
    data = _corrupt(impl, offset, fmt, value)
    for reader in (lambda: impl.read_batches(data, strict=True), lambda: impl.decode_records(data, "t", 0),
                   lambda: impl.decode_arrow(data, "t", 0)):
        with pytest.raises(CorruptRecordError, match=message):
            reader()


def test_varint_overflow_in_record(impl: ModuleType) -> None:
    data = bytearray(build(impl, [(1, None, b"v" * 30, None)]))
    data[64:75] = b"\xff" * 11  # the timestamp delta, and more, as one endless varint
    with pytest.raises(CorruptRecordError, match="varint"):
        impl.decode_records(fix_crc(data), "t", 0)
    data[64:69] = b"\xff\xff\xff\xff\x7f"  # offset delta: a valid varint, but over 32 bits
    with pytest.raises(CorruptRecordError, match="offset delta -17179869184 does not fit in 32 bits"):
        impl.decode_records(fix_crc(data), "t", 0)


def test_crc_checked(impl: ModuleType) -> None:
    data = bytearray(build(impl, [(1, b"k", b"value", None)]))
    data[-2] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="CRC mismatch"):
        impl.decode_records(bytes(data), "t", 0)
    with pytest.raises(CorruptRecordError, match="CRC mismatch"):
        impl.decode_arrow(bytes(data), "t", 0)
    res = impl.decode_records(bytes(data), "t", 0, check_crcs=False)
    assert res.records[0].value == b"valu\x9a"


def test_a_header_key_that_is_not_utf8_is_decoded_leniently(impl: ModuleType) -> None:
    """Another client wrote a header key that is not UTF-8: the record (and the batch's other records)
    is delivered with U+FFFD in the key, as the Java client decodes it -- never failed as corrupt."""
    data = bytearray(build(impl, [(1, None, b"v", [("ab", b"x")]), (2, None, b"w", [("ok", b"y")])]))
    pos = data.index(b"ab")
    data[pos:pos + 2] = b"\xed\xa0"  # a UTF-16 surrogate: not valid UTF-8
    data = bytearray(fix_crc(data))
    expected_key = str(b"\xed\xa0", "utf-8", "replace")
    assert "\ufffd" in expected_key
    batch = impl.read_batches(bytes(data))[0]
    assert [r.headers for r in batch.records] == [((expected_key, b"x"),), (("ok", b"y"),)]
    res = impl.decode_records(bytes(data), "t", 0)
    assert [(r.value, r.headers) for r in res.records] == [(b"v", ((expected_key, b"x"),)),
                                                          (b"w", (("ok", b"y"),))]
    table = impl.decode_arrow(bytes(data), "t", 0).batch
    table.validate(full=True)  # Arrow strings stay valid UTF-8
    assert table.column("headers").to_pylist() == [[{"key": expected_key, "value": b"x"}],
                                                   [{"key": "ok", "value": b"y"}]]

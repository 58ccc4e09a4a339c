"""Pure-Python readers (the twin of the compiled core's): batches, ConsumerRecords and Arrow.

One walk over the batches drives all three outputs so that filtering (start and end offsets, control
batches, aborted transactions) means exactly the same thing everywhere.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import CorruptRecordError, KafkaError
from ..structs import ConsumerRecord
from ._codecs import check_codec, decompress
from ._crc import crc32c
from ._legacy import read_legacy
from ._types import (
    ATTR_CONTROL,
    ATTR_TIMESTAMP_TYPE,
    ATTR_TRANSACTIONAL,
    BATCH_OVERHEAD,
    CODEC_MASK,
    CONTROL_ABORT,
    LOG_OVERHEAD,
    MIN_LENGTH,
    Batch,
    DecodedArrow,
    DecodedRecords,
    Record,
    arrow_schema,
    check_topic_partition,
    parse_control_key,
    wrap64,
)

_HEADER = struct.Struct(">qiibIhiqqqhii")
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_MIN_RECORD = 7  # length, attributes, two deltas, key, value, header count: one byte each at least

Headers = tuple[tuple[str, bytes | None], ...]


def _varint(buf: Any, pos: int, end: int, within: str = "record") -> tuple[int, int]:
    """The zigzag varint at ``buf[pos:end]`` and the position after it (``within`` names the bound)."""
    shift = 0
    u = 0
    for i in range(10):
        if pos >= end:
            raise CorruptRecordError(f"varint runs past the end of the {within}")
        b = buf[pos]
        pos += 1
        if i == 9 and b > 1:
            raise CorruptRecordError("varint overflows 64 bits")
        u |= (b & 0x7F) << shift
        if not b & 0x80:
            return (u >> 1) ^ -(u & 1), pos
        shift += 7
    raise AssertionError("unreachable")


def _varint32(buf: Any, pos: int, end: int, what: str) -> tuple[int, int]:
    v, pos = _varint(buf, pos, end)
    if not _I32_MIN <= v <= _I32_MAX:
        raise CorruptRecordError(f"{what} {v} does not fit in 32 bits")
    return v, pos


def _bytes_field(buf: Any, pos: int, end: int, what: str) -> tuple[bytes | None, int]:
    n, pos = _varint32(buf, pos, end, what + " length")
    if n == -1:
        return None, pos
    if n < -1 or n > end - pos:
        raise CorruptRecordError(f"{what} length {n} runs past the end of the record")
    return bytes(buf[pos:pos + n]), pos + n


def _record(buf: Any, pos: int, end: int) -> tuple[int, int, bytes | None, bytes | None, Headers, int]:
    """Parse the record at ``pos``: (timestamp delta, offset delta, key, value, headers, next pos)."""
    length, pos = _varint32(buf, pos, end, "record length")
    if length < 0 or length > end - pos:
        raise CorruptRecordError(f"record length {length} runs past the end of the batch")
    rend = pos + length
    if pos >= rend:
        raise CorruptRecordError("record is empty")
    pos += 1  # attributes: unused
    ts_delta, pos = _varint(buf, pos, rend)
    offset_delta, pos = _varint32(buf, pos, rend, "offset delta")
    key, pos = _bytes_field(buf, pos, rend, "key")
    value, pos = _bytes_field(buf, pos, rend, "value")
    count, pos = _varint32(buf, pos, rend, "header count")
    if count < 0:
        raise CorruptRecordError(f"negative header count {count}")
    headers: list[tuple[str, bytes | None]] = []
    for _ in range(count):
        n, pos = _varint32(buf, pos, rend, "header key length")
        if n < 0 or n > rend - pos:
            raise CorruptRecordError(f"header key length {n} runs past the end of the record")
        # A header key that is not UTF-8 (another client wrote it) is decoded leniently (U+FFFD), as the
        # Java client does: the record is delivered, never failed as corrupt.
        hkey = str(buf[pos:pos + n], "utf-8", "replace")
        pos += n
        hvalue, pos = _bytes_field(buf, pos, rend, "header value")
        headers.append((hkey, hvalue))
    if pos != rend:
        raise CorruptRecordError(f"record has {rend - pos} stray bytes after its headers")
    return ts_delta, offset_delta, key, value, tuple(headers), rend


class _V2:
    """The header of a v2 batch plus lazy access to its records."""

    def __init__(self, view: memoryview, pos: int, end: int) -> None:
        (self.base_offset, _length, self.ple, self.magic, self.crc, self.attrs, self.last_offset_delta,
         self.first_ts, self.max_ts, self.pid, self.epoch, self.seq,
         self.count) = _HEADER.unpack_from(view, pos)
        self.view, self.pos, self.end = view, pos, end
        self.codec = self.attrs & CODEC_MASK
        self._payload: Any = None

    def payload(self) -> Any:
        if self._payload is None:
            body = self.view[self.pos + BATCH_OVERHEAD:self.end]
            self._payload = decompress(self.codec, body) if self.codec else body
        return self._payload

    def first_key(self) -> bytes | None:
        if self.count <= 0:
            return None
        payload = self.payload()
        return _record(payload, 0, len(payload))[2]

    def records(self) -> list[Record]:
        payload = self.payload()
        end = len(payload)
        if self.count > end // _MIN_RECORD:
            raise CorruptRecordError(f"record count {self.count} is impossible in {end} bytes")
        ts_type = 1 if self.attrs & ATTR_TIMESTAMP_TYPE else 0
        out = []
        pos = 0
        for _ in range(self.count):
            ts_delta, offset_delta, key, value, headers, pos = _record(payload, pos, end)
            ts = self.max_ts if ts_type else wrap64(self.first_ts + ts_delta)
            out.append(Record(wrap64(self.base_offset + offset_delta), ts, ts_type, key, value, headers))
        if pos != end:
            raise CorruptRecordError(f"{end - pos} bytes left over after the batch's {self.count} records")
        return out

    def batch(self) -> Batch:
        return Batch(self.base_offset, self.ple, 2, self.crc, self.attrs, self.last_offset_delta,
                     self.first_ts, self.max_ts, self.pid, self.epoch, self.seq, self.records(),
                     self.end - self.pos)


def _frame(view: memoryview, pos: int, strict: bool) -> tuple[int, int] | None:
    """``(end, magic)`` of the batch at ``pos``, or None if the data ends inside it (fetch mode)."""
    n = len(view)
    rem = n - pos
    why = ""
    if rem < LOG_OVERHEAD:
        why = f"{rem} bytes left, a batch needs at least {LOG_OVERHEAD}"
    else:
        (length,) = struct.unpack_from(">i", view, pos + 8)
        if length < MIN_LENGTH[0]:
            raise CorruptRecordError(f"batch length {length} at byte {pos} is impossible")
        if rem < LOG_OVERHEAD + 5:
            why = f"{rem} bytes left, the batch header is incomplete"
        else:
            magic = view[pos + 16]
            if magic > 2:
                raise CorruptRecordError(f"unknown magic byte {magic} at byte {pos}")
            if length < MIN_LENGTH[magic]:
                raise CorruptRecordError(
                    f"batch length {length} at byte {pos} is below the minimum for magic {magic}")
            if rem >= LOG_OVERHEAD + length:
                return pos + LOG_OVERHEAD + length, magic
            why = f"{LOG_OVERHEAD + length} bytes declared, {rem} available"
    if strict:
        raise CorruptRecordError(f"truncated batch at byte {pos}: {why}")
    return None


def _v2(view: memoryview, pos: int, end: int, check_crcs: bool) -> _V2:
    b = _V2(view, pos, end)
    if check_crcs:
        actual = crc32c(view[pos + 21:end])
        if actual != b.crc:
            raise CorruptRecordError(
                f"batch at offset {b.base_offset}: CRC mismatch "
                f"(stored {b.crc:#010x}, computed {actual:#010x})")
    if b.count < 0:
        raise CorruptRecordError(f"batch at offset {b.base_offset}: negative record count {b.count}")
    if b.codec:
        check_codec(b.codec)
    return b


def _view(data: Any) -> memoryview:
    return memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)


class _Aborted:
    """Which transactional batches read_committed drops: those of a producer whose aborted transaction
    (from the fetch response's list) began at or before the batch, until that producer's ABORT marker."""

    def __init__(self, aborted: Iterable[tuple[int, int]]) -> None:
        self.pending = sorted(aborted, key=lambda t: t[1])
        self.i = 0
        self.pids: set[int] = set()

    def skips(self, b: Any, batch_next: int, is_control: bool) -> bool:
        if b.pid < 0:
            return False
        while self.i < len(self.pending) and self.pending[self.i][1] < batch_next:
            self.pids.add(self.pending[self.i][0])
            self.i += 1
        if is_control:
            key = b.first_key()
            if key is not None and parse_control_key(key)[1] == CONTROL_ABORT:
                self.pids.discard(b.pid)
            return False
        return bool(b.attrs & ATTR_TRANSACTIONAL) and b.pid in self.pids


def _emit_window(records: Iterable[Record], start_offset: int, end_offset: int,
                 emit: Callable[[Record, int], None], epoch: int) -> bool:
    """Emit the records in [start_offset, end_offset); True once one at or past the end was seen (the
    rest are still iterated, hence parsed and validated)."""
    stop = False
    for rec in records:
        if stop or rec.offset < start_offset:
            continue
        if end_offset >= 0 and rec.offset >= end_offset:
            stop = True
            continue
        emit(rec, epoch)
    return stop


def _walk(data: Any, check_crcs: bool, strict: bool, skip_control: bool, start_offset: int,
          end_offset: int, aborted: Iterable[tuple[int, int]] | None,
          emit: Callable[[Record, int], None]) -> tuple[int, int, bool]:
    """Visit the records of ``data`` that pass the filters; returns (next_offset, leader_epoch, truncated)."""
    view = _view(data)
    n = len(view)
    pos = 0
    next_offset = start_offset
    leader_epoch = -1
    txns = _Aborted(aborted) if aborted is not None else None
    while pos < n:
        frame = _frame(view, pos, strict)
        if frame is None:
            return next_offset, leader_epoch, True
        end, magic = frame
        b: Any = read_legacy(view, pos, end, check_crcs) if magic < 2 else _v2(view, pos, end, check_crcs)
        if end_offset >= 0 and b.base_offset >= end_offset:  # before anything else is parsed
            return max(next_offset, end_offset), leader_epoch, False
        if magic < 2:
            last = b.records[-1].offset if b.records else b.base_offset - 1
            batch_next, epoch = wrap64(last + 1), -1
            records: Iterable[Record] = b.records
        else:
            batch_next, epoch = wrap64(b.base_offset + b.last_offset_delta + 1), b.ple
            is_control = bool(b.attrs & ATTR_CONTROL)
            skip = (txns is not None and txns.skips(b, batch_next, is_control)) or \
                (is_control and skip_control) or batch_next <= start_offset
            records = () if skip else b.records()
        if _emit_window(records, start_offset, end_offset, emit, epoch):
            return max(next_offset, end_offset), leader_epoch, False
        next_offset = max(next_offset, batch_next)
        leader_epoch = epoch
        pos = end
    return next_offset, leader_epoch, False


def read_batches(data: Any, *, check_crcs: bool = True, strict: bool = False) -> list[Batch]:
    """Every batch in ``data`` with all its records (control records included), unfiltered."""
    view = _view(data)
    out: list[Batch] = []
    pos = 0
    while pos < len(view):
        frame = _frame(view, pos, strict)
        if frame is None:
            break
        end, magic = frame
        if magic < 2:
            out.append(read_legacy(view, pos, end, check_crcs))
        else:
            out.append(_v2(view, pos, end, check_crcs).batch())
        pos = end
    return out


def decode_records(data: Any, topic: str, partition: int, *, check_crcs: bool = True, strict: bool = False,
                   skip_control: bool = True, start_offset: int = -1, end_offset: int = -1,
                   aborted: Iterable[tuple[int, int]] | None = None) -> DecodedRecords:
    """ConsumerRecords of a fetched partition's record data, filtered as the Java consumer does.

    ``start_offset`` drops records below it (a compressed batch starts before the fetch offset);
    ``end_offset`` (if >= 0) stops at the first record at or past it; ``aborted`` (the fetch
    response's aborted transactions, ``[(producer_id, first_offset)]``) turns on read_committed:
    records of aborted transactions are dropped up to their ABORT marker.
    """
    check_topic_partition(topic, partition)
    out: list[ConsumerRecord] = []

    def emit(r: Record, leader_epoch: int) -> None:
        # A tombstone's value is None although ConsumerRecord types it VT (see its docstring).
        out.append(ConsumerRecord(
            topic, partition, r.offset, r.timestamp, r.timestamp_type, r.key, r.value,  # type: ignore[arg-type]
            r.headers,
            -1 if r.key is None else len(r.key), -1 if r.value is None else len(r.value), leader_epoch))

    next_offset, leader_epoch, truncated = _walk(
        data, check_crcs, strict, skip_control, start_offset, end_offset, aborted, emit)
    return DecodedRecords(out, next_offset, leader_epoch, truncated)


def decode_arrow(data: Any, topic: str, partition: int, *, check_crcs: bool = True, strict: bool = False,
                 skip_control: bool = True, start_offset: int = -1, end_offset: int = -1,
                 aborted: Iterable[tuple[int, int]] | None = None) -> DecodedArrow:
    """Like :func:`decode_records`, into one ``pyarrow.RecordBatch`` with :func:`arrow_schema`."""
    import pyarrow as pa

    check_topic_partition(topic, partition)
    schema = arrow_schema()
    keys: list[bytes | None] = []
    values: list[bytes | None] = []
    offsets: list[int] = []
    timestamps: list[int] = []
    ts_types: list[int] = []
    headers: list[list[dict[str, Any]]] = []

    def emit(r: Record, leader_epoch: int) -> None:
        keys.append(r.key)
        values.append(r.value)
        offsets.append(r.offset)
        timestamps.append(r.timestamp)
        ts_types.append(r.timestamp_type)
        headers.append([{"key": k, "value": v} for k, v in r.headers])

    next_offset, leader_epoch, truncated = _walk(
        data, check_crcs, strict, skip_control, start_offset, end_offset, aborted, emit)
    if sum(len(k) for k in keys if k is not None) > _I32_MAX or sum(
            len(v) for v in values if v is not None) > _I32_MAX:
        raise KafkaError("decoded keys or values exceed 2 GiB, too much for one Arrow batch")
    n = len(offsets)
    columns = [
        pa.array(keys, pa.binary()),
        pa.array(values, pa.binary()),
        pa.array([topic] * n, pa.string()),
        pa.array([partition] * n, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array(timestamps, pa.int64()).cast(schema.field("timestamp").type),
        pa.array(ts_types, pa.int32()),
        pa.array(headers, schema.field("headers").type),
    ]
    batch = pa.RecordBatch.from_arrays(columns, schema=schema)
    return DecodedArrow(batch, next_offset, leader_epoch, truncated)

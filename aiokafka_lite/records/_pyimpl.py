"""Pure-Python twin of the compiled core (``_core.pyx``): same API, same bytes, same results.

Used when the extension is missing or ``AIOKAFKA_LITE_PURE=1``; property tests hold the two equal.
"""

from __future__ import annotations

import operator
import struct
import time
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import IllegalArgumentError, IllegalStateError
from ._codecs import compress
from ._crc import crc32c
from ._pyread import _varint, decode_arrow, decode_records, read_batches
from ._types import (
    ATTR_CONTROL,
    ATTR_TIMESTAMP_TYPE,
    ATTR_TRANSACTIONAL,
    BATCH_OVERHEAD,
    CODEC_NAMES,
    CODEC_NONE,
    TIMESTAMP_LOG_APPEND_TIME,
    check_batch_fields,
    encode_headers,
    to_bytes,
)
from .value_buffer import ValueBuffer

__all__ = [
    "BatchBuilder",
    "StorePool",
    "decode_arrow",
    "decode_records",
    "decode_varint",
    "encode_varint",
    "patch_producer_state",
    "read_batches",
    "size_of_varint",
]

_HEADER = struct.Struct(">qiibIhiqqqhii")
_PRODUCER = struct.Struct(">qhi")
_INT64_MAX = (1 << 63) - 1

Headers = Sequence[tuple[str, Any]] | None


def _zigzag(value: int) -> int:
    return ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF


def longest_plain(items: Iterable[Any] | ValueBuffer) -> int:
    """The longest of ``items`` when each is bytes or None (None counts 0), else -1. A ValueBuffer's
    offsets are checked on the way (IllegalArgumentError)."""
    if type(items) is ValueBuffer:
        return items.longest()
    longest = 0
    for x in items:
        if x is None:
            continue
        if type(x) is not bytes:
            return -1
        longest = max(longest, len(x))
    return longest


def recv_buffer(size: int) -> bytearray:
    """A ``bytearray`` of ``size`` bytes for a socket to fill (compiled, its memory is not zeroed)."""
    if size < 0:
        raise IllegalArgumentError(f"negative buffer size {size}")
    return bytearray(size)


def size_of_varint(value: int) -> int:
    """Bytes taken by the zigzag varint encoding of a signed 64-bit ``value``."""
    if not -(1 << 63) <= value <= _INT64_MAX:
        raise IllegalArgumentError(f"varint value {value} does not fit in 64 bits")
    u = _zigzag(value)
    n = 1
    while u >= 0x80:
        u >>= 7
        n += 1
    return n


def _put_varint(out: bytearray, value: int) -> None:
    u = _zigzag(value)
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)


def encode_varint(value: int) -> bytes:
    """Zigzag varint (Kafka's varint/varlong) encoding of a signed 64-bit ``value``."""
    size_of_varint(value)
    out = bytearray()
    _put_varint(out, value)
    return bytes(out)


def decode_varint(data: Any, pos: int = 0) -> tuple[int, int]:
    """Decode the zigzag varint at ``data[pos:]``; returns ``(value, position after it)``."""
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    if pos < 0:
        raise IllegalArgumentError(f"negative position {pos}")
    return _varint(view, pos, len(view), "data")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _timestamp(ts: Any) -> int:
    if ts is None:
        return _now_ms()
    ts = operator.index(ts)
    if not 0 <= ts <= _INT64_MAX:
        raise IllegalArgumentError(f"timestamp_ms {ts} is out of range")
    return ts


class StorePool:
    """The compiled core's reuse of large batch stores (see ``_core_pool.pxi``); a bytearray builder
    has no store to reuse, so this one stays empty."""

    def __init__(self, max_idle: int = 8 << 20, max_out: int = 64) -> None:
        if max_idle < 0 or max_out < 0:
            raise IllegalArgumentError("StorePool sizes must be >= 0")

    @property
    def idle(self) -> int:
        return 0


class BatchBuilder:
    """Accumulates records into one v2 record batch; :meth:`build` compresses and checksums it.

    ``append`` refuses a record (returns None) once the batch would exceed ``batch_size`` bytes of
    uncompressed records plus header, except for the first record, which always fits.
    """

    def __init__(self, compression: int = CODEC_NONE, batch_size: int = 16384, *,
                 compression_level: int | None = None, is_transactional: bool = False,
                 producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                 partition_leader_epoch: int = -1, base_offset: int = 0,
                 timestamp_type: int = 0, is_control: bool = False, capacity: int = 0,
                 pool: StorePool | None = None) -> None:
        # ``capacity`` and ``pool`` size and reuse the compiled core's store; a bytearray needs neither.
        if compression not in CODEC_NAMES:
            raise IllegalArgumentError(f"unknown compression codec {compression}")
        self._codec = compression
        self._level = compression_level
        self._batch_size = batch_size
        attrs = compression
        if timestamp_type == TIMESTAMP_LOG_APPEND_TIME:
            attrs |= ATTR_TIMESTAMP_TYPE
        if is_transactional:
            attrs |= ATTR_TRANSACTIONAL
        if is_control:
            attrs |= ATTR_CONTROL
        self._attrs = attrs
        self._pid = producer_id
        self._epoch = producer_epoch
        self._seq = base_sequence
        self._ple = partition_leader_epoch
        self._base_offset = base_offset
        check_batch_fields(base_offset, partition_leader_epoch, producer_id, producer_epoch, base_sequence)
        self._buf = bytearray()
        self._count = 0
        self._first_ts = -1
        self._max_ts = -1
        self._built: bytes | None = None

    @property
    def record_count(self) -> int:
        return self._count

    @property
    def size(self) -> int:
        """Bytes of the batch so far, before compression."""
        return BATCH_OVERHEAD + len(self._buf)

    @property
    def batch_size(self) -> int:
        return self._batch_size

    def grow(self, extra: int) -> None:
        """Let the batch take ``extra`` more bytes of records (its buffer grows as needed anyway)."""
        self._batch_size += extra

    @property
    def compression(self) -> int:
        return self._codec

    @property
    def first_timestamp(self) -> int:
        return self._first_ts

    @property
    def max_timestamp(self) -> int:
        return self._max_ts

    @property
    def is_built(self) -> bool:
        return self._built is not None

    def set_producer_state(self, producer_id: int, producer_epoch: int, base_sequence: int) -> None:
        """Set the idempotence fields before :meth:`build` (see also :func:`patch_producer_state`)."""
        if self._built is not None:
            raise IllegalStateError("the batch is already built")
        check_batch_fields(0, 0, producer_id, producer_epoch, base_sequence)
        self._pid, self._epoch, self._seq = producer_id, producer_epoch, base_sequence

    def append(self, timestamp_ms: int | None, key: Any, value: Any, headers: Headers = None) -> int | None:
        """Add a record; returns its offset delta, or None when the batch is full."""
        if self._built is not None:
            raise IllegalStateError("cannot append to a built batch")
        ts = _timestamp(timestamp_ms)
        kb = key if key is None or type(key) is bytes else to_bytes(key, "key")
        vb = value if value is None or type(value) is bytes else to_bytes(value, "value")
        hdrs = encode_headers(headers) if headers else []
        delta = 0 if self._count == 0 else ts - self._first_ts
        body = bytearray(b"\x00")
        _put_varint(body, delta)
        _put_varint(body, self._count)
        for field in (kb, vb):
            if field is None:
                body.append(1)  # zigzag(-1)
            else:
                _put_varint(body, len(field))
                body += field
        _put_varint(body, len(hdrs))
        for hk, hv in hdrs:
            _put_varint(body, len(hk))
            body += hk
            if hv is None:
                body.append(1)
            else:
                _put_varint(body, len(hv))
                body += hv
        total = size_of_varint(len(body)) + len(body)
        if self._count and BATCH_OVERHEAD + len(self._buf) + total > self._batch_size:
            return None
        _put_varint(self._buf, len(body))
        self._buf += body
        if self._count == 0:
            self._first_ts = self._max_ts = ts
        elif ts > self._max_ts:
            self._max_ts = ts
        self._count += 1
        return self._count - 1

    def append_many(self, values: Sequence[Any] | ValueBuffer, keys: Sequence[Any] | None = None,
                    timestamps: int | Sequence[int | None] | None = None,
                    headers: Sequence[Headers] | None = None, start: int = 0) -> int:
        """Append ``values[start:]`` (with matching keys, timestamps, headers) until the batch is full.

        ``timestamps`` is one timestamp for all records, None (now), or a sequence. Returns how many
        records were appended (the first always fits in an empty batch).
        """
        if isinstance(timestamps, int) or timestamps is None:
            single: int | None = _timestamp(timestamps)
            tss = None
        else:
            single, tss = None, timestamps
        n = 0
        for i in range(start, len(values)):
            ts = single if tss is None else tss[i]
            key = None if keys is None else keys[i]
            hdrs = None if headers is None else headers[i]
            if self.append(ts, key, values[i], hdrs) is None:
                break
            n += 1
        return n

    def build(self) -> bytes:
        """The finished batch: header, (compressed) records and CRC. Later appends are refused."""
        if self._built is not None:
            return self._built
        if self._count == 0:
            raise IllegalStateError("cannot build a batch without records")
        payload: bytes | bytearray = self._buf
        if self._codec != CODEC_NONE:
            payload = compress(self._codec, bytes(self._buf), self._level)
        out = bytearray(BATCH_OVERHEAD + len(payload))
        _HEADER.pack_into(out, 0, self._base_offset, BATCH_OVERHEAD - 12 + len(payload), self._ple, 2, 0,
                          self._attrs, self._count - 1, self._first_ts, self._max_ts, self._pid,
                          self._epoch, self._seq, self._count)
        out[BATCH_OVERHEAD:] = payload
        struct.pack_into(">I", out, 17, crc32c(memoryview(out)[21:]))
        self._built = bytes(out)
        self._buf = bytearray()
        return self._built


def patch_producer_state(batch: Any, producer_id: int, producer_epoch: int, base_sequence: int,
                         is_transactional: bool | None = None) -> bytes:
    """Copy of a built v2 batch with new producer id, epoch and base sequence (and transactional bit).

    The Sender assigns these at drain time, after the batch was built; only the header and the CRC
    change, the records are not re-encoded.
    """
    check_batch_fields(0, 0, producer_id, producer_epoch, base_sequence)
    out = bytearray(batch)
    if len(out) < BATCH_OVERHEAD or out[16] != 2:
        raise IllegalArgumentError("not a v2 record batch")
    _PRODUCER.pack_into(out, 43, producer_id, producer_epoch, base_sequence)
    if is_transactional is not None:
        (attrs,) = struct.unpack_from(">h", out, 21)
        attrs = attrs | ATTR_TRANSACTIONAL if is_transactional else attrs & ~ATTR_TRANSACTIONAL
        struct.pack_into(">h", out, 21, attrs)
    struct.pack_into(">I", out, 17, crc32c(memoryview(out)[21:]))
    return bytes(out)

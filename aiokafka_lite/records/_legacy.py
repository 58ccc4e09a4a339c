"""Legacy message sets (magic 0 and 1), read only.

Brokers still hand these out for old topics. Each top-level message becomes one :class:`Batch`; a
compressed wrapper message carries an inner message set as its value, whose offsets are relative to
the wrapper in magic 1 (the wrapper holds the absolute offset of the last inner message). Rare enough
that both implementations share this Python code.
"""

from __future__ import annotations

import struct
import zlib

from ..errors import CorruptRecordError
from ._codecs import decompress
from ._types import (
    ATTR_TIMESTAMP_TYPE,
    CODEC_MASK,
    CODEC_NONE,
    LOG_OVERHEAD,
    MIN_LENGTH,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_TYPE_NONE,
    Batch,
    Record,
    wrap64,
)

_ENTRY = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_Message = tuple[int, int, int, int, int, "bytes | None", "bytes | None"]


def _message(view: memoryview, pos: int, end: int, check_crcs: bool) -> _Message:
    """Parse the message at ``view[pos:end]`` (offset and size fields included, size already checked)."""
    offset, _size, crc, magic, attrs = _ENTRY.unpack_from(view, pos)
    if check_crcs:
        actual = zlib.crc32(view[pos + 16:end]) & 0xFFFFFFFF
        if actual != crc:
            raise CorruptRecordError(
                f"legacy message at offset {offset}: CRC mismatch "
                f"(stored {crc:#010x}, computed {actual:#010x})")
    p = pos + 18
    timestamp = -1
    if magic == 1:
        (timestamp,) = _I64.unpack_from(view, p)
        p += 8
    fields: list[bytes | None] = []
    for name in ("key", "value"):
        if end - p < 4:
            raise CorruptRecordError(f"legacy message at offset {offset}: {name} length runs past the end")
        (n,) = _I32.unpack_from(view, p)
        p += 4
        if n < -1 or n > end - p:
            raise CorruptRecordError(f"legacy message at offset {offset}: {name} length {n} is invalid")
        if n == -1:
            fields.append(None)
        else:
            fields.append(bytes(view[p:p + n]))
            p += n
    if p != end:
        raise CorruptRecordError(f"legacy message at offset {offset}: {end - p} stray bytes after the value")
    return offset, crc, magic, attrs, timestamp, fields[0], fields[1]


def _entry_end(view: memoryview, pos: int, end: int, magic: int) -> int:
    """End of the inner message at ``pos``; inner sets are complete, so truncation is corruption."""
    if end - pos < LOG_OVERHEAD + 5:
        raise CorruptRecordError("compressed legacy message set ends inside a message header")
    (size,) = _I32.unpack_from(view, pos + 8)
    inner_magic = view[pos + 16]
    if inner_magic != magic:
        raise CorruptRecordError(f"inner legacy message has magic {inner_magic}, its wrapper {magic}")
    if size < MIN_LENGTH[magic] or size > end - pos - LOG_OVERHEAD:
        raise CorruptRecordError(f"inner legacy message size {size} is invalid")
    return pos + LOG_OVERHEAD + size


def read_legacy(data: memoryview, pos: int, end: int, check_crcs: bool) -> Batch:
    """Decode the top-level message ``data[pos:end]``, whose size and magic (0 or 1) the caller checked."""
    offset, crc, magic, attrs, timestamp, key, value = _message(data, pos, end, check_crcs)
    codec = attrs & CODEC_MASK
    log_append = magic == 1 and bool(attrs & ATTR_TIMESTAMP_TYPE)
    ts_type = TIMESTAMP_TYPE_NONE if magic == 0 else (
        TIMESTAMP_LOG_APPEND_TIME if log_append else TIMESTAMP_CREATE_TIME)
    if codec == CODEC_NONE:
        records = [Record(offset, timestamp, ts_type, key, value, ())]
    else:
        if value is None:
            raise CorruptRecordError(f"compressed legacy message at offset {offset} has a null value")
        inner = memoryview(decompress(codec, value, magic))
        messages: list[_Message] = []
        p = 0
        while p < len(inner):
            q = _entry_end(inner, p, len(inner), magic)
            msg = _message(inner, p, q, check_crcs)
            if msg[3] & CODEC_MASK:
                raise CorruptRecordError("legacy message nests compressed messages")
            messages.append(msg)
            p = q
        if not messages:
            raise CorruptRecordError(f"compressed legacy message at offset {offset} holds no messages")
        shift = offset - messages[-1][0] if magic == 1 else 0
        records = [
            Record(wrap64(m[0] + shift), timestamp if log_append else m[4], ts_type, m[5], m[6], ())
            for m in messages
        ]
    first = records[0].offset
    return Batch(
        base_offset=first, partition_leader_epoch=-1, magic=magic, crc=crc, attributes=attrs,
        last_offset_delta=records[-1].offset - first, first_timestamp=records[0].timestamp,
        max_timestamp=max(r.timestamp for r in records), producer_id=-1, producer_epoch=-1,
        base_sequence=-1, records=records, size_in_bytes=end - pos)

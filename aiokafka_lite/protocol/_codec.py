"""Hand-written wire primitives shared by the generated codecs (sans-I/O).

The generated modules call the module-level ``read_*`` functions (``(data, pos) -> (value, new_pos)``) and
``write_*`` functions (append to a ``bytearray``) directly, because a function over a local ``pos`` is cheaper
than a method on a reader object. ``_reader.Reader`` wraps the same functions for hand-written code (records,
SASL) that prefers a cursor. The generated classes' base (``Data``/``Message``) is in ``_message``.

Every length is checked against the bytes that remain *before* anything is allocated, so a hostile 2 GB
prefix costs nothing; every failure is a :class:`~aiokafka_lite.errors.ProtocolError` naming the problem.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from struct import Struct
from typing import Any

from ..errors import IllegalArgumentError, ProtocolError, UnsupportedVersionError

__all__ = [
    "BOOL",
    "FLOAT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "UINT16",
    "UINT32",
    "ZERO_UUID",
    "Buffer",
]

Buffer = bytes | bytearray | memoryview

INT8 = Struct(">b")
INT16 = Struct(">h")
INT32 = Struct(">i")
INT64 = Struct(">q")
UINT16 = Struct(">H")
UINT32 = Struct(">I")
FLOAT64 = Struct(">d")
BOOL = Struct(">?")

ZERO_UUID = uuid.UUID(int=0)

_unpack_int16 = INT16.unpack_from
_unpack_int32 = INT32.unpack_from
_pack_int16 = INT16.pack
_pack_int32 = INT32.pack
_pack = struct.pack

#: Byte values this long or longer stay out of line in a scatter buffer (protocol/scatter.py): below it,
#: a copy costs less than a write call.
SCATTER_MIN = 8192

#: Errors a generated decoder may hit on malformed input; ``Data.decode`` turns them into ProtocolError.
DECODE_ERRORS = (struct.error, IndexError, ValueError, UnicodeDecodeError, OverflowError, TypeError)


def _truncated(what: str, need: int, pos: int, data: Buffer) -> ProtocolError:
    left = len(data) - pos
    return ProtocolError(f"truncated {what}: need {need} bytes at offset {pos}, only {left} remain")


# ----------------------------------------------------------------------------------------------- varints
def read_uvarint(data: Buffer, pos: int, what: str = "unsigned varint", max_bytes: int = 5,
                 bits: int = 32) -> tuple[int, int]:
    """An unsigned LEB128 varint of at most 5 bytes (Kafka's 32-bit ``UNSIGNED_VARINT``); the other
    arguments serve :func:`read_uvarlong`."""
    n = len(data)
    if pos >= n:
        raise _truncated(what, 1, pos, data)
    b = data[pos]
    if b < 0x80:  # one byte, the common case (lengths and counts): no loop
        return b, pos + 1
    value = b & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= n:
            raise _truncated(what, 1, pos, data)
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            if value >> bits:
                raise ProtocolError(f"{what} does not fit in {bits} bits")
            return value, pos
        shift += 7
        if shift >= 7 * max_bytes:
            raise ProtocolError(f"{what} longer than {max_bytes} bytes")


def read_uvarlong(data: Buffer, pos: int) -> tuple[int, int]:
    """An unsigned LEB128 varint of at most 10 bytes (64-bit)."""
    return read_uvarint(data, pos, "unsigned varlong", 10, 64)


def read_varint(data: Buffer, pos: int) -> tuple[int, int]:
    """A zigzag-encoded signed 32-bit varint (record fields)."""
    v, pos = read_uvarint(data, pos)
    return (v >> 1) ^ -(v & 1), pos


def read_varlong(data: Buffer, pos: int) -> tuple[int, int]:
    """A zigzag-encoded signed 64-bit varint (record fields)."""
    v, pos = read_uvarlong(data, pos)
    return (v >> 1) ^ -(v & 1), pos


def write_uvarint(out: bytearray, value: int) -> None:
    if value < 0x80:
        if value < 0:
            raise IllegalArgumentError(f"unsigned varint cannot hold {value}")
        out.append(value)
        return
    if value < 0x4000:  # two bytes: a record batch's length up to 16 KiB, unrolled (no loop)
        out.append((value & 0x7F) | 0x80)
        out.append(value >> 7)
        return
    if value < 0x200000:  # three bytes: up to 2 MiB
        out.append((value & 0x7F) | 0x80)
        out.append(((value >> 7) & 0x7F) | 0x80)
        out.append(value >> 14)
        return
    if value > 0xFFFFFFFFFFFFFFFF:
        raise IllegalArgumentError(f"unsigned varint cannot hold {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


write_uvarlong = write_uvarint


def write_varint(out: bytearray, value: int) -> None:
    if not -0x80000000 <= value <= 0x7FFFFFFF:
        raise IllegalArgumentError(f"varint out of 32-bit range: {value}")
    write_uvarint(out, ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def write_varlong(out: bytearray, value: int) -> None:
    if not -0x8000000000000000 <= value <= 0x7FFFFFFFFFFFFFFF:
        raise IllegalArgumentError(f"varlong out of 64-bit range: {value}")
    write_uvarint(out, ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def uvarint_size(value: int) -> int:
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def varint_size(value: int) -> int:
    return uvarint_size(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


# ------------------------------------------------------------------------------------ strings and bytes
def _slice_end(data: Buffer, pos: int, size: int, what: str) -> int:
    end = pos + size
    if end > len(data):
        raise _truncated(what, size, pos, data)
    return end


def read_string(data: Buffer, pos: int) -> tuple[str, int]:
    (size,) = _unpack_int16(data, pos)
    pos += 2
    if size < 0:
        raise ProtocolError(f"null or negative length {size} for a non-nullable string")
    end = _slice_end(data, pos, size, "string")
    return str(data[pos:end], "utf-8"), end


def read_nullable_string(data: Buffer, pos: int) -> tuple[str | None, int]:
    (size,) = _unpack_int16(data, pos)
    pos += 2
    if size < 0:
        if size != -1:
            raise ProtocolError(f"negative string length {size}")
        return None, pos
    end = _slice_end(data, pos, size, "string")
    return str(data[pos:end], "utf-8"), end


def read_compact_string(data: Buffer, pos: int) -> tuple[str, int]:
    if pos < len(data):
        end = data[pos]  # a one-byte length (below 127 bytes), the common case: no further calls
        if 0 < end < 0x80:
            end += pos
            if end <= len(data):
                return str(data[pos + 1:end], "utf-8"), end
    size, pos = read_uvarint(data, pos)
    if size == 0:
        raise ProtocolError("null compact string for a non-nullable field")
    end = _slice_end(data, pos, size - 1, "compact string")
    return str(data[pos:end], "utf-8"), end


def read_compact_nullable_string(data: Buffer, pos: int) -> tuple[str | None, int]:
    if pos < len(data):
        end = data[pos]  # as read_compact_string
        if 0 < end < 0x80:
            end += pos
            if end <= len(data):
                return str(data[pos + 1:end], "utf-8"), end
    size, pos = read_uvarint(data, pos)
    if size == 0:
        return None, pos
    end = _slice_end(data, pos, size - 1, "compact string")
    return str(data[pos:end], "utf-8"), end


def read_bytes(data: Buffer, pos: int) -> tuple[bytes, int]:
    (size,) = _unpack_int32(data, pos)
    pos += 4
    if size < 0:
        raise ProtocolError(f"null or negative length {size} for non-nullable bytes")
    end = _slice_end(data, pos, size, "bytes")
    return bytes(data[pos:end]), end


def read_nullable_bytes(data: Buffer, pos: int) -> tuple[bytes | None, int]:
    (size,) = _unpack_int32(data, pos)
    pos += 4
    if size < 0:
        if size != -1:
            raise ProtocolError(f"negative bytes length {size}")
        return None, pos
    end = _slice_end(data, pos, size, "bytes")
    return bytes(data[pos:end]), end


def read_compact_bytes(data: Buffer, pos: int) -> tuple[bytes, int]:
    size, pos = read_uvarint(data, pos)
    if size == 0:
        raise ProtocolError("null compact bytes for a non-nullable field")
    end = _slice_end(data, pos, size - 1, "compact bytes")
    return bytes(data[pos:end]), end


def read_compact_nullable_bytes(data: Buffer, pos: int) -> tuple[bytes | None, int]:
    size, pos = read_uvarint(data, pos)
    if size == 0:
        return None, pos
    end = _slice_end(data, pos, size - 1, "compact bytes")
    return bytes(data[pos:end]), end


def _records_slice(data: Buffer, pos: int, end: int) -> bytes | memoryview:
    """Record data without a copy when ``data`` cannot change under it (``bytes``, or a read-only view
    such as the connection's frames): a fetch answer's batches are read once, straight from the frame.
    A ``bytearray`` (or a writable view) is copied, so that its owner may still resize or reuse it."""
    if type(data) is memoryview:
        return data[pos:end] if data.readonly else bytes(data[pos:end])
    if type(data) is bytes:
        return memoryview(data)[pos:end]
    return bytes(data[pos:end])


def read_records(data: Buffer, pos: int) -> tuple[bytes | memoryview, int]:
    (size,) = _unpack_int32(data, pos)
    pos += 4
    if size < 0:
        raise ProtocolError(f"null or negative length {size} for non-nullable records")
    end = _slice_end(data, pos, size, "records")
    return _records_slice(data, pos, end), end


def read_nullable_records(data: Buffer, pos: int) -> tuple[bytes | memoryview | None, int]:
    (size,) = _unpack_int32(data, pos)
    pos += 4
    if size < 0:
        if size != -1:
            raise ProtocolError(f"negative records length {size}")
        return None, pos
    end = _slice_end(data, pos, size, "records")
    return _records_slice(data, pos, end), end


def read_compact_records(data: Buffer, pos: int) -> tuple[bytes | memoryview, int]:
    size, pos = read_uvarint(data, pos)
    if size == 0:
        raise ProtocolError("null compact records for a non-nullable field")
    end = _slice_end(data, pos, size - 1, "compact records")
    return _records_slice(data, pos, end), end


def read_compact_nullable_records(data: Buffer, pos: int) -> tuple[bytes | memoryview | None, int]:
    size, pos = read_uvarint(data, pos)
    if size == 0:
        return None, pos
    end = _slice_end(data, pos, size - 1, "compact records")
    return _records_slice(data, pos, end), end


def read_uuid(data: Buffer, pos: int) -> tuple[uuid.UUID, int]:
    end = _slice_end(data, pos, 16, "uuid")
    return uuid.UUID(bytes=bytes(data[pos:end])), end


def write_string(out: bytearray, value: str) -> None:
    raw = value.encode("utf-8")
    if len(raw) > 0x7FFF:
        raise IllegalArgumentError(f"string of {len(raw)} bytes exceeds the int16 length limit")
    out += _pack_int16(len(raw))
    out += raw


def write_nullable_string(out: bytearray, value: str | None) -> None:
    if value is None:
        out += b"\xff\xff"
    else:
        write_string(out, value)


def write_compact_string(out: bytearray, value: str) -> None:
    raw = value.encode("utf-8")
    n = len(raw) + 1
    if n < 0x80:
        out.append(n)
    else:
        write_uvarint(out, n)
    out += raw


def write_compact_nullable_string(out: bytearray, value: str | None) -> None:
    if value is None:
        out.append(0)
    else:
        write_compact_string(out, value)


def _put_value(out: bytearray, value: Buffer) -> None:
    """Append a byte value; a large ``bytes``/``memoryview`` headed for a scatter buffer is noted there,
    with where it belongs, instead of copied (the buffer has ``spans``, a plain bytearray has not).

    Only byte values (record batches) take this check, so every other write is the bytearray's own
    C-level ``+=`` rather than a Python-level ``__iadd__``.
    """
    n = len(value)
    if n >= SCATTER_MIN and type(value) in (bytes, memoryview):
        spans = getattr(out, "spans", None)
        if spans is not None:
            spans.append((len(out), value))
            out.size += n  # type: ignore[attr-defined]
            return
    out += value


def write_bytes(out: bytearray, value: Buffer) -> None:
    out += _pack_int32(len(value))
    _put_value(out, value)


def write_nullable_bytes(out: bytearray, value: Buffer | None) -> None:
    if value is None:
        out += b"\xff\xff\xff\xff"
    else:
        out += _pack_int32(len(value))
        _put_value(out, value)


def write_compact_bytes(out: bytearray, value: Buffer) -> None:
    write_uvarint(out, len(value) + 1)
    _put_value(out, value)


def write_compact_nullable_bytes(out: bytearray, value: Buffer | None) -> None:
    if value is None:
        out.append(0)
    else:
        write_uvarint(out, len(value) + 1)
        _put_value(out, value)


# ------------------------------------------------------------------------------------------------ arrays
def read_array_len(data: Buffer, pos: int) -> tuple[int, int]:
    """An int32 element count (-1 = null); a count above the remaining bytes is rejected before allocating."""
    (n,) = _unpack_int32(data, pos)
    pos += 4
    if n > len(data) - pos:
        raise ProtocolError(f"array of {n} elements but only {len(data) - pos} bytes remain")
    if n < -1:
        raise ProtocolError(f"negative array length {n}")
    return n, pos


def read_compact_array_len(data: Buffer, pos: int) -> tuple[int, int]:
    """A compact (uvarint N+1) element count; -1 = null."""
    n, pos = read_uvarint(data, pos)
    n -= 1
    if n > len(data) - pos:
        raise ProtocolError(f"array of {n} elements but only {len(data) - pos} bytes remain")
    return n, pos


_SIZES = {"b": 1, "h": 2, "i": 4, "q": 8, "H": 2, "I": 4, "d": 8, "?": 1}
_ARRAY_STRUCTS: dict[tuple[str, int], Callable[[Buffer, int], tuple[Any, ...]]] = {}


def _array_unpacker(code: str, n: int) -> Callable[[Buffer, int], tuple[Any, ...]]:
    fn = _ARRAY_STRUCTS.get((code, n))
    if fn is None:
        fn = Struct(f">{n}{code}").unpack_from
        if n <= 64:  # small counts repeat (replica lists); large ones would only bloat the cache
            _ARRAY_STRUCTS[(code, n)] = fn
    return fn


def read_prim_array(data: Buffer, pos: int, code: str, compact: bool, nullable: bool) -> tuple[Any, int]:
    """A whole array of primitives (struct ``code``; ``"s"`` string, ``"u"`` uuid), length included.

    One call per array keeps replica lists and partition lists cheap: the count, its bound check and the
    elements come in one go.
    """
    if compact:
        if pos >= len(data):
            raise _truncated("array length", 1, pos, data)
        n = data[pos]
        if n < 0x80:
            pos += 1
        else:
            n, pos = read_uvarint(data, pos)
        n -= 1
    else:
        (n,) = _unpack_int32(data, pos)
        pos += 4
    if n < 0:
        if n == -1 and nullable:
            return None, pos
        raise ProtocolError(f"array length {n} where a non-null array is required")
    if code == "s":
        if n > len(data) - pos:
            raise ProtocolError(f"array of {n} strings but only {len(data) - pos} bytes remain")
        reader = read_compact_string if compact else read_string
        items: list[str] = []
        append = items.append
        for _ in range(n):
            s, pos = reader(data, pos)
            append(s)
        return items, pos
    if code == "u":
        end = _slice_end(data, pos, n * 16, "uuid array")
        mk = uuid.UUID
        return [mk(bytes=bytes(data[i : i + 16])) for i in range(pos, end, 16)], end
    end = _slice_end(data, pos, n * _SIZES[code], "array")
    return list(_array_unpacker(code, n)(data, pos)), end


def write_prim_array(
    out: bytearray, values: list[Any] | None, code: str, compact: bool, nullable: bool
) -> None:
    """The writing twin of :func:`read_prim_array`; None only where the version allows a null array."""
    if values is None:
        if not nullable:
            raise UnsupportedVersionError("null array where this version requires a value")
        if compact:
            out.append(0)
        else:
            out += b"\xff\xff\xff\xff"
        return
    n = len(values)
    if compact:
        if n < 0x7F:
            out.append(n + 1)
        else:
            write_uvarint(out, n + 1)
    else:
        out += _pack_int32(n)
    if code == "s":
        writer = write_compact_string if compact else write_string
        for s in values:
            writer(out, s)
    elif code == "u":
        for u in values:
            out += u.bytes
    elif n:
        out += _pack(f">{n}{code}", *values)


def write_array_len(out: bytearray, n: int) -> None:
    out += _pack_int32(n)


def write_compact_array_len(out: bytearray, n: int) -> None:
    n += 1
    if n < 0x80:
        out.append(n)
    else:
        write_uvarint(out, n)


# ----------------------------------------------------------------------------------------- tagged fields
def read_tag_header(data: Buffer, pos: int) -> tuple[int, int, int]:
    """``(tag, end_of_value, value_start)`` of one tagged field; checks the value fits."""
    tag, pos = read_uvarint(data, pos)
    size, pos = read_uvarint(data, pos)
    return tag, _slice_end(data, pos, size, f"tagged field {tag}"), pos


def read_tag_count(data: Buffer, pos: int) -> tuple[int, int]:
    n, pos = read_uvarint(data, pos)
    if n > len(data) - pos:
        raise ProtocolError(f"{n} tagged fields but only {len(data) - pos} bytes remain")
    return n, pos


def read_unknown_tags(data: Buffer, pos: int) -> tuple[list[tuple[int, bytes]] | None, int]:
    """A tagged-field section where no tag is known: keep every field raw, so re-encoding is exact."""
    if pos < len(data) and data[pos] == 0:
        return None, pos + 1
    n, pos = read_tag_count(data, pos)
    if n == 0:
        return None, pos
    unknown: list[tuple[int, bytes]] = []
    for _ in range(n):
        tag, end, pos = read_tag_header(data, pos)
        unknown.append((tag, bytes(data[pos:end])))
        pos = end
    return unknown, pos


def write_tags(
    out: bytearray, known: list[tuple[int, Buffer]], unknown: list[tuple[int, bytes]] | None
) -> None:
    """A tagged-field section: known and preserved unknown fields, in ascending tag order."""
    fields: list[tuple[int, Buffer]] = list(known)
    if unknown:
        fields.extend(unknown)
        fields.sort(key=lambda item: item[0])
    write_uvarint(out, len(fields))
    for tag, raw in fields:
        write_uvarint(out, tag)
        write_uvarint(out, len(raw))
        out += raw


def write_unknown_tags(out: bytearray, unknown: list[tuple[int, bytes]] | None) -> None:
    if not unknown:
        out.append(0)
    else:
        write_tags(out, [], unknown)


def skip_tags(data: Buffer, pos: int) -> int:
    """Skip a tagged-field section (used for the response header, whose tags carry nothing we use)."""
    n, pos = read_tag_count(data, pos)
    for _ in range(n):
        _tag, pos, _start = read_tag_header(data, pos)
    return pos

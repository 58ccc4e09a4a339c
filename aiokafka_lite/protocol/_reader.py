"""A cursor over Kafka wire bytes for hand-written decoders (records, SASL, the consumer protocol), over the
same primitives the generated codecs call directly (:mod:`._codec`).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from struct import Struct
from typing import Any, TypeVar

from ..errors import ProtocolError
from ._codec import (
    DECODE_ERRORS,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT16,
    UINT32,
    Buffer,
    _slice_end,
    _truncated,
    read_array_len,
    read_bytes,
    read_compact_array_len,
    read_compact_bytes,
    read_compact_nullable_bytes,
    read_compact_nullable_string,
    read_compact_string,
    read_nullable_bytes,
    read_nullable_string,
    read_string,
    read_unknown_tags,
    read_uuid,
    read_uvarint,
    read_uvarlong,
    read_varint,
    read_varlong,
)

__all__ = ["Reader"]


T = TypeVar("T")


def _fixed(st: Struct, convert: Callable[[Any], T]) -> Callable[[Buffer, int], tuple[T, int]]:
    """A read of one fixed-width value, in the codec functions' shape: (data, pos) -> (value, next pos)."""
    size = st.size

    def read(data: Buffer, pos: int) -> tuple[T, int]:
        if pos + size > len(data):
            raise _truncated("integer", size, pos, data)
        return convert(st.unpack_from(data, pos)[0]), pos + size

    return read


def _read(fn: Callable[[Buffer, int], tuple[T, int]]) -> Callable[[Reader], T]:
    """A :class:`Reader` method reading one wire type with a codec function: the table below."""

    def method(self: Reader) -> T:
        value: T = self._call(fn)
        return value

    return method


class Reader:
    """A cursor over bytes for hand-written decoders; every read raises ProtocolError when input runs out.

    One method per wire type, each a codec function of :mod:`._codec` applied at the cursor.
    """

    __slots__ = ("data", "pos")

    def __init__(self, data: Buffer, pos: int = 0) -> None:
        self.data = data
        self.pos = pos

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def _call(self, fn: Callable[[Buffer, int], tuple[Any, int]]) -> Any:
        try:
            value, self.pos = fn(self.data, self.pos)
        except ProtocolError:
            raise
        except DECODE_ERRORS as exc:
            raise ProtocolError(f"malformed input at offset {self.pos}: {exc}") from None
        return value

    int8 = _read(_fixed(INT8, int))
    int16 = _read(_fixed(INT16, int))
    int32 = _read(_fixed(INT32, int))
    int64 = _read(_fixed(INT64, int))
    uint16 = _read(_fixed(UINT16, int))
    uint32 = _read(_fixed(UINT32, int))
    float64 = _read(_fixed(FLOAT64, float))
    bool = _read(_fixed(INT8, builtins.bool))
    uvarint = _read(read_uvarint)
    uvarlong = _read(read_uvarlong)
    varint = _read(read_varint)
    varlong = _read(read_varlong)
    uuid = _read(read_uuid)
    string = _read(read_string)
    nullable_string = _read(read_nullable_string)
    compact_string = _read(read_compact_string)
    compact_nullable_string = _read(read_compact_nullable_string)
    bytes = _read(read_bytes)
    nullable_bytes = _read(read_nullable_bytes)
    compact_bytes = _read(read_compact_bytes)
    compact_nullable_bytes = _read(read_compact_nullable_bytes)
    #: int32 element count, -1 for null; never more than the bytes left.
    array_len = _read(read_array_len)
    compact_array_len = _read(read_compact_array_len)

    def raw(self, size: int) -> memoryview:
        """The next ``size`` bytes without copying."""
        if size < 0:
            raise ProtocolError(f"negative size {size}")
        end = _slice_end(self.data, self.pos, size, "raw bytes")
        view = memoryview(self.data)[self.pos : end]
        self.pos = end
        return view

    def tagged_fields(self) -> list[tuple[int, builtins.bytes]]:
        """A whole tagged-field section as raw ``(tag, value)`` pairs."""
        fields: list[tuple[int, builtins.bytes]] | None = self._call(read_unknown_tags)
        return fields or []

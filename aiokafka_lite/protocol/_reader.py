"""A cursor over Kafka wire bytes for hand-written decoders (records, SASL, the consumer protocol), over the
same primitives the generated codecs call directly (:mod:`._codec`).
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Callable
from struct import Struct
from typing import Any

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


class Reader:
    """A cursor over bytes for hand-written decoders; every read raises ProtocolError when input runs out."""

    __slots__ = ("data", "pos")

    def __init__(self, data: Buffer, pos: int = 0) -> None:
        self.data = data
        self.pos = pos

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def _fixed(self, st: Struct) -> Any:
        pos = self.pos
        if pos + st.size > len(self.data):
            raise _truncated("integer", st.size, pos, self.data)
        self.pos = pos + st.size
        return st.unpack_from(self.data, pos)[0]

    def int8(self) -> int:
        return int(self._fixed(INT8))

    def int16(self) -> int:
        return int(self._fixed(INT16))

    def int32(self) -> int:
        return int(self._fixed(INT32))

    def int64(self) -> int:
        return int(self._fixed(INT64))

    def uint16(self) -> int:
        return int(self._fixed(UINT16))

    def uint32(self) -> int:
        return int(self._fixed(UINT32))

    def float64(self) -> float:
        return float(self._fixed(FLOAT64))

    def bool(self) -> bool:
        return int(self._fixed(INT8)) != 0

    def _call(self, fn: Callable[[Buffer, int], tuple[Any, int]]) -> Any:
        try:
            value, self.pos = fn(self.data, self.pos)
        except ProtocolError:
            raise
        except DECODE_ERRORS as exc:
            raise ProtocolError(f"malformed input at offset {self.pos}: {exc}") from None
        return value

    def uvarint(self) -> int:
        return int(self._call(read_uvarint))

    def uvarlong(self) -> int:
        return int(self._call(read_uvarlong))

    def varint(self) -> int:
        return int(self._call(read_varint))

    def varlong(self) -> int:
        return int(self._call(read_varlong))

    def uuid(self) -> uuid.UUID:
        value: uuid.UUID = self._call(read_uuid)
        return value

    def string(self) -> str:
        return str(self._call(read_string))

    def nullable_string(self) -> str | None:
        value: str | None = self._call(read_nullable_string)
        return value

    def compact_string(self) -> str:
        return str(self._call(read_compact_string))

    def compact_nullable_string(self) -> str | None:
        value: str | None = self._call(read_compact_nullable_string)
        return value

    def bytes(self) -> builtins.bytes:
        value: builtins.bytes = self._call(read_bytes)
        return value

    def nullable_bytes(self) -> builtins.bytes | None:
        value: builtins.bytes | None = self._call(read_nullable_bytes)
        return value

    def compact_bytes(self) -> builtins.bytes:
        value: builtins.bytes = self._call(read_compact_bytes)
        return value

    def compact_nullable_bytes(self) -> builtins.bytes | None:
        value: builtins.bytes | None = self._call(read_compact_nullable_bytes)
        return value

    def array_len(self) -> int:
        """int32 element count, -1 for null; never more than the bytes left."""
        return int(self._call(read_array_len))

    def compact_array_len(self) -> int:
        return int(self._call(read_compact_array_len))

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

"""Record values laid end to end in one buffer, Arrow's binary layout: ``send_many``'s buffer input.

Values that already sit in one buffer (an Arrow ``BinaryArray``, a column read from Parquet, a memory
map) would otherwise become one ``bytes`` object each before the batch builder copies them again.
:class:`ValueBuffer` names them where they are, ``data[offsets[i]:offsets[i + 1]]``, and the records
core's ``BatchBuilder.append_many`` copies each straight from there into its batch: one copy per value.
The compiled core and the pure twin read it the same way; pyarrow is needed only to pass Arrow arrays.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

from ..errors import IllegalArgumentError

__all__ = ["ValueBuffer"]

#: Offset formats taken as they are (int32, as Arrow's binary and string types; int64, as the large
#: ones); any other sequence of ints is copied into an int64 array once.
_OFFSET_FORMATS = ("i", "l", "q")
_ARROW_TYPES = ("binary", "large_binary", "string", "large_string")


class ValueBuffer(Sequence["bytes | None"]):
    """``len(offsets) - 1`` values: value ``i`` is ``data[offsets[i]:offsets[i + 1]]``, or None where the
    Arrow validity bitmap ``validity`` (bit ``validity_offset + i``, least significant bit first) is 0.

    ``data`` is any contiguous buffer (``bytes``, ``bytearray``, ``memoryview``, ``mmap``, a pyarrow
    ``Buffer``); ``offsets`` a buffer of int32 or int64 (``array('q')``, a NumPy array, a memoryview)
    or a sequence of ints. Nothing is copied here: the buffers' contents must not change until
    ``send_many`` returns (the values are in their batches then). The shapes are checked here, once,
    and the parts are read-only afterwards, so the checks hold for as long as the ValueBuffer lives;
    the offsets' values are checked where they are read: decreasing offsets or one beyond ``data``
    raise :class:`IllegalArgumentError`.
    """

    __slots__ = ("_data", "_offsets", "_validity", "_validity_offset")

    def __init__(self, data: Any, offsets: Any, validity: Any = None, validity_offset: int = 0) -> None:
        self._data = _view(data, "data").cast("B")
        try:
            offs = memoryview(offsets)
        except TypeError:
            offs = memoryview(array("q", offsets))
        if not offs.c_contiguous:
            raise IllegalArgumentError("ValueBuffer offsets must be contiguous")
        fmt = offs.format.lstrip("@=" + ("<" if sys.byteorder == "little" else ">"))
        if offs.ndim != 1 or fmt not in _OFFSET_FORMATS or offs.itemsize not in (4, 8):
            raise IllegalArgumentError(f"ValueBuffer offsets must be native int32 or int64: {offs.format!r}")
        if fmt != offs.format:
            offs = offs.cast("B").cast(fmt)  # type: ignore[call-overload]
        if len(offs) < 1:
            raise IllegalArgumentError("ValueBuffer needs at least one offset (n values take n + 1)")
        self._offsets = offs
        if validity_offset < 0:
            raise IllegalArgumentError(f"validity_offset must be >= 0, got {validity_offset}")
        self._validity = None if validity is None else _view(validity, "validity").cast("B")
        if self._validity is not None and len(self._validity) * 8 < validity_offset + len(offs) - 1:
            raise IllegalArgumentError("ValueBuffer validity bitmap is shorter than its values")
        self._validity_offset = validity_offset

    @property
    def data(self) -> memoryview:
        """The values end to end (a byte view)."""
        return self._data

    @property
    def offsets(self) -> memoryview:
        """``len(self) + 1`` native int32 or int64 offsets into :attr:`data`."""
        return self._offsets

    @property
    def validity(self) -> memoryview | None:
        """The Arrow validity bitmap (a byte view), or None: no value is None."""
        return self._validity

    @property
    def validity_offset(self) -> int:
        """The bit of :attr:`validity` that value 0 has."""
        return self._validity_offset

    @classmethod
    def from_arrow(cls, array_: Any) -> ValueBuffer:
        """The values of a pyarrow ``BinaryArray``, ``LargeBinaryArray`` (or string array), where they
        are: its offsets, data and validity buffers, without a copy (a slice's offset respected)."""
        type_name = str(array_.type)
        if type_name not in _ARROW_TYPES:
            raise IllegalArgumentError(f"a ValueBuffer takes Arrow binary or string arrays, not {type_name}")
        validity, offsets, data = array_.buffers()[:3]
        width = 8 if type_name.startswith("large_") else 4
        n, first = len(array_), array_.offset
        if offsets is None:  # an empty array may have none
            return cls(b"", array("q", [0]))
        offs = memoryview(offsets)[first * width:(first + n + 1) * width].cast("q" if width == 8 else "i")
        if data is None:  # an array of only empty or null values may have no data buffer
            data = b""
        return cls(data, offs, validity if array_.null_count else None, first)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def value_size(self, i: int) -> int:
        """Bytes of value ``i`` (0 for None)."""
        return 0 if self.is_null(i) else int(self._offsets[i + 1] - self._offsets[i])

    def is_null(self, i: int) -> bool:
        v = self._validity
        if v is None:
            return False
        bit = self._validity_offset + i
        return not (v[bit >> 3] >> (bit & 7)) & 1

    def _span(self, i: int) -> tuple[int, int]:
        """Where value ``i`` lies in :attr:`data`, its offsets checked against it (IllegalArgumentError):
        the one check of an offset pair, as the core's ``_value_span`` in C."""
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        if not 0 <= start <= end <= len(self._data):
            raise IllegalArgumentError(
                f"ValueBuffer value {i}: offsets {start}..{end} outside 0..{len(self._data)}")
        return start, end

    @overload
    def __getitem__(self, i: int) -> bytes | None: ...

    @overload
    def __getitem__(self, i: slice) -> list[bytes | None]: ...

    def __getitem__(self, i: int | slice) -> bytes | list[bytes | None] | None:
        """Value ``i`` as ``bytes`` (a copy), or None; a slice gives a list of them."""
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("ValueBuffer index out of range")
        if self.is_null(i):
            return None
        start, end = self._span(i)
        return self._data[start:end].tobytes()

    def __iter__(self) -> Iterator[bytes | None]:
        for i in range(len(self)):
            yield self[i]

    def longest(self) -> int:
        """The longest value's size, checking every offset (the pure twin of the core's C scan)."""
        longest = 0
        for i in range(len(self)):
            start, end = self._span(i)
            if end - start > longest and not self.is_null(i):
                longest = end - start
        return longest


def _view(obj: Any, what: str) -> memoryview:
    try:
        view = memoryview(obj)
    except TypeError:
        raise IllegalArgumentError(f"ValueBuffer {what} must be a buffer, not {type(obj).__name__}") from None
    if not view.c_contiguous:
        raise IllegalArgumentError(f"ValueBuffer {what} must be contiguous")
    return view


def as_value_buffer(values: Any) -> Any:
    """``values`` as ``send_many`` reads them: a pyarrow binary or string array (or a chunked one of one
    chunk) becomes a :class:`ValueBuffer`; anything else is returned as it is."""
    if type(values) is list or type(values) is ValueBuffer:
        return values
    module = type(values).__module__
    if module.startswith("pyarrow"):
        if hasattr(values, "num_chunks"):
            if values.num_chunks != 1:
                raise IllegalArgumentError(
                    "send_many takes a ChunkedArray of one chunk; pass each chunk (or combine_chunks())")
            values = values.chunk(0)
        if hasattr(values, "buffers") and str(getattr(values, "type", "")) in _ARROW_TYPES:
            return ValueBuffer.from_arrow(values)
    return values

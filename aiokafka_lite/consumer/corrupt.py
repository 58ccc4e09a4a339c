"""What a consumer does with fetched data that does not decode: deliver the good batches before the bad one,
then fail with an error that names the topic, partition and offset and says where ``seek()`` gets past it.

Decoding is all-or-nothing per fetch on the hot path; this runs only after it failed. It walks the data by
the framing every record-set version shares (``[offset: int64][length: int32]``) and decodes each batch
alone, so the records before the bad batch are not lost, and the position never moves past data that was
not delivered: the application decides to skip, as with the Java client's CorruptRecordException.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, NamedTuple

from ..errors import CorruptRecordError

__all__ = ["Corrupt", "corrupt_error", "find_corrupt"]

_FRAME = struct.Struct(">qi")
_LAST_OFFSET_DELTA = struct.Struct(">i")  # a v2 batch header, at byte 23
_MAGIC_AT = 16


class Corrupt(NamedTuple):
    """The first batch that does not decode: where its bytes start, its offsets, and why."""

    byte_pos: int
    base_offset: int
    next_offset: int  # the offset after the whole batch: seek() here to skip it
    error: CorruptRecordError


def find_corrupt(data: Any, decode: Callable[..., Any], topic: str, partition: int, **kwargs: Any
                 ) -> Corrupt | None:
    """The first batch of ``data`` that ``decode`` (decode_records or decode_arrow) refuses; None when
    the framing itself is broken before any batch is found bad."""
    view = memoryview(data)
    pos, n = 0, len(view)
    while pos + _FRAME.size <= n:
        base, length = _FRAME.unpack_from(view, pos)
        end = pos + _FRAME.size + length
        if length < 0 or end > n:
            return None  # a partial batch at the end (normal in a fetch) or a broken length
        try:
            decode(view[pos:end], topic, partition, **kwargs)
        except CorruptRecordError as exc:
            next_offset = base + 1
            if length >= 15 and view[pos + _MAGIC_AT] == 2:
                next_offset = base + _LAST_OFFSET_DELTA.unpack_from(view, pos + 23)[0] + 1
            return Corrupt(pos, base, max(next_offset, base + 1), exc)
        pos = end
    return None


def corrupt_error(topic: str, partition: int, position: int, found: Corrupt | None,
                  cause: BaseException) -> CorruptRecordError:
    """The error the application sees: what, where, and how to get past it."""
    if found is None:
        where, skip = f"at or after offset {position}", position + 1
    else:
        where, skip = f"in the batch at offset {found.base_offset}", found.next_offset
        cause = found.error
    error = CorruptRecordError(
        f"{topic}-{partition}: corrupt record data {where} ({cause}); every record before it was delivered. "
        f"consumer.seek(TopicPartition({topic!r}, {partition}), {skip}) skips it")
    # For code that skips on its own: ``consumer.seek(TopicPartition(e.topic, e.partition), e.next_offset)``.
    error.topic, error.partition = topic, partition
    error.offset = found.base_offset if found is not None else position
    error.next_offset = skip
    return error

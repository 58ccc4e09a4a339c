"""``send_many``'s handle and argument checks: many records of one topic per call.

Per-record ``send()`` pays for a coroutine, a partition choice and a handle per record. ``send_many``
hands the lot to the accumulator's append core (``append.AppendCore.append_records``: the partition
chosen once per batch or per key, records appended through the builder's bulk ``append_many``) and
the caller gets one :class:`BulkFuture` for them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator, Sequence
from typing import Any

from ..errors import IllegalArgumentError
from ..records import ValueBuffer, as_value_buffer, longest_plain
from ..structs import RecordMetadata
from .append import Segment
from .records_check import serialize, with_bytes

__all__ = ["BulkFuture", "check_sizes", "serialized_many"]


class BulkFuture:
    """The outcome of one ``send_many`` call.

    ``await`` it: returns how many records were delivered, or raises the first failure. After that,
    :meth:`metadata` gives each record's :class:`RecordMetadata` (or its exception) in input order.
    """

    __slots__ = ("_segments", "_timestamps", "count")

    def __init__(self, count: int, timestamps: int | Sequence[int], segments: list[Segment]) -> None:
        self.count = count
        self._timestamps = timestamps
        #: Where the records went, batch by batch (see ``append.Segment``).
        self._segments = segments

    def done(self) -> bool:
        return all(seg[0].done for seg in self._segments)

    def __await__(self) -> Generator[Any, None, int]:
        for seg in self._segments:
            result = seg[0]
            if not result.done:
                yield from result.waiter().__await__()
        for result, _, n, delta, _ in self._segments:
            if result.parts is not None:  # split (MESSAGE_TOO_LARGE): each record has its part's outcome
                for j in range(n):
                    error = result.locate(delta + j)[0].error
                    if error is not None:
                        raise error
            elif result.error is not None:
                raise result.error
        return self.count

    def metadata(self) -> list[RecordMetadata | BaseException]:
        """Per-record results in input order (only once done)."""
        if not self.done():
            raise asyncio.InvalidStateError("records not yet acknowledged")
        out: list[Any] = [None] * self.count
        ts = self._timestamps
        for whole, first, n, delta, indices in self._segments:
            for j in range(n):
                i = indices[first + j] if indices is not None else first + j
                result, index = whole.locate(delta + j) if whole.parts is not None else (whole, delta + j)
                if result.error is not None:
                    out[i] = result.error
                    continue
                t = ts if isinstance(ts, int) else ts[i]
                lat = result.log_append_time
                off = result.base_offset + index if result.base_offset >= 0 else -1
                out[i] = RecordMetadata(result.topic, result.partition, off, lat if lat >= 0 else t, lat)
        return out


def serialized_many(topic: str, values: Sequence[Any], keys: Sequence[Any] | None,
                    headers: Sequence[Any] | None, key_serializer: Any, value_serializer: Any
                    ) -> tuple[Sequence[Any], Sequence[Any] | None]:
    """The arguments checked, and the values and keys serialized to bytes. Without a value serializer, a
    pyarrow binary or string array becomes a :class:`~..records.ValueBuffer` (its values are read where
    they are); a serializer gets each value as the array gives it (a pyarrow scalar)."""
    if value_serializer is None:
        values = as_value_buffer(values)
    n = len(values)
    if keys is not None and len(keys) != n:
        raise IllegalArgumentError(f"send_many: {len(keys)} keys for {n} values")
    if headers is not None and len(headers) != n:
        raise IllegalArgumentError(f"send_many: {len(headers)} header lists for {n} values")
    if value_serializer is not None:
        values = [serialize(value_serializer, v, "value", topic) for v in values]
    if keys is not None and key_serializer is not None:
        keys = [serialize(key_serializer, k, "key", topic) for k in keys]
    if type(values) is not ValueBuffer:  # a ValueBuffer holds bytes (its offsets are checked by check_sizes)
        values = with_bytes(values, "value")
    return values, with_bytes(keys, "key") if keys is not None else None


def check_sizes(topic: str, values: Sequence[Any], keys: Sequence[Any] | None, headers: Sequence[Any] | None,
                fast_limit: int, check_one: Callable[[str, Any, Any, Any], int]) -> None:
    """Size limits, record by record, when the largest key and value could break one (or with headers)."""
    # Values and keys are bytes or None here (serialized_many): the records core's one pass in C.
    longest = longest_plain(values)
    if keys is not None:
        longest += longest_plain(keys)
    if headers is not None or longest > fast_limit:
        for i in range(len(values)):
            check_one(topic, keys[i] if keys is not None else None, values[i],
                      headers[i] if headers is not None else None)

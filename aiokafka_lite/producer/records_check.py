"""Checks a record passes before it touches a batch: serializers, bytes, headers and size.

Everything here raises one of our declared errors (IllegalArgumentError, SerializationError,
RecordTooLargeError) naming the topic, and runs before the accumulator is touched, so a bad record
fails alone and never leaves a half-built batch behind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import IllegalArgumentError, RecordTooLargeError, SerializationError
from ..records import BATCH_OVERHEAD, estimate_record_size, longest_plain

__all__ = ["as_bytes", "check_headers", "record_size", "record_timestamp", "serialize", "with_bytes"]


def record_timestamp(timestamp_ms: Any) -> int:
    """The record's timestamp: now (ms since the epoch) for None, else an int >= 0 or IllegalArgumentError."""
    if timestamp_ms is None:
        return time.time_ns() // 1_000_000
    if type(timestamp_ms) is not int or timestamp_ms < 0:
        raise IllegalArgumentError(
            f"timestamp_ms must be an int >= 0 (ms since the epoch), got {timestamp_ms!r}")
    return timestamp_ms


def serialize(fn: Callable[[Any], Any], obj: Any, what: str, topic: str) -> Any:
    """Run the user's key or value serializer; its failure becomes a SerializationError."""
    try:
        return fn(obj)
    except Exception as exc:
        raise SerializationError(f"{what}_serializer failed for topic {topic!r}: {exc!r}") from exc


def as_bytes(obj: Any, what: str) -> bytes | None:
    """``obj`` as bytes (bytearray and memoryview copied), or a SerializationError."""
    if obj is None or type(obj) is bytes:
        return obj
    if isinstance(obj, (bytearray, memoryview)):
        return bytes(obj)
    raise SerializationError(
        f"{what} must be bytes or None (or set {what}_serializer), got {type(obj).__name__}")


def with_bytes(items: Sequence[Any], what: str) -> Sequence[Any]:
    """``items`` unchanged when all are bytes or None (the common case, no copy); else converted. The
    check is the records core's one pass (per record in ``send_many``)."""
    if longest_plain(items) >= 0:
        return items
    return [as_bytes(y, what) for y in items]


def check_headers(topic: str, headers: Any) -> None:
    """Headers are (str key, bytes-or-None value) pairs: refuse anything else."""
    try:
        items = list(headers)
    except TypeError:
        raise IllegalArgumentError(
            f"bad headers for {topic!r}: want a list of (str, bytes) pairs, got {type(headers).__name__}"
        ) from None
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise IllegalArgumentError(f"bad header for {topic!r}: want a (str, bytes) pair, got {item!r}")
        k, v = item
        if not isinstance(k, str):
            raise IllegalArgumentError(f"bad header key for {topic!r}: want str, got {type(k).__name__}")
        if v is not None and not isinstance(v, (bytes, bytearray, memoryview)):
            raise IllegalArgumentError(
                f"bad value of header {k!r} for {topic!r}: want bytes or None, got {type(v).__name__}")


def record_size(topic: str, key: bytes | None, value: bytes | None, headers: Any, max_request_size: int,
                buffer_memory: int) -> int:
    """The record's serialized size; RecordTooLargeError when it could never be sent."""
    if headers:
        check_headers(topic, headers)
    try:
        size = estimate_record_size(key, value, list(headers) if headers else None)
    except (TypeError, ValueError, AttributeError) as exc:
        raise IllegalArgumentError(
            f"bad headers for {topic!r} (want a list of (str, bytes)): {exc}") from None
    total = size + BATCH_OVERHEAD
    if total > max_request_size:
        raise RecordTooLargeError(
            f"a record for {topic!r} is {total} bytes serialized, more than max_request_size="
            f"{max_request_size}")
    if total > buffer_memory:
        raise RecordTooLargeError(
            f"a record for {topic!r} is {total} bytes serialized, more than buffer_memory={buffer_memory}")
    return size

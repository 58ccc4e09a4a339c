"""Rendering consumed records for ``consume --format``: a template or JSON lines.

Templates decode bytes with ``surrogateescape`` and encode the line back the same way, so a binary
value passes through ``{value}`` byte for byte.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ..structs import ConsumerRecord
from ._io import unescape
from ._runtime import UsageError

FIELDS = ("topic", "partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers",
          "key_size", "value_size")
_SAMPLE = ConsumerRecord("t", 0, 0, 0, 0, b"k", b"v", [("h", b"v")], 1, 1)


def _text(data: Any) -> str:
    if data is None:
        return ""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data).decode("utf-8", "surrogateescape")
    return str(data)


def _json_value(data: Any) -> Any:
    """UTF-8 text as a string; other bytes as {"base64": ...} so nothing is lost."""
    if data is None or isinstance(data, (int, float, str, bool)):
        return data
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(raw).decode("ascii")}
    return str(data)


class RecordFormatter:
    """``fmt`` is ``json`` or a ``str.format`` template over :data:`FIELDS`; a newline ends each record."""

    def __init__(self, fmt: str) -> None:
        self.json = fmt.strip().lower() == "json"
        self.template = unescape(fmt)
        if not self.json:
            try:
                self(_SAMPLE)
            except (KeyError, IndexError, ValueError, AttributeError) as exc:
                fields = ", ".join("{" + f + "}" for f in FIELDS)
                raise UsageError(f"bad --format {fmt!r} ({type(exc).__name__}: {exc}); "
                                 f"use 'json' or a template with {fields}") from None

    def __call__(self, r: ConsumerRecord) -> bytes:
        if self.json:
            doc = {
                "topic": r.topic, "partition": r.partition, "offset": r.offset, "timestamp": r.timestamp,
                "timestamp_type": r.timestamp_type, "key": _json_value(r.key), "value": _json_value(r.value),
                "headers": [[k, _json_value(v)] for k, v in (r.headers or [])],
            }
            return json.dumps(doc, ensure_ascii=False).encode("utf-8") + b"\n"
        line = self.template.format(
            topic=r.topic, partition=r.partition, offset=r.offset, timestamp=r.timestamp,
            timestamp_type=r.timestamp_type, key=_text(r.key), value=_text(r.value),
            headers=",".join(f"{k}={_text(v)}" for k, v in (r.headers or [])),
            key_size=r.serialized_key_size, value_size=r.serialized_value_size,
        )
        return line.encode("utf-8", "surrogateescape") + b"\n"

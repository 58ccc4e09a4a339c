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


#: kcat's ``-f`` directives, each a function of the record and the -Z flag.
KCAT_DIRECTIVES = {
    "t": "topic", "p": "partition", "o": "offset", "k": "key", "s": "value", "T": "timestamp (ms)",
    "h": "headers (k=v,...)", "S": "value size", "K": "key size", "%": "a literal %",
}


def _bytes(data: Any, null: bytes) -> bytes:
    if data is None:
        return null
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    return str(data).encode("utf-8")


def _size(data: Any, serialized: int) -> int:
    if data is None:
        return -1
    return serialized if serialized >= 0 else len(_bytes(data, b""))


class KcatFormatter:
    """kcat's ``-f`` format: ``%t %p %o %k %s %T %h %S %K %%`` and the escapes ``\\n \\t \\r \\0 \\\\``.

    As in kcat, nothing is added after each record: end the format with ``\\n`` for one per line. With
    ``null=True`` (``-Z``) a missing key or value prints as ``NULL``, otherwise as nothing.
    """

    def __init__(self, fmt: str, *, null: bool = False) -> None:
        self.null = b"NULL" if null else b""
        text = unescape(fmt)
        self.parts: list[str | bytes] = []  # bytes: literal text; str: a directive letter
        literal = []
        i = 0
        while i < len(text):
            ch = text[i]
            if ch != "%":
                literal.append(ch)
                i += 1
                continue
            letter = text[i + 1:i + 2]
            if letter not in KCAT_DIRECTIVES:
                known = " ".join("%" + d for d in KCAT_DIRECTIVES)
                got = f"%{letter}" if letter else "a lone % at the end"
                raise UsageError(f"bad -f format {fmt!r}: {got} is not a directive (use {known})")
            if letter == "%":
                literal.append("%")
            else:
                if literal:
                    self.parts.append("".join(literal).encode("utf-8", "surrogateescape"))
                    literal = []
                self.parts.append(letter)
            i += 2
        if literal:
            self.parts.append("".join(literal).encode("utf-8", "surrogateescape"))

    def __call__(self, r: ConsumerRecord) -> bytes:
        out = []
        for part in self.parts:
            if isinstance(part, bytes):
                out.append(part)
            elif part == "s":
                out.append(_bytes(r.value, self.null))
            elif part == "k":
                out.append(_bytes(r.key, self.null))
            elif part == "t":
                out.append(r.topic.encode("utf-8"))
            elif part == "p":
                out.append(b"%d" % r.partition)
            elif part == "o":
                out.append(b"%d" % r.offset)
            elif part == "T":
                out.append(b"%d" % r.timestamp)
            elif part == "S":
                out.append(b"%d" % _size(r.value, r.serialized_value_size))
            elif part == "K":
                out.append(b"%d" % _size(r.key, r.serialized_key_size))
            elif part == "h":
                out.append(b",".join(k.encode("utf-8") + b"=" + _bytes(v, self.null)
                                     for k, v in (r.headers or ())))
        return b"".join(out)


class DelimitedFormatter:
    """The default output: the value (after the key and ``-K`` delimiter when given), then ``-D``."""

    def __init__(self, *, delimiter: str = "\n", key_delimiter: str | None = None,
                 null: bool = False) -> None:
        self.end = unescape(delimiter).encode("utf-8", "surrogateescape")
        self.key_end = (None if key_delimiter is None
                        else unescape(key_delimiter).encode("utf-8", "surrogateescape"))
        self.null = b"NULL" if null else b""

    def __call__(self, r: ConsumerRecord) -> bytes:
        value = _bytes(r.value, self.null)
        if self.key_end is None:
            return value + self.end
        return _bytes(r.key, self.null) + self.key_end + value + self.end


_TSTYPES = {0: "create", 1: "logappend"}


def json_envelope(r: ConsumerRecord) -> bytes:
    """kcat's ``-J`` envelope: topic, partition, offset, tstype, ts, headers (flat [k, v, ...]), key,
    payload; a key or payload that is not UTF-8 appears as ``{"base64": ...}``."""
    doc: dict[str, Any] = {"topic": r.topic, "partition": r.partition, "offset": r.offset,
                           "tstype": _TSTYPES.get(r.timestamp_type, "unknown"), "ts": r.timestamp}
    if r.headers:
        doc["headers"] = [x for k, v in r.headers for x in (k, _json_value(v))]
    doc["key"] = _json_value(r.key)
    doc["payload"] = _json_value(r.value)
    return json.dumps(doc, ensure_ascii=False).encode("utf-8") + b"\n"

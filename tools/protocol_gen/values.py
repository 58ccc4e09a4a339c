"""Python-side view of a spec field: its default value, its type hint, and "is it the default?" tests.

Shared by the class emitter (constructor defaults, annotations) and the codec emitters (values of absent
fields, whether a tagged field must be written at all).
"""

from __future__ import annotations

import re
from typing import Any

from .spec import FIXED, FieldSpec


def default_value(f: FieldSpec) -> Any:
    """The spec default as a Python value, or a marker string for lists/structs."""
    raw = f.default_raw
    if f.is_array:
        return None if raw == "null" else "[]"
    if f.is_struct:
        return None if raw == "null" else "struct"
    t = f.type
    if t in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        if raw is None or raw == "":
            return 0
        if isinstance(raw, int):
            return raw
        s = raw.strip()
        if re.fullmatch(r"-?0[0-7]+", s):
            return int(s, 8)
        return int(s, 0)
    if t == "float64":
        return float(raw) if raw is not None else 0.0
    if t == "bool":
        if isinstance(raw, bool):
            return raw
        return raw is not None and str(raw).lower() == "true"
    if t == "string":
        if raw == "null":
            return None
        return "" if raw is None else str(raw)
    if t == "bytes":
        return None if raw == "null" else b""
    if t == "records":
        return None
    if t == "uuid":
        return "uuid"
    raise AssertionError(t)


def default_expr(f: FieldSpec) -> str:
    d = default_value(f)
    if f.is_array:
        return "None" if d is None else "[]"
    if f.is_struct:
        return "None" if d is None else f"{f.struct.cls}()"  # type: ignore[union-attr]
    if f.type == "uuid":
        return "ZERO_UUID"
    return repr(d)


def non_default(f: FieldSpec, e: str) -> str:
    """A Python condition true when expression ``e`` holds something other than the spec default."""
    d = default_value(f)
    if f.is_array or f.type in ("bytes", "records"):
        return f"{e} is not None" if d is None else f"({e} is None or len({e}) != 0)"
    if f.is_struct:
        return f"{e} is not None" if d is None else f"{e} != {f.struct.cls}()"  # type: ignore[union-attr]
    if f.type == "bool":
        return f"not {e}" if d else f"{e}"
    if f.type == "uuid":
        return f"{e} != ZERO_UUID"
    if f.type == "string" and d is None:
        return f"{e} is not None"
    return f"{e} != {d!r}"


def py_type(f: FieldSpec) -> str:
    if f.is_struct:
        base = f.struct.cls  # type: ignore[union-attr]
    elif f.elem in FIXED:
        base = FIXED[f.elem][2]
    else:
        base = {"string": "str", "bytes": "bytes", "records": "bytes | memoryview",
                "uuid": "uuid.UUID"}[f.elem]
    if f.is_array:
        base = f"list[{base}]"
    return f"{base} | None" if f.can_be_null() else base

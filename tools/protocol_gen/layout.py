"""Text layout helpers: line width, black-style wrapping, docstring escaping, version-range text."""

from __future__ import annotations

from .spec import MAX_VERSION, Versions

WIDTH = 110


def fit(
    head: str, items: list[str], tail: str, indent: str | None = None, trailing_comma: bool = False
) -> list[str]:
    """``head + items + tail`` on one line when it fits, else one item per line (black style)."""
    one = ", ".join(items) + ("," if trailing_comma and len(items) == 1 else "")
    if len(head) + len(one) + len(tail) <= WIDTH:
        return [head + one + tail]
    base = indent if indent is not None else head[: len(head) - len(head.lstrip())]
    return [head, *(f"{base}    {item}," for item in items), base + tail.lstrip()]


def version_range(vs: list[int]) -> tuple[int, int]:
    return (min(vs), max(vs)) if vs else (0, -1)


def doc_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', "'''").strip()


def vtext(v: Versions) -> str:
    if v.empty:
        return "none"
    if v.hi == MAX_VERSION:
        return f"{v.lo}+"
    return f"{v.lo}" if v.lo == v.hi else f"{v.lo}-{v.hi}"

"""Emission of the message/struct classes: slots, annotated attributes with spec comments, ``__init__``."""

from __future__ import annotations

import textwrap

from .emit_base import BaseEmitter
from .layout import WIDTH, doc_text, fit, version_range, vtext
from .spec import FieldSpec, MessageSpec, StructSpec
from .values import default_expr, py_type


def class_code(st: StructSpec, msg: MessageSpec | None, emitter: BaseEmitter) -> str:
    base = "Message" if msg is not None else "Data"
    slots = [f.attr for f in st.fields] + ["_unknown_tagged"]
    if msg is not None:
        flex = msg.flexible
        first = max(flex.lo, msg.valid.lo) if not flex.empty and flex.lo <= msg.valid.hi else None
        doc = f"{msg.name} ({msg.kind}"
        doc += f", API key {msg.api_key})" if msg.api_key is not None else ")"
        doc += f": versions {vtext(msg.valid)}, "
        doc += f"flexible from {first}." if first is not None else "never flexible."
    else:
        doc = st.about or st.cls
    doc_lines = textwrap.wrap(doc_text(doc), WIDTH - 7)
    if len(doc_lines) == 1:
        lines = [f"class {st.cls}({base}):", f'    """{doc_lines[0]}"""', ""]
    else:
        lines = [f"class {st.cls}({base}):", f'    """{doc_lines[0]}']
        lines += [*(f"    {d}" for d in doc_lines[1:]), '    """', ""]
    if msg is not None:
        lines.append(f"    API_KEY: ClassVar[int] = {msg.api_key if msg.api_key is not None else -1}")
        lines.append(f"    NAME: ClassVar[str] = {msg.api_name!r}")
    lo, hi = version_range(emitter.versions.get(st.cls, []))
    lines.append(f"    MIN_VERSION: ClassVar[int] = {lo}")
    lines.append(f"    MAX_VERSION: ClassVar[int] = {hi}")
    if msg is not None:
        lines.append(f"    FLEXIBLE_MIN: ClassVar[int | None] = {first}")
    lines.extend(fit("    __slots__ = (", [repr(s) for s in slots], ")", trailing_comma=True))
    lines.append("")
    for f in st.fields:
        lines.extend(textwrap.wrap(_comment(f), WIDTH, initial_indent="    #: ", subsequent_indent="    #: "))
        lines.append(f"    {f.attr}: {py_type(f)}")
    lines.append("    _unknown_tagged: list[tuple[int, bytes]] | None")
    lines.append("")
    params = []
    body = []
    for f in st.fields:
        if f.is_array or f.is_struct:
            params.append(f"{f.attr}: {py_type(f)} = DEFAULT")
            assign = f"        self.{f.attr} = {default_expr(f)} if {f.attr} is DEFAULT else {f.attr}"
            if len(assign) > WIDTH:
                expr = f"{default_expr(f)} if {f.attr} is DEFAULT else {f.attr}"
                assign = f"        self.{f.attr} = (\n            {expr}\n        )"
            body.append(assign)
        else:
            params.append(f"{f.attr}: {py_type(f)} = {default_expr(f)}")
            body.append(f"        self.{f.attr} = {f.attr}")
    body.append("        self._unknown_tagged = None")
    if params:
        lines.append("    def __init__(")
        lines.append("        self,")
        lines.append("        *,")
        for p in params:
            lines.append(f"        {p},")
        lines.append("    ) -> None:")
    else:
        lines.append("    def __init__(self) -> None:")
    lines.extend(body)
    return "\n".join(lines) + "\n"


def _comment(f: FieldSpec) -> str:
    bits = [f"versions {vtext(f.versions)}"]
    if not f.nullable.empty:
        bits.append(f"nullable {vtext(f.nullable)}")
    if f.tag is not None:
        bits.append(f"tag {f.tag}")
    if f.ignorable:
        bits.append("ignorable")
    text = f"{f.about} ({', '.join(bits)})" if f.about else f"({', '.join(bits)})"
    return text.replace("\n", " ")

"""Emission of the per-version ``_r_<Struct>_v<N>`` readers.

Readers build objects with ``object.__new__`` and assign every slot (absent fields get their defaults), so
decoding skips ``__init__`` and its keyword handling.
"""

from __future__ import annotations

from .emit_base import BaseEmitter, array_code, flexible_for
from .layout import WIDTH, fit
from .spec import FIXED, FieldSpec, StructSpec
from .values import default_expr


class DecoderEmitter(BaseEmitter):
    """Writes the body of every struct's reader for one version."""

    def read_body(self, st: StructSpec, v: int, flexible: bool) -> list[str]:
        lines = [f"    o = _new({st.cls})"]
        group: list[FieldSpec] = []

        def flush() -> None:
            if not group:
                return
            codes = "".join(FIXED[g.type][0] for g in group)
            _, unpack = self.mod.fmt_names(codes)
            size = sum(FIXED[g.type][1] for g in group)
            if len(group) == 1:
                lines.append(f"    o.{group[0].attr} = {unpack}(data, pos)[0]")
            else:
                targets = ", ".join(f"o.{g.attr}" for g in group)
                if len(targets) + len(unpack) + 20 <= WIDTH:
                    lines.append(f"    {targets} = {unpack}(data, pos)")
                else:
                    lines.extend(fit("    (", [f"o.{g.attr}" for g in group], f") = {unpack}(data, pos)"))
            lines.append(f"    pos += {size}")
            group.clear()

        tagged: list[FieldSpec] = []
        absent: list[FieldSpec] = []
        for i, f in enumerate(st.fields):
            if v not in f.versions:
                absent.append(f)
                continue
            if v in f.tagged:
                tagged.append(f)
                continue
            if f.type in FIXED:
                group.append(f)
                continue
            flush()
            lines.extend(self.read_field(f, v, flexible, f"o.{f.attr}", i, st, "    "))
        flush()
        for f in absent:
            lines.extend(self.set_default(f, "o", "    "))
        if flexible:
            if not tagged:
                lines.append("    if data[pos]:")
                lines.append(f"        o._unknown_tagged, pos = {self.use('read_unknown_tags')}(data, pos)")
                lines.append("    else:")
                lines.append("        o._unknown_tagged = None")
                lines.append("        pos += 1")
            else:
                # the common case, no tagged field present: defaults and one byte, no loop
                for f in tagged:
                    lines.extend(self.set_default(f, "o", "    "))
                lines.append("    if not data[pos]:")
                lines.append("        o._unknown_tagged = None")
                lines.append("        pos += 1")
                lines.append("        return o, pos")
                lines.append("    _unk: list[tuple[int, bytes]] | None = None")
                lines.append(f"    _nt, pos = {self.use('read_tag_count')}(data, pos)")
                lines.append("    for _ in range(_nt):")
                lines.append(f"        _tag, _end, pos = {self.use('read_tag_header')}(data, pos)")
                kw = "if"
                for f in sorted(tagged, key=lambda t: t.tag or 0):
                    idx = st.fields.index(f)
                    lines.append(f"        {kw} _tag == {f.tag}:")
                    lines.extend(self.read_field(f, v, True, f"o.{f.attr}", idx, st, "            "))
                    lines.append("            if pos != _end:")
                    lines.extend(
                        fit(
                            f"                raise {self.use('ProtocolError')}(",
                            [f'"tagged field {st.cls}.{f.attr} has the wrong size"'],
                            ")",
                        )
                    )
                    kw = "elif"
                lines.append("        else:")
                lines.append("            if _unk is None:")
                lines.append("                _unk = []")
                lines.append("            _unk.append((_tag, bytes(data[pos:_end])))")
                lines.append("            pos = _end")
                lines.append("    o._unknown_tagged = _unk")
        else:
            lines.append("    o._unknown_tagged = None")
        lines.append("    return o, pos")
        return lines

    def set_default(self, f: FieldSpec, target: str, ind: str, depth: int = 0) -> list[str]:
        """``target.attr = <default>``; a struct default is built inline (``_new`` and its slots), as
        ``Cls()`` would build it, without the keyword ``__init__`` call."""
        st = f.struct
        if not (f.is_struct and not f.is_array and default_expr(f) != "None" and st is not None):
            return [f"{ind}{target}.{f.attr} = {default_expr(f)}"]
        var = f"_d_{st.cls}"
        lines = [f"{ind}{var} = _new({st.cls})"]
        for sub in st.fields:
            lines.extend(self.set_default(sub, var, ind, depth + 1))
        lines.append(f"{ind}{var}._unknown_tagged = None")
        lines.append(f"{ind}{target}.{f.attr} = {var}")
        return lines

    def read_field(
        self, f: FieldSpec, v: int, flexible: bool, e: str, i: int, st: StructSpec, ind: str
    ) -> list[str]:
        compact = flexible_for(f, flexible, v)
        nullable = v in f.nullable
        c = "compact_" if compact else ""
        n = "nullable_" if nullable else ""
        lines: list[str] = []
        if f.is_array and not f.is_struct:
            rd = self.use("read_prim_array")
            call = f"{e}, pos = {rd}(data, pos, {array_code(f.elem)!r}, {compact}, {nullable})"
            if compact:
                # an empty array (offline replicas, mostly) without the call
                lines.append(f"{ind}if data[pos] == 1:")
                lines.append(f"{ind}    {e} = []")
                lines.append(f"{ind}    pos += 1")
                lines.append(f"{ind}else:")
                lines.append(f"{ind}    {call}")
            else:
                lines.append(f"{ind}{call}")
            return lines
        if f.is_array:
            cnt = f"_n{i}"
            if compact:
                # an empty array (one byte, 1) is the common case: no call, no list building
                lines.append(f"{ind}if data[pos] == 1:")
                lines.append(f"{ind}    {e} = []")
                lines.append(f"{ind}    pos += 1")
                lines.append(f"{ind}else:")
                ind += "    "
            lines.append(f"{ind}{cnt}, pos = {self.use(f'read_{c}array_len')}(data, pos)")
            lines.append(f"{ind}if {cnt} < 0:")
            if nullable:
                lines.append(f"{ind}    {e} = None")
            else:
                err = self.use("ProtocolError")
                msg = f'"non-nullable array {st.cls}.{f.attr} is null"'
                lines.extend(fit(f"{ind}    raise {err}(", [msg], ")"))
            lines.append(f"{ind}else:")
            inner = ind + "    "
            r = self.fn("r", f.struct, v)  # type: ignore[arg-type]
            cls = f.struct.cls  # type: ignore[union-attr]
            lines.append(f"{inner}_l{i}: list[{cls}] = []")
            lines.append(f"{inner}_a{i} = _l{i}.append")
            lines.append(f"{inner}for _ in range({cnt}):")
            lines.append(f"{inner}    _e{i}, pos = {r}(data, pos)")
            lines.append(f"{inner}    _a{i}(_e{i})")
            lines.append(f"{inner}{e} = _l{i}")
            return lines
        if f.is_struct:
            r = self.fn("r", f.struct, v)  # type: ignore[arg-type]
            if nullable:
                lines.append(f"{ind}if data[pos] & 0x80:")
                lines.append(f"{ind}    {e} = None")
                lines.append(f"{ind}    pos += 1")
                lines.append(f"{ind}else:")
                lines.append(f"{ind}    {e}, pos = {r}(data, pos + 1)")
            else:
                lines.append(f"{ind}{e}, pos = {r}(data, pos)")
            return lines
        t = f.type
        if t in FIXED:
            _, unpack = self.mod.fmt_names(FIXED[t][0])
            lines.append(f"{ind}{e} = {unpack}(data, pos)[0]")
            lines.append(f"{ind}pos += {FIXED[t][1]}")
        elif t == "uuid":
            lines.append(f"{ind}{e}, pos = {self.use('read_uuid')}(data, pos)")
        elif t == "string" and compact and nullable:
            # null (one byte, 0) without a call: error messages and leaders' hosts are mostly null
            lines.append(f"{ind}if data[pos]:")
            lines.append(f"{ind}    {e}, pos = {self.use('read_compact_nullable_string')}(data, pos)")
            lines.append(f"{ind}else:")
            lines.append(f"{ind}    {e} = None")
            lines.append(f"{ind}    pos += 1")
        elif t == "string":
            lines.append(f"{ind}{e}, pos = {self.use(f'read_{c}{n}string')}(data, pos)")
        elif t in ("bytes", "records"):
            # records: a view of the frame, not a copy (the batches are read once, by the decoder)
            lines.append(f"{ind}{e}, pos = {self.use(f'read_{c}{n}{t}')}(data, pos)")
        else:
            raise SystemExit(f"unsupported type {t}")
        return lines

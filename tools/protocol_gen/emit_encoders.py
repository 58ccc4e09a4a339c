"""Emission of the per-version ``_w_<Struct>_v<N>`` writers.

Adjacent fixed-size fields are packed with one precompiled ``struct.Struct`` call: straight-line code per
version beats interpreting a field table at run time several times over on the hot path.
"""

from __future__ import annotations

from .emit_base import BaseEmitter, array_code, flexible_for
from .layout import fit
from .spec import FIXED, FieldSpec, StructSpec
from .values import non_default


class EncoderEmitter(BaseEmitter):
    """Writes the body of every struct's writer for one version."""

    def write_body(self, st: StructSpec, v: int, flexible: bool) -> list[str]:
        lines: list[str] = []
        group: list[FieldSpec] = []

        def flush() -> None:
            if not group:
                return
            codes = "".join(FIXED[g.type][0] for g in group)
            pack, _ = self.mod.fmt_names(codes)
            lines.extend(fit(f"    out += {pack}(", [f"o.{g.attr}" for g in group], ")"))
            group.clear()

        tagged: list[FieldSpec] = []
        for i, f in enumerate(st.fields):
            if v not in f.versions:
                if not f.ignorable:
                    flush()
                    lines.append(f"    if {non_default(f, 'o.' + f.attr)}:")
                    lines.extend(
                        fit(
                            f"        raise {self.use('UnsupportedVersionError')}(",
                            [f'"{st.cls}.{f.attr}: version {v} cannot carry a non-default value"'],
                            ")",
                        )
                    )
                continue
            if v in f.tagged:
                tagged.append(f)
                continue
            if f.type in FIXED:
                group.append(f)
                continue
            flush()
            lines.extend(self.write_field(f, v, flexible, f"o.{f.attr}", "out", i, st, "    "))
        flush()
        if flexible:
            if not tagged:
                lines.append("    if o._unknown_tagged is None:")
                lines.append("        out.append(0)")
                lines.append("    else:")
                lines.append(f"        {self.use('write_unknown_tags')}(out, o._unknown_tagged)")
            else:
                lines.append("    _tags: list[tuple[int, Buffer]] = []")
                for f in sorted(tagged, key=lambda t: t.tag or 0):
                    idx = st.fields.index(f)
                    lines.append(f"    if {non_default(f, 'o.' + f.attr)}:")
                    lines.append(f"        _b{idx} = bytearray()")
                    lines.extend(self.write_field(f, v, True, f"o.{f.attr}", f"_b{idx}", idx, st, "        "))
                    lines.append(f"        _tags.append(({f.tag}, _b{idx}))")
                lines.append(f"    {self.use('write_tags')}(out, _tags, o._unknown_tagged)")
        if not lines:
            lines.append("    pass")
        return lines

    def null_guard(self, f: FieldSpec, v: int, st: StructSpec, e: str, ind: str) -> list[str]:
        """Explicit error for None in a version where the field is not nullable (it is elsewhere)."""
        if v in f.nullable or not f.can_be_null():
            return []
        return [
            f"{ind}if {e} is None:",
            *fit(
                f"{ind}    raise {self.use('UnsupportedVersionError')}(",
                [f'"{st.cls}.{f.attr} cannot be null in version {v}"'],
                ")",
            ),
        ]

    def write_field(
        self, f: FieldSpec, v: int, flexible: bool, e: str, out: str, i: int, st: StructSpec, ind: str
    ) -> list[str]:
        compact = flexible_for(f, flexible, v)
        nullable = v in f.nullable
        lines = self.null_guard(f, v, st, e, ind)
        c = "compact_" if compact else ""
        n = "nullable_" if nullable else ""
        if f.is_array and not f.is_struct:
            code = array_code(f.elem)
            wr = self.use("write_prim_array")
            lines.append(f"{ind}{wr}({out}, {e}, {code!r}, {compact}, {nullable})")
            return lines
        if f.is_array:
            var = f"_v{i}"
            lines.append(f"{ind}{var} = {e}")
            inner = ind
            if nullable:
                null = "out.append(0)" if compact else 'out += b"\\xff\\xff\\xff\\xff"'
                lines.append(f"{ind}if {var} is None:")
                lines.append(f"{ind}    {null.replace('out', out, 1)}")
                lines.append(f"{ind}else:")
                inner = ind + "    "
            if compact:
                # the count inline: one byte below 127 elements, no call
                lines.append(f"{inner}_c{i} = len({var}) + 1")
                lines.append(f"{inner}if _c{i} < 0x80:")
                lines.append(f"{inner}    {out}.append(_c{i})")
                lines.append(f"{inner}else:")
                lines.append(f"{inner}    {self.use('write_uvarint')}({out}, _c{i})")
            else:
                lines.append(f"{inner}{self.use(f'write_{c}array_len')}({out}, len({var}))")
            w = self.fn("w", f.struct, v)  # type: ignore[arg-type]
            lines.append(f"{inner}for _e{i} in {var}:")
            lines.append(f"{inner}    {w}(_e{i}, {out})")
            return lines
        if f.is_struct:
            w = self.fn("w", f.struct, v)  # type: ignore[arg-type]
            if nullable:
                var = f"_v{i}"
                lines.append(f"{ind}{var} = {e}")
                lines.append(f"{ind}if {var} is None:")
                lines.append(f"{ind}    {out} += b\"\\xff\"")
                lines.append(f"{ind}else:")
                lines.append(f"{ind}    {out}.append(1)")
                lines.append(f"{ind}    {w}({var}, {out})")
            else:
                lines.append(f"{ind}{w}({e}, {out})")
            return lines
        t = f.type
        if t in FIXED:
            pack, _ = self.mod.fmt_names(FIXED[t][0])
            lines.append(f"{ind}{out} += {pack}({e})")
        elif t == "uuid":
            lines.append(f"{ind}{out} += {e}.bytes")
        elif t == "string":
            lines.append(f"{ind}{self.use(f'write_{c}{n}string')}({out}, {e})")
        elif t in ("bytes", "records"):
            lines.append(f"{ind}{self.use(f'write_{c}{n}bytes')}({out}, {e})")
        else:
            raise SystemExit(f"unsupported type {t}")
        return lines

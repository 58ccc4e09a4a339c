"""State shared by the codec emitters: the module being built and the per-version function cache."""

from __future__ import annotations

from .layout import fit
from .spec import FIXED, FieldSpec, MessageSpec, StructSpec


class Module:
    """Accumulates one generated module."""

    def __init__(self) -> None:
        self.formats: set[str] = set()
        self.funcs: list[str] = []
        self.func_bodies: dict[tuple[str, str, str], str] = {}  # (kind, cls, body) -> function name
        self.used: set[str] = set()

    def fmt_names(self, codes: str) -> tuple[str, str]:
        self.formats.add(codes)
        tag = codes.replace("?", "o")
        return f"_pack_{tag}", f"_unpack_{tag}"


def array_code(elem: str) -> str:
    """The element code read_prim_array/write_prim_array take: a struct code, "s" string or "u" uuid."""
    if elem in FIXED:
        return FIXED[elem][0]
    if elem == "string":
        return "s"
    if elem == "uuid":
        return "u"
    raise SystemExit(f"unsupported array element {elem}")


def flexible_for(f: FieldSpec, flexible: bool, v: int) -> bool:
    if f.flexible_override is not None:
        return v in f.flexible_override
    return flexible


class BaseEmitter:
    """Per-version function bookkeeping shared by the encoder and decoder emitters.

    Versions whose body comes out identical share one function (keyed by body text), which keeps the
    modules readable; the per-struct version tables then map every version to its shared function.
    """

    def __init__(self, mod: Module, msg: MessageSpec) -> None:
        self.mod = mod
        self.msg = msg
        self.cache: dict[tuple[str, str, int], str] = {}  # (kind, cls, version) -> function name
        self.versions: dict[str, list[int]] = {}  # cls -> versions it is generated for

    # ---- helpers
    def use(self, name: str) -> str:
        self.mod.used.add(name)
        return name

    def fn(self, kind: str, st: StructSpec, v: int) -> str:
        """Name of ``st``'s writer (``kind`` "w") or reader ("r") for version ``v``; emitted on first use."""
        key = (kind, st.cls, v)
        if key in self.cache:
            return self.cache[key]
        flexible = v in self.msg.flexible
        lines = self.write_body(st, v, flexible) if kind == "w" else self.read_body(st, v, flexible)
        body = "\n".join(lines)
        bkey = (kind, st.cls, body)
        name = self.mod.func_bodies.get(bkey)
        if name is None:
            name = f"_{kind}_{st.cls}_v{v}"
            self.mod.func_bodies[bkey] = name
            if kind == "w":
                sig = fit(f"def {name}(", [f"o: {st.cls}", "out: bytearray"], ") -> None:", "")
            else:
                sig = fit(f"def {name}(", ["data: Buffer", "pos: int"], f") -> tuple[{st.cls}, int]:", "")
            self.mod.funcs.append("\n".join(sig) + "\n" + body + "\n")
        self.cache[key] = name
        vs = self.versions.setdefault(st.cls, [])
        if v not in vs:
            vs.append(v)
        return name

    def write_body(self, st: StructSpec, v: int, flexible: bool) -> list[str]:
        """The body of struct ``st``'s writer for version ``v`` (see EncoderEmitter)."""
        raise NotImplementedError

    def read_body(self, st: StructSpec, v: int, flexible: bool) -> list[str]:
        """The body of struct ``st``'s reader for version ``v`` (see DecoderEmitter)."""
        raise NotImplementedError

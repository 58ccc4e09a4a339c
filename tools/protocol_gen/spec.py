"""Kafka's JSON message specs -> a typed model (versions, fields, nested structs) the emitters walk.

Nothing here knows about Python code; it only turns the spec format (see SPEC-FORMAT.md) into dataclasses,
so that a change of the spec format touches this module alone.
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Versions the spec dropped but the contract still wants (RequestHeader v0: ControlledShutdown v0 only).
EXTRA_LOW_VERSIONS = {"RequestHeader": 0}

FIXED = {  # type -> (struct code, size, python type)
    "int8": ("b", 1, "int"),
    "int16": ("h", 2, "int"),
    "int32": ("i", 4, "int"),
    "int64": ("q", 8, "int"),
    "uint16": ("H", 2, "int"),
    "uint32": ("I", 4, "int"),
    "float64": ("d", 8, "float"),
    "bool": ("?", 1, "bool"),
}
PRIMITIVES = {*FIXED, "string", "bytes", "records", "uuid"}
MAX_VERSION = 0x7FFF


def strip_comments(text: str) -> str:
    """Drop ``//`` comments outside JSON strings."""
    out: list[str] = []
    i, n = 0, len(text)
    in_str = False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class Versions:
    lo: int
    hi: int  # inclusive; -1 with lo 0 means "none"

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none":
            return NONE
        text = text.strip()
        if text.endswith("+"):
            return cls(int(text[:-1]), MAX_VERSION)
        if "-" in text:
            lo, hi = text.split("-")
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, v: int) -> bool:
        return self.lo <= v <= self.hi

    @property
    def empty(self) -> bool:
        return self.hi < self.lo


NONE = Versions(0, -1)


def snake(name: str) -> str:
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()
    return s + "_" if keyword.iskeyword(s) else s


@dataclass
class FieldSpec:
    name: str
    attr: str
    type: str
    about: str
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    ignorable: bool
    default_raw: Any
    flexible_override: Versions | None
    is_array: bool
    elem: str  # primitive name or struct spec name
    struct: StructSpec | None = None

    @property
    def is_struct(self) -> bool:
        return self.struct is not None

    def can_be_null(self) -> bool:
        return not self.nullable.empty or self.default_raw == "null"


@dataclass
class StructSpec:
    spec_name: str
    cls: str
    about: str
    fields: list[FieldSpec] = field(default_factory=list)


@dataclass
class MessageSpec:
    file: str
    name: str  # e.g. MetadataRequest
    kind: str  # request / response / header / data
    api_key: int | None
    valid: Versions
    flexible: Versions
    top: StructSpec
    structs: list[StructSpec]  # nested, in definition order

    @property
    def api_name(self) -> str:
        for suffix in ("Request", "Response"):
            if self.kind == suffix.lower() and self.name.endswith(suffix):
                return self.name[: -len(suffix)]
        return self.name


def load_spec(path: Path) -> dict[str, Any]:
    return json.loads(strip_comments(path.read_text(encoding="utf-8")))


def build_message(path: Path, spec: dict[str, Any], rename: dict[str, str]) -> MessageSpec:
    name = spec["name"]
    valid = Versions.parse(spec["validVersions"])
    if name in EXTRA_LOW_VERSIONS:
        valid = Versions(EXTRA_LOW_VERSIONS[name], valid.hi)
    common = {c["name"]: c for c in spec.get("commonStructs", [])}
    structs: dict[str, StructSpec] = {}
    order: list[StructSpec] = []

    def make_struct(spec_name: str, about: str, fields_json: list[dict[str, Any]]) -> StructSpec:
        if spec_name in structs:
            return structs[spec_name]
        st = StructSpec(spec_name, rename.get(spec_name, spec_name), about)
        structs[spec_name] = st
        order.append(st)
        st.fields = [make_field(f) for f in fields_json]
        return st

    def make_field(f: dict[str, Any]) -> FieldSpec:
        ftype = f["type"]
        is_array = ftype.startswith("[]")
        elem = ftype[2:] if is_array else ftype
        tagged = Versions.parse(f.get("taggedVersions"))
        versions = Versions.parse(f["versions"])
        if "tag" in f and (tagged.lo != versions.lo or tagged.hi != versions.hi):
            raise SystemExit(f"{path.name}: {f['name']}: taggedVersions must equal versions")
        fs = FieldSpec(
            name=f["name"],
            attr=snake(f["name"]),
            type=ftype,
            about=" ".join(str(f.get("about", "")).split()),
            versions=versions,
            nullable=Versions.parse(f.get("nullableVersions")),
            tagged=tagged if "tag" in f else NONE,
            tag=f.get("tag"),
            ignorable=bool(f.get("ignorable", False)),
            default_raw=f.get("default"),
            flexible_override=Versions.parse(f["flexibleVersions"]) if "flexibleVersions" in f else None,
            is_array=is_array,
            elem=elem,
        )
        if elem not in PRIMITIVES:
            if "fields" in f:
                fs.struct = make_struct(elem, fs.about, f["fields"])
            elif elem in common:
                fs.struct = make_struct(elem, fs.about, common[elem]["fields"])
            else:
                raise SystemExit(f"{path.name}: unknown type {ftype} of {f['name']}")
        elif "fields" in f:
            raise SystemExit(f"{path.name}: primitive field {f['name']} with fields")
        return fs

    top = StructSpec(name, name, f"{name} ({spec['type']})")
    top.fields = [make_field(f) for f in spec["fields"]]
    return MessageSpec(
        file=path.name,
        name=name,
        kind=spec["type"],
        api_key=spec.get("apiKey"),
        valid=valid,
        flexible=Versions.parse(spec["flexibleVersions"]),
        top=top,
        structs=order,
    )


def nested_names(spec: dict[str, Any]) -> set[str]:
    names: set[str] = {c["name"] for c in spec.get("commonStructs", [])}

    def walk(fields: list[dict[str, Any]]) -> None:
        for f in fields:
            if "fields" in f:
                names.add(f["type"].removeprefix("[]"))
                walk(f["fields"])

    walk(spec["fields"])
    for c in spec.get("commonStructs", []):
        walk(c["fields"])
    return names

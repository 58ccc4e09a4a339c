"""Spec-driven builders for protocol tests: every message, every version, non-trivial values.

The spec is read with the generator's own parser (tools/gen_protocol.py), but values come from the spec's
field list here, independently of the emitted code, so a wrong offset or a missing field in the generated
code shows up as a round-trip or peer mismatch.
"""

from __future__ import annotations

import importlib
import importlib.util
import random
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED_SPEC_DIR = ROOT.parent / "shared" / "kafka-protocol"
#: The specs the committed code was generated from: shared/ beside the repo when present, else the copy in
#: specs/ (so that the round-trip, peer and fuzz tests run from any clone).
SPEC_DIR = SHARED_SPEC_DIR if SHARED_SPEC_DIR.is_dir() else ROOT / "specs" / "kafka-protocol"
MESSAGES_DIR = ROOT / "aiokafka_lite" / "protocol" / "messages"


def load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_protocol", ROOT / "tools" / "gen_protocol.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_protocol", module)
    spec.loader.exec_module(module)
    return module


gen = load_generator()

#: The APIs the client needs; they must all be generated and pass everything.
REQUIRED_APIS = [
    "ApiVersions", "Metadata", "Produce", "Fetch", "ListOffsets", "FindCoordinator", "JoinGroup", "SyncGroup",
    "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch", "OffsetForLeaderEpoch", "InitProducerId",
    "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "TxnOffsetCommit", "CreateTopics", "DeleteTopics",
    "CreatePartitions", "DescribeConfigs", "DescribeGroups", "ListGroups", "DeleteGroups", "DeleteRecords",
    "DescribeCluster", "SaslHandshake", "SaslAuthenticate",
]
REQUIRED_DATA = [
    "RequestHeader",
    "ResponseHeader",
    "ConsumerProtocolSubscription",
    "ConsumerProtocolAssignment",
]


@dataclass
class Entry:
    """One spec file and the generated class it became."""

    msg: Any  # gen.MessageSpec
    module: Any
    cls: type

    @property
    def versions(self) -> range:
        return range(self.msg.valid.lo, self.msg.valid.hi + 1)

    @property
    def name(self) -> str:
        return str(self.msg.name)

    def struct_class(self, st: Any) -> type:
        return getattr(self.module, st.cls)  # type: ignore[no-any-return]


def load_entries() -> list[Entry]:
    """Every message of the spec folder, with its generated class."""
    files = gen.spec_files(SPEC_DIR)
    raw = {p: gen.load_spec(p) for p in files}
    by_api: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for p, spec in raw.items():
        api = spec["name"]
        if spec["type"] in ("request", "response"):
            api = api.removesuffix("Request").removesuffix("Response")
        by_api.setdefault(api, []).append((p, spec))
    entries = []
    for items in by_api.values():
        names = [gen.nested_names(spec) for _, spec in items]
        clash = set.intersection(*names) if len(names) > 1 else set()
        for p, spec in items:
            msg = gen.build_message(p, spec, {n: spec["name"] + n for n in clash})
            module = importlib.import_module(f"aiokafka_lite.protocol.messages.{gen.module_name(msg)}")
            entries.append(Entry(msg, module, getattr(module, msg.name)))
    entries.sort(key=lambda e: e.name)
    return entries


ENTRIES = load_entries() if SPEC_DIR.is_dir() else []
BY_NAME = {e.name: e for e in ENTRIES}

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-_.é漢字ß😀"


def _int(rng: random.Random, t: str) -> int:
    lo, hi = _INT_RANGES[t]
    roll = rng.random()
    if roll < 0.15:
        return rng.choice([lo, hi, -1 if lo < 0 else 0, 0, 1])
    if roll < 0.5:
        return rng.randint(max(lo, -300), min(hi, 300))
    return rng.randint(lo, hi)


def _primitive(rng: random.Random, t: str) -> Any:
    if t in _INT_RANGES:
        return _int(rng, t)
    if t == "bool":
        return rng.random() < 0.5
    if t == "float64":
        return rng.choice([0.0, -1.5, 3.25e300, rng.uniform(-1e9, 1e9)])
    if t == "string":
        return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 12)))
    if t in ("bytes", "records"):
        return rng.randbytes(rng.choice([0, 1, 5, 40, 200]))
    if t == "uuid":
        return uuid.UUID(int=rng.getrandbits(128))
    raise AssertionError(t)


class Builder:
    """Random but reproducible instances of a message at one version (only fields that version carries)."""

    def __init__(self, entry: Entry, version: int, seed: int, unknown_tags: bool = True) -> None:
        self.entry = entry
        self.version = version
        self.rng = random.Random(f"{entry.name}/{version}/{seed}")
        self.flexible = version in entry.msg.flexible
        self.unknown_tags = unknown_tags

    def build(self) -> Any:
        return self.struct(self.entry.msg.top, depth=0)

    def struct(self, st: Any, depth: int) -> Any:
        obj = self.entry.struct_class(st)()
        v = self.version
        for f in st.fields:
            if v in f.versions:
                setattr(obj, f.attr, self.value(f, depth))
        if self.flexible and self.unknown_tags and self.rng.random() < 0.25:
            used = {f.tag for f in st.fields if f.tag is not None}
            free = [t for t in range(20, 40) if t not in used]
            tags = sorted(self.rng.sample(free, self.rng.randint(1, 2)))
            obj._unknown_tagged = [(t, self.rng.randbytes(self.rng.randint(0, 6))) for t in tags]
        return obj

    def value(self, f: Any, depth: int) -> Any:
        rng = self.rng
        if self.version in f.nullable and rng.random() < 0.2:
            return None
        if f.is_array:
            n = 0 if depth > 3 else rng.choice([0, 1, 2, 3])
            if f.is_struct:
                return [self.struct(f.struct, depth + 1) for _ in range(n)]
            return [_primitive(rng, f.elem) for _ in range(n)]
        if f.is_struct:
            return self.struct(f.struct, depth + 1)
        return _primitive(rng, f.type)


def build(entry: Entry, version: int, seed: int, unknown_tags: bool = True) -> Any:
    return Builder(entry, version, seed, unknown_tags).build()


def required_entries() -> list[Entry]:
    names = [f"{a}{kind}" for a in REQUIRED_APIS for kind in ("Request", "Response")] + REQUIRED_DATA
    return [BY_NAME[n] for n in names]

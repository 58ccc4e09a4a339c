"""Generate ``aiokafka_lite/protocol/messages/`` from Kafka's JSON message specs.

Usage: ``python tools/gen_protocol.py [SPEC_DIR] [--out DIR]`` (SPEC_DIR defaults to
``../shared/kafka-protocol`` relative to the repository root, else the copy in ``specs/``). The output is
committed; a test regenerates it and compares.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .emit_modules import module_name, render_index, render_module
from .spec import MessageSpec, build_message, load_spec, nested_names

ROOT = Path(__file__).resolve().parents[2]
SHARED_SPECS = ROOT.parent / "shared" / "kafka-protocol"
#: shared/ beside the repository when present; else the copy kept in specs/ (``make generate`` refreshes it).
DEFAULT_SPECS = SHARED_SPECS if SHARED_SPECS.is_dir() else ROOT / "specs" / "kafka-protocol"
DEFAULT_OUT = ROOT / "aiokafka_lite" / "protocol" / "messages"
#: Specs of APIs newer than the shared set (Kafka 4.x: share groups, telemetry), copied from Apache Kafka's
#: ``clients/src/main/resources/common/message``; always read beside SPEC_DIR. See its NOTICE.md.
EXTRA_SPECS = ROOT / "specs" / "kafka-protocol-extra"


def spec_files(spec_dir: Path, extra_dir: Path | None = EXTRA_SPECS) -> list[Path]:
    """The JSON specs of ``spec_dir`` and of ``extra_dir``; a name in both is an error, not an override."""
    files = sorted(p for p in spec_dir.glob("*.json"))
    if not files:
        raise SystemExit(f"no *.json specs in {spec_dir}")
    if extra_dir is not None and extra_dir.is_dir():
        extra = sorted(extra_dir.glob("*.json"))
        clash = {p.name for p in files} & {p.name for p in extra}
        if clash:
            raise SystemExit(f"specs in both {spec_dir} and {extra_dir}: {sorted(clash)}")
        files = sorted(files + extra, key=lambda p: p.name)
    return files


def generate(spec_dir: Path, out_dir: Path, extra_dir: Path | None = EXTRA_SPECS) -> list[Path]:
    files = spec_files(spec_dir, extra_dir)
    raw = {p: load_spec(p) for p in files}
    by_api: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for p, spec in raw.items():
        name = spec["name"]
        api = name
        if spec["type"] in ("request", "response"):
            api = name.removesuffix("Request").removesuffix("Response")
        by_api.setdefault(api, []).append((p, spec))
    groups: dict[str, list[MessageSpec]] = {}
    for _api, items in sorted(by_api.items()):
        items.sort(key=lambda it: (it[1]["type"] != "request", it[1]["type"] != "response", it[1]["name"]))
        names = [nested_names(spec) for _, spec in items]
        clash = set.intersection(*names) if len(names) > 1 else set()
        msgs = []
        for p, spec in items:
            rename = {n: spec["name"] + n for n in clash}
            msgs.append(build_message(p, spec, rename))
        groups[module_name(msgs[0])] = msgs
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for modname, msgs in sorted(groups.items()):
        path = out_dir / f"{modname}.py"
        path.write_text(render_module(msgs), encoding="utf-8")
        written.append(path)
    index = out_dir / "__init__.py"
    index.write_text(render_index(groups), encoding="utf-8")
    written.append(index)
    keep = {p.name for p in written}
    for stale in out_dir.glob("*.py"):
        if stale.name not in keep:
            stale.unlink()
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("spec_dir", nargs="?", type=Path, default=DEFAULT_SPECS)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    written = generate(args.spec_dir, args.out)
    print(f"wrote {len(written)} modules to {args.out}", file=sys.stderr)
    return 0

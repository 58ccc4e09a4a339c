"""Run every benchmark in bench/ and print one table of their figures and ratios (`make bench`).

Each ``bench/*.py`` prints one JSON object as its last line of output. This runner passes a modest
record count to the scripts that take one (``--records``/``--num-records``/``--messages``, found in
their ``--help``), runs them one after another (the machine is shared: never in parallel), and
flattens each JSON object into rows: ``bench  figure  value``. Ratios (keys containing "ratio" or
"_vs_") are shown as ``N.NNx``. Exit status 1 if any script failed.

    python bench/run_all.py [--records N] [--only records connection] [--timeout S] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RECORD_FLAGS = ("--records", "--num-records", "--messages")


def discover() -> list[Path]:
    me = Path(__file__).name
    return sorted(p for p in HERE.glob("*.py") if p.name != me and not p.name.startswith("_"))


def record_flag(script: Path) -> str | None:
    """The script's record-count option, read from its --help (None if it has none)."""
    try:
        proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                              timeout=60, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None
    for flag in RECORD_FLAGS:
        if flag in proc.stdout:
            return flag
    return None


def run_one(script: Path, records: int, timeout: float) -> tuple[dict[str, Any] | None, str, float]:
    """Run one script; returns (its JSON result or None, an error note, seconds taken)."""
    cmd = [sys.executable, str(script)]
    flag = record_flag(script)
    if flag is not None:
        cmd += [flag, str(records)]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              env=dict(os.environ, PYTHONUNBUFFERED="1"))
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:g} s", time.monotonic() - started
    elapsed = time.monotonic() - started
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or lines or ["no output"])[-1]
        return None, f"exit status {proc.returncode}: {tail}", elapsed
    try:
        result = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        result = None
    if not isinstance(result, dict):
        return None, "the last line of output is not a JSON object", elapsed
    return result, "", elapsed


def flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        rows: list[tuple[str, Any]] = []
        for key, item in value.items():
            rows += flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return rows
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            rows = []
            for i, item in enumerate(value):
                keys = _label_keys(item)
                label = "/".join(str(item[k]) for k in keys) or str(i)
                rows += flatten({k: v for k, v in item.items() if k not in keys}, f"{prefix}[{label}]")
            return rows
        return [(prefix, ", ".join(str(v) for v in value))]
    return [(prefix, value)]


_MEASURES = ("per_s", "per_record", "mb", "bytes", "seconds", "_ms", "avg", "requests")


def _label_keys(item: dict[str, Any]) -> list[str]:
    """The leading identifying fields of a list entry ({"client": "x", "partitions": 6, "mb_per_s": ..}
    -> ["client", "partitions"]); they name its rows instead of being rows."""
    keys = []
    for key, value in item.items():
        if isinstance(value, bool) or not isinstance(value, (str, int)) or any(m in key for m in _MEASURES):
            break
        keys.append(key)
    return keys


def is_ratio(name: str) -> bool:
    low = name.lower()
    return "ratio" in low or "_vs_" in low


def fmt(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, (int, float)):
        if is_ratio(name):
            return f"{value:.2f}x"
        if isinstance(value, float):
            return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.3g}"
        return f"{value:,}"
    return str(value)


def table(results: dict[str, tuple[dict[str, Any] | None, str, float]]) -> str:
    rows: list[tuple[str, str, str]] = [("bench", "figure", "value")]
    for name, (result, error, elapsed) in results.items():
        if result is None:
            rows.append((name, "FAILED", error))
            continue
        ordered = sorted(flatten(result), key=lambda kv: (is_ratio(kv[0]), kv[0].count(".") > 0))
        for key, value in ordered:
            if key == "bench":
                continue
            rows.append((name, key, fmt(key, value)))
        rows.append((name, "wall_seconds", f"{elapsed:.1f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    out = []
    for i, row in enumerate(rows):
        out.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000,
                        help="record count for the scripts that take one (default: 100000)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these (e.g. records connection)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds allowed per script")
    parser.add_argument("--json", type=Path, help="also write every result to this file")
    args = parser.parse_args(argv)
    scripts = discover()
    if args.only:
        wanted = {n.removesuffix(".py") for n in args.only}
        unknown = wanted - {s.stem for s in scripts}
        if unknown:
            parser.error(f"no such benchmark: {', '.join(sorted(unknown))}")
        scripts = [s for s in scripts if s.stem in wanted]
    results: dict[str, tuple[dict[str, Any] | None, str, float]] = {}
    for script in scripts:
        print(f"running bench/{script.name} ...", file=sys.stderr, flush=True)
        results[script.stem] = outcome = run_one(script, args.records, args.timeout)
        status = "ok" if outcome[0] is not None else f"FAILED ({outcome[1]})"
        print(f"  {status} in {outcome[2]:.1f} s", file=sys.stderr, flush=True)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps({k: v[0] for k, v in results.items()}, indent=2) + "\n")
    return 0 if all(r[0] is not None for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

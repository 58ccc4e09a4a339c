"""The clients' keyword settings are typed from config.py: a user's type checker flags a misspelt or
ill-typed setting (issue: ``Producer(linger_msx=5)`` used to pass ``mypy --strict``)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TYPING = ROOT / "tests" / "typing"


def _generator() -> object:
    path = ROOT / "tools" / "gen_settings_types.py"
    spec = importlib.util.spec_from_file_location("gen_settings_types", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_settings_types_are_up_to_date() -> None:
    rendered = _generator().render()  # type: ignore[attr-defined]
    committed = (ROOT / "aiokafka_lite" / "_settings.py").read_text(encoding="utf-8")
    assert committed == rendered, "aiokafka_lite/_settings.py is stale: run `make docs`"


def _mypy(*paths: Path, tmp_path: Path) -> tuple[int, str]:
    env = dict(os.environ, MYPYPATH=str(ROOT))  # an editable install's finder hook is invisible to mypy
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), "--config-file", os.devnull, *map(str, paths)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_mypy_strict_accepts_correct_settings(tmp_path: Path) -> None:
    code, out = _mypy(TYPING / "user_ok.py", tmp_path=tmp_path)
    assert code == 0, out


def test_mypy_strict_reports_each_wrong_setting(tmp_path: Path) -> None:
    code, out = _mypy(TYPING / "user_bad.py", tmp_path=tmp_path)
    assert code == 1, out
    expected = {}
    for n, line in enumerate((TYPING / "user_bad.py").read_text().splitlines(), 1):
        m = re.search(r"# E: (\w+)", line)
        if m:
            expected[n] = m.group(1)
    reported = {int(m.group(1)) for m in re.finditer(r"user_bad\.py:(\d+): error", out)}
    assert reported == set(expected), out
    for n, name in expected.items():
        assert re.search(rf"user_bad\.py:{n}: error: .*{name}", out), (name, out)


def test_mypy_strict_accepts_the_shipped_examples(tmp_path: Path) -> None:
    """examples/ is what users copy: it type-checks under --strict (ConsumerRecord is typed, issue 15)."""
    examples = sorted((ROOT / "examples").glob("*.py"))
    assert len(examples) >= 4
    # One mypy run over all of them (each error line names its file): a run per file re-read the stubs.
    code, out = _mypy(*examples, tmp_path=tmp_path)
    assert code == 0, out

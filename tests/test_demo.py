"""``python -m aiokafka_lite.demo`` works from the package alone, as a wheel installs it: no checkout, no
examples/ folder next to it (it used to read examples/ from the source tree)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import aiokafka_lite

PACKAGE = Path(aiokafka_lite.__file__).resolve().parent


def test_demo_runs_from_the_installed_package_alone(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "aiokafka_lite", ignore=shutil.ignore_patterns("__pycache__", "*.c"))
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site))
    proc = subprocess.run([sys.executable, "-m", "aiokafka_lite.demo"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "demo OK" in proc.stdout
    # The demo really ran the copy, not the checkout.
    probe = subprocess.run([sys.executable, "-c", "import aiokafka_lite; print(aiokafka_lite.__file__)"],
                           cwd=work, env=env, capture_output=True, text=True, check=True)
    assert probe.stdout.strip().startswith(str(site))

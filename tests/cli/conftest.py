"""Running the real command line: in-process through ``main(argv)`` (fast, exit status and streams
captured) or as a child process (``python -m aiokafka_lite``, the installed ``aiokafka-lite``)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from _cli_support import Result

from aiokafka_lite.cli import main

VENV_BIN = Path(sys.executable).parent


class _Stdin(io.TextIOWrapper):
    """A text stdin whose ``.buffer`` yields the given bytes."""


@pytest.fixture
def cli(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """``cli("topics", "list", "-b", addr, stdin=b"...")`` runs ``main(argv)`` in this process."""

    def run(*argv: str, stdin: bytes = b"") -> Result:
        monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(stdin)))
        capfd.readouterr()
        code = main(list(argv))
        captured = capfd.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture
def cli_process() -> Callable[..., Result]:
    """``cli_process("smoke", ..., entry="module"|"script")`` runs the CLI in a child process."""

    def run(*argv: str, stdin: bytes = b"", entry: str = "module", timeout: float = 60) -> Result:
        cmd = ([sys.executable, "-m", "aiokafka_lite"] if entry == "module"
               else [str(VENV_BIN / "aiokafka-lite")])
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.run([*cmd, *argv], input=stdin, capture_output=True, timeout=timeout, env=env)
        return Result(proc.returncode, proc.stdout.decode(errors="replace"),
                      proc.stderr.decode(errors="replace"))

    return run

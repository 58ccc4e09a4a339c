"""Bad input and unreachable brokers: one clear line on stderr, a non-zero exit, within seconds."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from _cli_support import Result

UNREACHABLE = "127.0.0.1:1"  # nothing listens on port 1: connections are refused at once


def _one_error_line(result: Result) -> str:
    lines = result.err_lines
    assert len(lines) == 1, f"expected one line on stderr, got {result.err!r}"
    assert lines[0].startswith("aiokafka-lite: error: ")
    return lines[0]


def test_help_and_version(cli: Callable[..., Result]) -> None:
    result = cli("--help")
    assert result.code == 0
    for command in ("broker", "topics", "produce", "consume", "groups", "bench", "smoke"):
        assert command in result.out
    result = cli("--version")
    assert result.code == 0 and result.out.startswith("aiokafka-lite ")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["bogus"], "invalid choice: 'bogus'"),
        (["topics"], "required"),
        (["produce"], "required"),
        (["produce", "t", "-X", "linger.mss=5"], "unknown setting 'linger_mss' (did you mean 'linger_ms'?)"),
        (["produce", "t", "-X", "linger.ms=soon"], "'linger_ms': not an integer"),
        (["produce", "t", "-X", "acks=2"], "acks"),
        (["produce", "t", "-X", "nokeyvalue"], "-X expects key=value"),
        (["consume", "t", "-X", "linger.ms=5"], "unknown setting 'linger_ms'"),  # a producer setting
        (["consume", "t", "-X", "auto.offset.reset=never"], "auto_offset_reset"),
        (["consume", "t", "-F", "{nope}"], "bad --format '{nope}'"),
        (["consume", "t", "-n", "0"], "-n/--max-messages"),
        (["topics", "list", "-X", "bogus.setting=1"], "unknown setting 'bogus_setting'"),
        (["smoke", "-X", "fetch.max.bytes=none"], "fetch_max_bytes"),
        (["topics", "create", "t", "-p", "0"], "--partitions"),
    ],
)
def test_bad_usage_exits_2_with_one_line(cli: Callable[..., Result], argv: list[str], needle: str) -> None:
    started = time.monotonic()
    result = cli(*argv, "-b", UNREACHABLE) if argv[0] != "bogus" and argv != ["topics"] else cli(*argv)
    assert result.code == 2
    assert needle in _one_error_line(result)
    assert result.out == ""
    assert time.monotonic() - started < 2, "settings are checked before connecting"


@pytest.mark.parametrize(
    "argv",
    [
        ["topics", "list"],
        ["topics", "create", "t"],
        ["groups", "list"],
        ["produce", "t"],
        ["consume", "t", "-n", "1"],
        ["smoke", "-n", "10"],
        ["bench", "produce", "-n", "10"],
    ],
)
def test_unreachable_bootstrap_server(cli: Callable[..., Result], argv: list[str]) -> None:
    started = time.monotonic()
    result = cli(*argv, "-b", UNREACHABLE, stdin=b"a\nb\n")
    assert result.code == 1
    line = _one_error_line(result)
    assert f"cannot reach bootstrap server {UNREACHABLE}" in line
    assert time.monotonic() - started < 5


def test_missing_input_file(cli: Callable[..., Result], tmp_path: object) -> None:
    result = cli("produce", "t", "-f", "/nonexistent/lines.txt", "-b", UNREACHABLE)
    assert result.code == 1
    assert "cannot read /nonexistent/lines.txt" in _one_error_line(result)


def test_real_entry_points(cli_process: Callable[..., Result]) -> None:
    """``python -m aiokafka_lite`` and the installed ``aiokafka-lite`` script behave the same."""
    for entry in ("module", "script"):
        result = cli_process("topics", "list", "-b", UNREACHABLE, entry=entry, timeout=20)
        assert result.code == 1, result.err
        assert _one_error_line(result).startswith(
            f"aiokafka-lite: error: cannot reach bootstrap server {UNREACHABLE}")
        result = cli_process("produce", "t", "-X", "linger.mss=1", entry=entry, timeout=20)
        assert result.code == 2
        assert "did you mean 'linger_ms'" in _one_error_line(result)

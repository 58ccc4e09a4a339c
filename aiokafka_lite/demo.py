"""``make demo``: the embedded broker, a round trip through the command line, and an example.

1. starts the development broker with ``python -m aiokafka_lite broker --port 0`` (Tansu);
2. creates a topic, produces records and consumes them back, each step a real CLI process, and checks
   every record came back;
3. runs the example ``aiokafka_lite.examples.produce_consume`` (``examples/produce_consume.py`` in a
   checkout) against the broker -- shipped inside the package, so the demo works from an installed wheel;
4. stops the broker by PID and checks it (and the Tansu process under it) are gone.

Exits non-zero, saying which step failed and why, on any failure.
"""

from __future__ import annotations

import os
import re
import secrets
import selectors
import signal
import subprocess
import sys
import time

EXAMPLE = "aiokafka_lite.examples.produce_consume"
RECORDS = 200
CLI = [sys.executable, "-m", "aiokafka_lite"]


class DemoFailed(Exception):
    """A step failed; the message says which and why."""


def _step(number: int, text: str) -> float:
    print(f"[{number}/4] {text}", flush=True)
    return time.monotonic()


def _done(started: float, detail: str = "") -> None:
    print(f"      ok in {time.monotonic() - started:.2f} s{': ' + detail if detail else ''}", flush=True)


def _run(what: str, argv: list[str], *, stdin: bytes = b"", timeout: float = 60) -> str:
    try:
        proc = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise DemoFailed(f"{what}: no answer within {timeout:g} s ({' '.join(argv)})") from None
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip() or proc.stdout.decode(errors="replace").strip()
        raise DemoFailed(f"{what} exited with status {proc.returncode}: {err}")
    return proc.stdout.decode(errors="replace")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop(proc: subprocess.Popen[bytes]) -> int:
    """SIGTERM by PID; SIGKILL after 10 s."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    return proc.returncode


def _start_broker() -> tuple[subprocess.Popen[bytes], str, int]:
    """The CLI's ``broker`` command in the background; its address and the Tansu PID under it."""
    proc = subprocess.Popen([*CLI, "broker", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = b""
    deadline = time.monotonic() + 30
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while not line.endswith(b"\n"):
            if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                _stop(proc)
                raise DemoFailed("the broker did not report its address within 30 s")
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                _stop(proc)
                err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
                raise DemoFailed(f"the broker command exited: {err}")
            line += chunk
    match = re.search(r"listening on (\S+) \(pid (\d+)\)", line.decode(errors="replace"))
    if match is None:
        _stop(proc)
        raise DemoFailed(f"unexpected broker output: {line!r}")
    return proc, match.group(1), int(match.group(2))


def _round_trip(bootstrap: str) -> str:
    topic = f"demo-{secrets.token_hex(4)}"
    _run("topics create", [*CLI, "topics", "create", topic, "--partitions", "3", "-b", bootstrap])
    lines = [f"key-{i}:value-{i}" for i in range(RECORDS)]
    _run("produce", [*CLI, "produce", topic, "-K", ":", "-b", bootstrap],
         stdin=("\n".join(lines) + "\n").encode())
    out = _run("consume", [*CLI, "consume", topic, "--from-beginning", "-n", str(RECORDS),
                           "-F", "{key}:{value}", "-t", "30", "-b", bootstrap])
    got = out.splitlines()
    if sorted(got) != sorted(lines):
        missing = sorted(set(lines) - set(got))
        raise DemoFailed(f"consume returned {len(got)} records, {len(missing)} missing "
                         f"(first: {missing[:1]}), {len(set(got) - set(lines))} unexpected")
    described = _run("topics describe", [*CLI, "topics", "describe", topic, "-b", bootstrap])
    _run("topics delete", [*CLI, "topics", "delete", topic, "-b", bootstrap])
    partitions = described.count("Partition: ")
    return f"{RECORDS}/{RECORDS} records came back from {topic} ({partitions} partitions)"


def demo() -> None:
    t = _step(1, "starting the embedded Tansu broker (python -m aiokafka_lite broker --port 0)")
    proc, bootstrap, broker_pid = _start_broker()
    _done(t, f"{bootstrap}, broker command pid {proc.pid}, tansu pid {broker_pid}")
    try:
        t = _step(2, f"round trip through the CLI: topics create, produce {RECORDS}, consume {RECORDS}")
        _done(t, _round_trip(bootstrap))
        t = _step(3, f"running python -m {EXAMPLE} {bootstrap}")
        out = _run("the example", [sys.executable, "-m", EXAMPLE, bootstrap], timeout=120)
        _done(t, (out.strip().splitlines() or ["(no output)"])[-1])
    finally:
        t = _step(4, f"stopping the broker by PID ({proc.pid})")
        code = _stop(proc)
        deadline = time.monotonic() + 10
        while _pid_alive(broker_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _pid_alive(broker_pid):
            os.kill(broker_pid, signal.SIGKILL)
            raise DemoFailed(f"the Tansu process {broker_pid} outlived its broker command")
    if code != 0:
        raise DemoFailed(f"the broker command exited with status {code} on SIGTERM")
    _done(t, "the broker command and Tansu are gone")


def main() -> int:
    started = time.monotonic()
    try:
        demo()
    except DemoFailed as exc:
        print(f"demo FAILED: {exc}", file=sys.stderr)
        return 1
    print(f"demo OK in {time.monotonic() - started:.1f} s: broker started and stopped by PID, {RECORDS} "
          f"records round-tripped through the CLI, {EXAMPLE} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

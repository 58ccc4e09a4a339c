"""``aiokafka-lite broker``: runs the embedded broker in the foreground and stops it on SIGTERM/Ctrl-C."""

from __future__ import annotations

import os
import re
import selectors
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable

import pytest
from _cli_support import Result

from aiokafka_lite.embedded import free_port


def _start(*argv: str) -> tuple[subprocess.Popen[bytes], str, int]:
    proc = subprocess.Popen([sys.executable, "-m", "aiokafka_lite", "broker", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=30):
            proc.kill()
            proc.wait()
            pytest.fail("the broker command printed nothing within 30 s")
    line = proc.stdout.readline().decode()
    match = re.search(r"listening on (127\.0\.0\.1:\d+) \(pid (\d+)\)", line)
    if match is None:
        proc.kill()
        proc.wait()
        pytest.fail(f"unexpected first line {line!r}; stderr: {proc.stderr.read() if proc.stderr else b''!r}")
    return proc, match.group(1), int(match.group(2))


def _gone(pid: int, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(("kind", "sig"), [("tansu", signal.SIGTERM), ("noida", signal.SIGINT)])
def test_broker_runs_until_signalled(cli: Callable[..., Result], kind: str, sig: signal.Signals) -> None:
    port = free_port()
    proc, address, broker_pid = _start("--kind", kind, "--port", str(port))
    try:
        assert address == f"127.0.0.1:{port}"
        result = cli("topics", "create", "from-cli-broker-test", "-b", address)
        assert result.code == 0, result.err
        assert "from-cli-broker-test" in cli("topics", "list", "-b", address).out.split()
    finally:
        os.kill(proc.pid, sig)  # by PID, as Ctrl-C / a service manager would
        code = proc.wait(timeout=15)
    assert code == 0
    assert proc.stderr is not None and f"stopping {kind} broker" in proc.stderr.read().decode()
    assert _gone(broker_pid), f"the {kind} process {broker_pid} outlived the broker command"


def test_port_in_use_is_one_clear_error(cli: Callable[..., Result]) -> None:
    proc, address, _ = _start("--port", "0")
    try:
        port = address.rsplit(":", 1)[1]
        result = cli("broker", "--port", port)
        assert result.code == 1
        # errors' messages no longer repeat their class name (issue 15, item 7)
        assert result.err_lines == [f"aiokafka-lite: error: cannot start tansu on "
                                    f"127.0.0.1:{port}: the port is already in use"]
        bad = cli("broker", "--kind", "tansu", "--data-dir", "/tmp/x")
        assert bad.code == 2 and "--data-dir applies to --kind noida only" in bad.err
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)


def test_restart_on_the_same_port_right_after_clients_were_connected(cli: Callable[..., Result]) -> None:
    """The broker closes its clients' connections when it stops (TIME_WAIT on its port for ~60 s);
    the port check must not mistake that for a listener."""
    port = free_port()
    proc, address, broker_pid = _start("--port", str(port))
    clients = []
    try:
        assert cli("topics", "create", "restart-test", "-b", address).code == 0
        for _ in range(3):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(_API_VERSIONS)
            _read_answer(sock)  # read in full: unread bytes would make close() a reset, not a FIN
            clients.append(sock)
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    assert _gone(broker_pid)
    for sock in clients:  # the broker closed first: its side of each connection is in TIME_WAIT now
        sock.close()
    proc, address, _ = _start("--port", str(port))
    try:
        assert address == f"127.0.0.1:{port}"
        assert cli("topics", "list", "-b", address).code == 0
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=15) == 0


def _read_answer(sock: socket.socket) -> None:
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
        chunk = sock.recv(65536)
        assert chunk, "the broker closed the connection"
        data += chunk


#: An ApiVersions v0 request (api key 18, correlation id 1, client id "t"), size-prefixed.
_API_VERSIONS = struct.pack(">ihhih", 11, 18, 0, 1, 1) + b"t"

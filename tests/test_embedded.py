"""The embedded brokers: they start, answer ApiVersions, stop by PID, and fail with clear errors."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from aiokafka_lite import embedded
from aiokafka_lite.embedded import (
    BrokerBinaryNotFoundError,
    EmbeddedBroker,
    EmbeddedBrokerError,
    aprobe_api_versions,
    find_broker_binary,
    probe_api_versions,
    start_broker,
)
from aiokafka_lite.errors import IllegalArgumentError, KafkaConnectionError, ProtocolError

KINDS = ["tansu", "noida"]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still has a PID; it is dead for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_session_broker_answers_api_versions(broker: EmbeddedBroker) -> None:
    versions = probe_api_versions(broker.host, broker.port)
    # Produce, Fetch, ListOffsets, Metadata, FindCoordinator, ApiVersions are on every broker we use.
    for key in (0, 1, 2, 3, 10, 18):
        lo, hi = versions[key]
        assert 0 <= lo <= hi
    assert broker.bootstrap == f"127.0.0.1:{broker.port}"
    assert pid_alive(broker.pid)
    assert broker.log_path is not None and broker.log_path.exists()


def test_tansu_advertises_known_maxima(tansu: EmbeddedBroker) -> None:
    versions = probe_api_versions(tansu.host, tansu.port)
    assert versions[0][1] == 11 and versions[18][1] == 4  # brokers.md: Produce 11, ApiVersions 4


@pytest.mark.parametrize("kind", KINDS)
def test_start_then_stop_by_pid(kind: str) -> None:
    b = start_broker(kind)
    pid, port, log_dir = b.pid, b.port, b.log_path.parent if b.log_path else None
    data_dir = b.data_dir
    assert b.running and pid_alive(pid)
    assert b.api_versions[18][0] == 0
    assert f"{port}" in b.log_tail()  # the log captured the broker's own start-up lines
    assert b.stop() is not None
    assert not pid_alive(pid)
    assert not b.running
    with pytest.raises(KafkaConnectionError):
        probe_api_versions("127.0.0.1", port, timeout=0.5)
    # Temporary directories this object made are gone; stop() again is a no-op.
    assert log_dir is not None and not log_dir.exists()
    if kind == "noida":
        assert data_dir is not None and not data_dir.exists()
    b.stop()


def test_sync_context_manager_keeps_given_log_dir(tmp_path: Path) -> None:
    with EmbeddedBroker("tansu", log_dir=tmp_path) as b:
        pid = b.pid
        assert probe_api_versions(b.host, b.port)[3]
    assert not pid_alive(pid)
    assert b.log_path is not None and b.log_path.parent == tmp_path
    assert "listening on" in b.log_path.read_text()


async def test_async_context_manager() -> None:
    async with EmbeddedBroker("noida") as b:
        pid = b.pid
        versions = await aprobe_api_versions(b.host, b.port)
        assert versions == b.api_versions
    assert not pid_alive(pid)


def test_fixed_port(tmp_path: Path) -> None:
    port = embedded.free_port()
    with EmbeddedBroker("noida", port=port, data_dir=tmp_path / "data") as b:
        assert b.port == port
        assert probe_api_versions("127.0.0.1", port)[0]
        assert (tmp_path / "data").is_dir()
    assert (tmp_path / "data").is_dir()  # a caller's data_dir is never deleted


def test_missing_binary_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BrokerBinaryNotFoundError, match="not an executable file"):
        EmbeddedBroker("tansu", binary=tmp_path / "no-such-tansu").start()
    monkeypatch.setenv("AIOKAFKA_LITE_NOIDA_BIN", str(tmp_path / "nope"))
    with pytest.raises(BrokerBinaryNotFoundError, match="AIOKAFKA_LITE_NOIDA_BIN"):
        find_broker_binary("noida")
    with pytest.raises(BrokerBinaryNotFoundError):
        start_broker("noida")


def test_bad_arguments() -> None:
    for port in (0, -1, 65536, True, "9092"):
        with pytest.raises(IllegalArgumentError, match="port"):
            EmbeddedBroker("tansu", port=port)  # type: ignore[arg-type]
    with pytest.raises(IllegalArgumentError, match="unknown broker kind"):
        EmbeddedBroker("kafka")
    with pytest.raises(IllegalArgumentError, match="data_dir"):
        EmbeddedBroker("tansu", data_dir="/tmp/x")


@pytest.mark.parametrize("kind", KINDS)
def test_port_in_use_is_a_clear_error(kind: str) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        with pytest.raises(EmbeddedBrokerError, match=f"{port}.*already in use"):
            start_broker(kind, port=port)


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "fake-broker"
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def test_broker_that_exits_reports_its_log(tmp_path: Path) -> None:
    fake = _script(tmp_path, "echo 'fatal: cannot open storage' >&2\nexit 3\n")
    b = EmbeddedBroker("tansu", binary=fake)
    with pytest.raises(EmbeddedBrokerError, match=r"(?s)exited with status 3.*cannot open storage"):
        b.start(timeout=10)
    assert not b.running


def test_broker_that_never_answers_times_out_and_is_killed(tmp_path: Path) -> None:
    fake = _script(tmp_path, "echo still-booting\nexec sleep 60\n")
    b = EmbeddedBroker("noida", binary=fake)
    t0 = time.monotonic()
    with pytest.raises(
        EmbeddedBrokerError, match=r"(?s)did not answer ApiVersions within 0.5s.*still-booting"
    ):
        b.start(timeout=0.5)
    assert time.monotonic() - t0 < 5
    assert not pid_alive(b.pid)


async def test_cancelled_astart_leaves_no_process(tmp_path: Path) -> None:
    fake = _script(tmp_path, "exec sleep 60\n")
    b = EmbeddedBroker("tansu", binary=fake)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(b.astart(timeout=30), 0.3)
    assert not pid_alive(b.pid)


def test_lost_port_race_is_retried(tmp_path: Path) -> None:
    """The first run finds its auto-picked port taken (as if another process won the race)."""
    marker = tmp_path / "ran-once"
    real = find_broker_binary("tansu")
    fake = _script(
        tmp_path,
        f"""\
        if [ ! -e {marker} ]; then
            touch {marker}; echo 'err=Os {{ code: 98, kind: AddrInUse, message: "Address in use" }}'; exit 1
        fi
        exec {real} "$@"
        """,
    )
    with EmbeddedBroker("tansu", binary=fake, log_dir=tmp_path) as b:
        assert probe_api_versions(b.host, b.port)
    assert marker.exists()
    assert "AddrInUse" in b.log_path.read_text()  # type: ignore[union-attr]


@pytest.fixture
def garbage_server() -> Iterator[int]:
    """A TCP server that answers anything with an HTTP error, like a wrong port would."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    srv.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
    srv.close()
    thread.join(2)


async def test_probe_rejects_a_non_kafka_server(garbage_server: int) -> None:
    with pytest.raises(ProtocolError, match="impossible size"):
        probe_api_versions("127.0.0.1", garbage_server)
    with pytest.raises(ProtocolError, match="impossible size"):
        await aprobe_api_versions("127.0.0.1", garbage_server)


def test_broker_dies_with_its_parent(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import os, signal
        from aiokafka_lite.embedded import start_broker
        b = start_broker("tansu", log_dir={str(tmp_path)!r})
        print(b.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no atexit, no finally: only the kernel can help
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    assert wait_gone(int(proc.stdout.split()[0]))


def test_atexit_stops_brokers() -> None:
    code = "from aiokafka_lite.embedded import start_broker\nprint(start_broker('noida').pid, flush=True)\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not pid_alive(int(proc.stdout.split()[0]))


async def test_event_loop_follows_env() -> None:
    loop = asyncio.get_running_loop()
    if os.environ.get("AIOKAFKA_LITE_LOOP", "").strip().lower() == "uvloop":
        import uvloop

        assert isinstance(loop, uvloop.Loop)
    else:
        assert type(loop).__module__.startswith("asyncio")

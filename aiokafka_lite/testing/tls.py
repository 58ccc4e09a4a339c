"""TLS for tests: a throw-away CA and server certificate, and a real TLS terminator before Tansu.

Tansu cannot serve TLS itself (see shared/brokers.md), so :class:`TlsBroker` runs Debian's
``stunnel4`` (or ``socat``) on one loopback port, decrypting into a Tansu that listens on another
port but *advertises* the terminator's address: every connection the client opens after metadata
goes through TLS too. Certificates come from the ``openssl`` command line (EC P-256 keys, valid two
days, SAN ``IP:127.0.0.1`` and ``DNS:localhost`` unless told otherwise); a terminator can require a
client certificate signed by the CA (:func:`make_client_certificate`). Every process is stopped by its PID.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .._lifecycle import Lifecycle
from ..embedded import (
    _die_with_parent,
    find_broker_binary,
    free_port,
    probe_api_versions,
    read_tail,
    stop_pid,
)
from ..errors import KafkaError
from ._exit import ExitRegistry

__all__ = [
    "CertificateSet",
    "TansuProcess",
    "TlsBroker",
    "TlsSetupError",
    "TlsTerminator",
    "make_certificates",
    "make_client_certificate",
]

LOOPBACK = "127.0.0.1"
Terminator = Literal["stunnel", "socat"]


class TlsSetupError(KafkaError):
    """Certificates could not be made, or a terminator or broker did not come up."""


@dataclass(frozen=True)
class CertificateSet:
    """PEM files of a CA and of a server certificate it signed."""

    directory: Path
    ca_cert: Path
    ca_key: Path
    server_cert: Path
    server_key: Path

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts only this CA (and checks the host name)."""
        return ssl.create_default_context(cafile=str(self.ca_cert))


def _openssl(args: list[str], cwd: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise TlsSetupError("the openssl command is not installed")
    proc = subprocess.run([openssl, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise TlsSetupError(f"openssl {' '.join(args[:2])} failed: {proc.stderr.strip()}")


def make_certificates(
    directory: str | os.PathLike[str] | None = None,
    name: str = "test",
    san: str = "IP:127.0.0.1,DNS:localhost",
) -> CertificateSet:
    """Create ``<name>-ca.pem``/``-ca.key`` and ``<name>-server.pem``/``-server.key`` in ``directory``
    (a new temporary directory by default). Call twice for a CA that the other set does not trust.
    ``san`` is the server certificate's subjectAltName (another one makes a host name mismatch)."""
    path = Path(directory) if directory is not None else Path(tempfile.mkdtemp(prefix="aiokafka-lite-tls-"))
    path.mkdir(parents=True, exist_ok=True)
    ca_key, ca_cert = path / f"{name}-ca.key", path / f"{name}-ca.pem"
    key, csr, cert = path / f"{name}-server.key", path / f"{name}-server.csr", path / f"{name}-server.pem"
    ext = path / f"{name}-server.ext"
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(
        [
            "req",
            "-x509",
            *ec,
            "-keyout",
            ca_key.name,
            "-out",
            ca_cert.name,
            "-days",
            "2",
            "-subj",
            f"/CN=aiokafka-lite {name} CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
        path,
    )
    _openssl(["req", *ec, "-keyout", key.name, "-out", csr.name, "-subj", "/CN=127.0.0.1"], path)
    ext.write_text(
        f"subjectAltName={san}\n"
        "basicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
    )
    _openssl(
        [
            "x509",
            "-req",
            "-in",
            csr.name,
            "-CA",
            ca_cert.name,
            "-CAkey",
            ca_key.name,
            "-CAcreateserial",
            "-out",
            cert.name,
            "-days",
            "2",
            "-extfile",
            ext.name,
        ],
        path,
    )
    return CertificateSet(path, ca_cert, ca_key, cert, key)


def make_client_certificate(
    certs: CertificateSet, name: str = "client", password: str | None = None
) -> tuple[Path, Path]:
    """A client certificate ``<name>.pem`` signed by ``certs``' CA, and its key ``<name>.key``
    (encrypted with AES-256 under ``password`` if given); returns their paths."""
    path = certs.directory
    key, csr, cert, ext = (path / f"{name}{suffix}" for suffix in (".key", ".csr", ".pem", ".ext"))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(["req", *ec, "-keyout", key.name, "-out", csr.name, "-subj", f"/CN={name}"], path)
    ext.write_text(
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n"
    )
    _openssl(
        ["x509", "-req", "-in", csr.name, "-CA", certs.ca_cert.name, "-CAkey", certs.ca_key.name,
         "-CAcreateserial", "-out", cert.name, "-days", "2", "-extfile", ext.name],
        path,
    )
    if password is not None:
        plain = path / f"{name}.plain.key"
        key.rename(plain)
        encrypt = ["pkey", "-in", plain.name, "-out", key.name, "-aes256", "-passout", f"pass:{password}"]
        _openssl(encrypt, path)
        plain.unlink()
    return cert, key


def _wait_for_port(
    host: str, port: int, proc: subprocess.Popen[bytes], what: str, log: Path, timeout: float = 10.0
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise TlsSetupError(f"{what} exited with status {proc.returncode}:\n{read_tail(log)}")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.02)
    raise TlsSetupError(f"{what} did not listen on {host}:{port} within {timeout}s:\n{read_tail(log)}")


class _Child:
    """A process this module starts, listening on ``host:port`` (loopback; a free port unless given), in
    a session of its own, logging to ``log_path``; ``pid`` for the tests that signal it."""

    what = "the process"
    log_path: Path
    _proc: subprocess.Popen[bytes] | None = None

    def __init__(self, port: int | None) -> None:
        self.host = LOOPBACK
        self.port = port or free_port()

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise TlsSetupError(f"{self.what} was never started")
        return self._proc.pid

    def _spawn(self, argv: list[str], env: dict[str, str] | None = None,
               preexec_fn: Callable[[], None] | None = None) -> subprocess.Popen[bytes]:
        with open(self.log_path, "ab") as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env=env, start_new_session=True, preexec_fn=preexec_fn)
        self._proc = proc
        return proc


class TlsTerminator(_Child):
    """A TLS server on ``host:port`` forwarding plaintext to ``upstream`` (stunnel or socat)."""

    what = "the terminator"

    def __init__(
        self,
        upstream: tuple[str, int],
        certs: CertificateSet,
        *,
        kind: Terminator = "stunnel",
        port: int | None = None,
        log_dir: Path | None = None,
        client_ca: Path | None = None,
    ) -> None:
        if kind not in ("stunnel", "socat"):
            raise TlsSetupError(f"unknown terminator {kind!r}; expected 'stunnel' or 'socat'")
        super().__init__(port)
        self.kind = kind
        self.upstream = upstream
        self.certs = certs
        #: When set, a client certificate signed by this CA is required (mutual TLS).
        self.client_ca = client_ca
        self.log_path = (log_dir or certs.directory) / f"{kind}-{self.port}.log"

    def _argv(self) -> list[str]:
        up_host, up_port = self.upstream
        if self.kind == "stunnel":
            exe = shutil.which("stunnel4") or shutil.which("stunnel")
            if exe is None:
                raise TlsSetupError("stunnel4 is not installed")
            conf = self.certs.directory / f"stunnel-{self.port}.conf"
            verify = ""
            if self.client_ca is not None:
                verify = f"verifyChain = yes\nrequireCert = yes\nCAfile = {self.client_ca}\n"
            conf.write_text(
                "foreground = yes\npid =\n"
                f"[kafka]\naccept = {self.host}:{self.port}\nconnect = {up_host}:{up_port}\n"
                f"cert = {self.certs.server_cert}\nkey = {self.certs.server_key}\n{verify}"
            )
            return [exe, str(conf)]
        exe = shutil.which("socat")
        if exe is None:
            raise TlsSetupError("socat is not installed")
        listen = (
            f"OPENSSL-LISTEN:{self.port},bind={self.host},reuseaddr,fork,"
            f"cert={self.certs.server_cert},key={self.certs.server_key},"
            + (f"verify=1,cafile={self.client_ca}" if self.client_ca else "verify=0")
        )
        return [exe, listen, f"TCP:{up_host}:{up_port}"]

    def start(self) -> None:
        # A session of its own: socat forks a child per connection, and stop() signals the group.
        proc = self._spawn(self._argv())
        try:
            _wait_for_port(self.host, self.port, proc, self.kind, self.log_path)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, 15)  # the group led by the PID we started (socat's children)
            except ProcessLookupError:
                pass
        stop_pid(proc, grace=3.0)


_LIVE = ExitRegistry()


class TansuProcess(_Child):
    """Tansu listening on ``port`` but advertising ``advertised`` (a terminator's or a front's).

    Like :class:`~aiokafka_lite.embedded.EmbeddedBroker`, it is stopped at interpreter exit and (Linux,
    started from the main thread) by the kernel when its owner dies, so a killed test run leaves no broker.
    """

    what = "tansu"

    def __init__(
        self, advertised: tuple[str, int], *, port: int | None = None, log_dir: Path | None = None
    ) -> None:
        super().__init__(port)
        self.advertised = advertised
        self._own_dir = None if log_dir is not None else Path(tempfile.mkdtemp(prefix="aiokafka-lite-tansu-"))
        self.log_path = Path(log_dir or self._own_dir or ".") / f"tansu-{self.port}.log"

    def start(self, timeout: float = 20.0) -> None:
        binary = find_broker_binary("tansu")
        adv_host, adv_port = self.advertised
        argv = [
            str(binary),
            "broker",
            "--listener-url",
            f"tcp://{self.host}:{self.port}",
            "--advertised-listener-url",
            f"tcp://{adv_host}:{adv_port}",
        ]
        proc = self._spawn(argv, env=dict(os.environ, NO_COLOR="1"), preexec_fn=_die_with_parent())
        _LIVE.add(self)
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise TlsSetupError(
                    f"tansu exited with status {proc.returncode}:\n{read_tail(self.log_path)}")
            try:
                probe_api_versions(self.host, self.port, timeout=1.0)
                return
            except KafkaError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise TlsSetupError(
                        f"tansu did not answer within {timeout}s:\n{read_tail(self.log_path)}"
                    ) from None
                time.sleep(0.02)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            stop_pid(proc, grace=3.0)
        _LIVE.discard(self)
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)


class TlsBroker(Lifecycle):
    """Tansu behind a TLS terminator: ``bootstrap`` is the TLS address; ``client_context()`` trusts it.

    ``upstream`` replaces Tansu as the terminator's target (e.g. a SASL front, for SASL_SSL); the
    caller then runs that target and whatever it forwards to.
    """

    def __init__(
        self,
        kind: Terminator = "stunnel",
        *,
        upstream: tuple[str, int] | None = None,
        require_client_cert: bool = False,
        san: str = "IP:127.0.0.1,DNS:localhost",
    ) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="aiokafka-lite-tls-"))
        self.certs = make_certificates(self.directory, san=san)
        self.host = LOOPBACK
        self.port = free_port()
        self.tansu: TansuProcess | None = None
        if upstream is None:
            self.tansu = TansuProcess((self.host, self.port), log_dir=self.directory)
            upstream = (self.tansu.host, self.tansu.port)
        client_ca = self.certs.ca_cert if require_client_cert else None
        self.terminator = TlsTerminator(upstream, self.certs, kind=kind, port=self.port, client_ca=client_ca)

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def client_context(self) -> ssl.SSLContext:
        return self.certs.client_context()

    def start(self) -> None:
        try:
            if self.tansu is not None:
                self.tansu.start()
            self.terminator.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        self.terminator.stop()
        if self.tansu is not None:
            self.tansu.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

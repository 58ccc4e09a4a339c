"""A throw-away MIT Kerberos KDC for tests, and the broker's side of Kafka's GSSAPI SASL exchange.

:class:`Kdc` creates a realm in a temporary directory (``kdb5_util create -s``), principals and
keytabs (``kadmin.local addprinc`` / ``ktadd``), and runs Debian's ``krb5kdc -n`` on a loopback port
with ``KRB5_CONFIG`` / ``KRB5_KDC_PROFILE`` pointing at generated files; it is stopped by its PID.
Clients in this process find it through :meth:`Kdc.activate`, which points ``KRB5_CONFIG`` (and a
private ``KRB5CCNAME``) at the realm's files.

:class:`GssapiServer` plays the broker: the ``gssapi`` package's ``SecurityContext`` in accept mode
with the service keytab (MIT's own acceptor, independent of our client code), then RFC 4752's
security-layer offer (no layer only) and the check of the client's answer. It plugs into
:class:`~aiokafka_lite.testing.sasl_front.SaslFront` through ``mechanism_servers``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from ..embedded import free_port, read_tail, stop_pid
from ..errors import KafkaError

__all__ = ["GssapiServer", "Kdc", "KdcSetupError"]

LOOPBACK = "127.0.0.1"
_NO_SECURITY_LAYER = 1
_MAX_MESSAGE = 0xFFFFFF


class KdcSetupError(KafkaError):
    """The realm could not be created, or the KDC did not come up."""


def _tool(name: str) -> str:
    for directory in ("", "/usr/sbin/", "/usr/local/sbin/"):
        path = shutil.which(name) if not directory else directory + name
        if path and os.access(path, os.X_OK):
            return path
    raise KdcSetupError(
        f"{name} is not installed (Debian: krb5-kdc, krb5-admin-server, krb5-user; see scripts/sysdeps.sh)"
    )


class Kdc:
    """A KDC for realm ``realm`` on ``127.0.0.1:port`` (TCP and UDP), its files in ``directory``."""

    def __init__(self, realm: str = "AIOKAFKA.TEST") -> None:
        self.realm = realm
        self.host = LOOPBACK
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="aiokafka-lite-kdc-"))
        self.krb5_conf = self.directory / "krb5.conf"
        self.kdc_conf = self.directory / "kdc.conf"
        self.log_path = self.directory / "krb5kdc.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._write_config()

    def _write_config(self, kdc_port: int | None = None) -> None:
        port = kdc_port or self.port
        d = self.directory
        # TCP only (udp_preference_limit = 1): an unreachable KDC is a refused connection, not UDP
        # retries; no DNS or reverse lookups, so host names stay as given.
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f" default_realm = {self.realm}\n"
            " dns_lookup_realm = false\n dns_lookup_kdc = false\n"
            " dns_canonicalize_hostname = false\n rdns = false\n"
            " udp_preference_limit = 1\n forwardable = false\n"
            "[realms]\n"
            f" {self.realm} = {{\n  kdc = {self.host}:{port}\n }}\n"
            "[domain_realm]\n"
            f" {self.host} = {self.realm}\n localhost = {self.realm}\n"
        )
        self.kdc_conf.write_text(
            "[kdcdefaults]\n"
            f" kdc_listen = {self.host}:{self.port}\n kdc_tcp_listen = {self.host}:{self.port}\n"
            "[realms]\n"
            f" {self.realm} = {{\n"
            f"  database_name = {d / 'principal'}\n"
            f"  key_stash_file = {d / 'stash'}\n"
            f"  acl_file = {d / 'kadm5.acl'}\n"
            f"  kdc_listen = {self.host}:{self.port}\n"
            f"  kdc_tcp_listen = {self.host}:{self.port}\n"
            "  max_life = 1h\n max_renewable_life = 0\n"
            " }\n"
            "[logging]\n"
            f" kdc = FILE:{self.log_path}\n"
        )

    @property
    def env(self) -> dict[str, str]:
        """The environment the realm's tools and clients need."""
        return dict(
            os.environ,
            KRB5_CONFIG=str(self.krb5_conf),
            KRB5_KDC_PROFILE=str(self.kdc_conf),
            KRB5CCNAME=f"FILE:{self.directory / 'ccache'}",
        )

    def _run(self, argv: list[str], what: str) -> str:
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            output = proc.stderr.strip() or proc.stdout.strip()
            raise KdcSetupError(f"{what} failed ({proc.returncode}): {output}")
        return proc.stdout

    def kadmin(self, query: str) -> str:
        """Run one ``kadmin.local`` query against this realm's database."""
        return self._run([_tool("kadmin.local"), "-r", self.realm, "-q", query], f"kadmin.local {query!r}")

    def add_principal(self, name: str, keytab: str | os.PathLike[str] | None = None) -> Path:
        """Create ``name`` (``user`` or ``service/host``) with a random key and export it to a keytab
        (``<directory>/<name>.keytab`` unless ``keytab`` is given); returns the keytab's path."""
        path = Path(keytab) if keytab is not None else self.directory / (name.replace("/", "_") + ".keytab")
        self.kadmin(f"addprinc -randkey {name}@{self.realm}")
        self.kadmin(f"ktadd -k {path} {name}@{self.realm}")
        return path

    def start(self, timeout: float = 20.0) -> None:
        self._run([_tool("kdb5_util"), "-r", self.realm, "create", "-s", "-P", "aiokafka-lite-master"],
                  "kdb5_util create")
        (self.directory / "kadm5.acl").write_text("")
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                [_tool("krb5kdc"), "-n", "-r", self.realm],
                env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout

        while True:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                self.stop()
                raise KdcSetupError(f"krb5kdc exited with status {code}:\n{read_tail(self.log_path)}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise KdcSetupError(f"krb5kdc did not listen within {timeout}s") from None
                time.sleep(0.02)

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise KdcSetupError("the KDC was never started")
        return self._proc.pid

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            stop_pid(proc, grace=3.0)
        shutil.rmtree(self.directory, ignore_errors=True)

    @contextmanager
    def activate(self) -> Iterator[None]:
        """Point this process's Kerberos library at the realm (``KRB5_CONFIG``, ``KRB5CCNAME``)."""
        keys = ("KRB5_CONFIG", "KRB5CCNAME")
        saved = {k: os.environ.get(k) for k in keys}
        env = self.env
        os.environ.update({k: env[k] for k in keys})
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def kinit(self, principal: str, keytab: str | os.PathLike[str]) -> None:
        """Fill the realm's default credential cache (``KRB5CCNAME``) for ``principal`` from ``keytab``."""
        self._run([_tool("kinit"), "-k", "-t", str(keytab), f"{principal}@{self.realm}"], "kinit")

    def __enter__(self) -> Kdc:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class GssapiServer:
    """The broker's half of one GSSAPI exchange (for :class:`SaslFront`): context tokens, then the
    RFC 4752 security-layer offer, then the client's choice (which must be "no security layer").

    ``step(message)`` returns ``(answer, done)`` and raises ``ValueError`` (the message goes to the
    client) when the client is refused. ``principal`` is the authenticated client once done, ``authzid``
    the authorization id it sent.
    """

    def __init__(self, keytab: str | os.PathLike[str], *, layers: int = _NO_SECURITY_LAYER) -> None:
        import gssapi

        #: The RFC 4752 layer bitmask offered (1: none, 2: integrity, 4: confidentiality).
        self.layers = layers
        self._gssapi = gssapi
        creds = gssapi.Credentials(usage="accept", store={"keytab": str(keytab)})
        self._ctx = gssapi.SecurityContext(creds=creds, usage="accept")
        self._stage = "context"
        self.principal: str | None = None
        self.authzid: str | None = None

    def _offer(self) -> bytes:
        self._stage = "layer"
        offer = bytes([self.layers]) + _MAX_MESSAGE.to_bytes(3, "big")
        return bytes(self._ctx.wrap(offer, False).message)

    def step(self, message: bytes) -> tuple[bytes, bool]:
        GSSError = self._gssapi.exceptions.GSSError
        try:
            if self._stage == "context":
                out = self._ctx.step(message)
                if not self._ctx.complete:
                    return bytes(out or b""), False
                self.principal = str(self._ctx.initiator_name)
                if out:
                    self._stage = "empty"
                    return bytes(out), False
                return self._offer(), False
            if self._stage == "empty":
                if message:
                    raise ValueError("GSSAPI: expected an empty message after the context was established")
                return self._offer(), False
            unwrapped = bytes(self._ctx.unwrap(message).message)
        except GSSError as exc:
            raise ValueError(f"GSSAPI: {exc.gen_message()}") from None
        if len(unwrapped) < 4 or unwrapped[0] != _NO_SECURITY_LAYER or not self.layers & _NO_SECURITY_LAYER:
            chosen = unwrapped[:1].hex()
            raise ValueError(f"GSSAPI: the client chose security layer {chosen}; offered: {self.layers:#04x}")
        # Kafka's broker logs the authorization id and authorizes the authenticated principal whatever
        # it says (SaslServerCallbackHandler); kafka-python and aiokafka send the service name there.
        self.authzid = unwrapped[4:].decode(errors="replace")
        return b"", True

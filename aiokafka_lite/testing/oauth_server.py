"""A real OAuth 2 authorization server for tests, built on authlib (PyPI ``authlib``), not on our code.

It grants access tokens by the client credentials grant (RFC 6749 section 4.4, client secret in
HTTP Basic or in the form) and by the jwt-bearer grant (RFC 7523: an assertion signed with the
client's private key, checked against its public key). Tokens are RFC 9068 JWTs signed RS256 with a
key made at start; ``/jwks`` publishes its public half so that a broker (the SASL front) can check
them. It runs in a child process (``python -m aiokafka_lite.testing.oauth_server CONFIG``) under
wsgiref, so tests stop it by its PID and authlib's settings stay out of the test process.

:class:`OAuthServer` starts and stops it; the config names each client's secret, token lifetime and
(for jwt-bearer) public key.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._lifecycle import Lifecycle

__all__ = ["OAuthServer", "make_rsa_key"]

LOOPBACK = "127.0.0.1"


def make_rsa_key(kind: str = "RSA") -> tuple[bytes, bytes]:
    """A fresh RSA (or ``kind="EC"``: P-256) key: (private PEM, public PEM)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    key: Any = (ec.generate_private_key(ec.SECP256R1()) if kind == "EC"
                else rsa.generate_private_key(public_exponent=65537, key_size=2048))
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public


class OAuthServer(Lifecycle):
    """The authorization server in a child process; ``clients`` maps client ids to
    ``{"secret": ..., "lifetime": seconds, "public_key": PEM text (jwt-bearer)}``.

    ``token_url``, ``jwks_url`` and ``issuer`` are known after :meth:`start`.
    """

    def __init__(self, clients: Mapping[str, Mapping[str, Any]]) -> None:
        self.clients = {k: dict(v) for k, v in clients.items()}
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="oauth-server-")

    @property
    def issuer(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def token_url(self) -> str:
        return f"{self.issuer}/token"

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/jwks"

    def start(self) -> None:
        config = Path(self._dir.name) / "config.json"
        config.write_text(json.dumps({"clients": self.clients}))
        ready = Path(self._dir.name) / "port"
        env = {**os.environ, "AUTHLIB_INSECURE_TRANSPORT": "1"}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "aiokafka_lite.testing.oauth_server", str(config), str(ready)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while not ready.exists() or not ready.read_text().strip():
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode() if self._proc.stderr else ""
                raise RuntimeError(f"the OAuth server exited: {err[-2000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the OAuth server did not start within 30 s")
            time.sleep(0.05)
        self.port = int(ready.read_text())

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(10)
        if proc is not None and proc.stderr is not None:
            proc.stderr.close()
        self._dir.cleanup()

def _serve(config_path: str, ready_path: str) -> None:  # pragma: no cover - runs in the child
    from ._oauth_app import make_app

    config = json.loads(Path(config_path).read_text())
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = make_server(LOOPBACK, 0, None, server_class=Server, handler_class=QuietHandler)  # type: ignore[call-overload]
    port = httpd.server_address[1]
    httpd.set_app(make_app(config["clients"], f"http://{LOOPBACK}:{port}"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    tmp = ready_path + ".tmp"
    Path(tmp).write_text(str(port))
    os.replace(tmp, ready_path)
    httpd.serve_forever()


if __name__ == "__main__":  # pragma: no cover
    _serve(sys.argv[1], sys.argv[2])

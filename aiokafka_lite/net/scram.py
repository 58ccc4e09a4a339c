"""SASL client mechanisms as sans-I/O state machines: PLAIN (RFC 4616) and SCRAM (RFC 5802 / 7677).

They only turn server messages into client messages; :mod:`aiokafka_lite.net.sasl` carries the
bytes over Kafka's SaslAuthenticate requests. Keeping them free of I/O lets the RFC test vectors
drive them directly. As in Kafka's own client, the password is used as its UTF-8 bytes (no
SASLprep); user names are escaped as RFC 5802 demands (``=`` -> ``=3D``, ``,`` -> ``=2C``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Mapping

from ..errors import AuthenticationFailedError, ConfigError

__all__ = ["SCRAM_HASHES", "PlainClient", "SaslClient", "ScramClient", "make_sasl_client"]

#: Kafka's SCRAM mechanisms -> hashlib names. SCRAM-SHA-1 is here only for RFC 5802's test vector.
SCRAM_HASHES: dict[str, str] = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512", "SCRAM-SHA-1": "sha1"}

#: Bounds on the server's iteration count: RFC 7677's floor, and a ceiling so that a hostile server
#: cannot make us spin for minutes in PBKDF2.
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 1_000_000


class SaslClient:
    """One authentication exchange: ``first()``, then ``step(server_bytes)`` until ``done``."""

    mechanism: str = ""
    done: bool = False

    def first(self) -> bytes:
        raise NotImplementedError

    def step(self, challenge: bytes) -> bytes | None:
        """The next client message for ``challenge``; None once the exchange is complete."""
        raise NotImplementedError


class PlainClient(SaslClient):
    """PLAIN: one message ``authzid NUL user NUL password``; the broker's empty answer ends it."""

    mechanism = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        if "\x00" in username or "\x00" in password:
            raise AuthenticationFailedError("SASL PLAIN: user name and password may not contain NUL")
        self._message = b"\x00" + username.encode() + b"\x00" + password.encode()

    def first(self) -> bytes:
        return self._message

    def step(self, challenge: bytes) -> bytes | None:
        self.done = True
        return None


def _escape_username(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


def _parse_attributes(message: str, what: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise AuthenticationFailedError(f"SCRAM: malformed {what} {message!r}")
        attrs.setdefault(key, value)
    return attrs


class ScramClient(SaslClient):
    """SCRAM client: client-first, server-first -> client-final, server-final -> verified.

    ``nonce`` is for test vectors only; by default it is 32 random URL-safe characters.
    ``extensions`` are Kafka's SCRAM extensions (e.g. ``{"tokenauth": "true"}`` for delegation tokens).
    """

    def __init__(
        self,
        mechanism: str,
        username: str,
        password: str,
        *,
        nonce: str | None = None,
        extensions: Mapping[str, str] | None = None,
    ) -> None:
        try:
            self._hash_name = SCRAM_HASHES[mechanism]
        except KeyError:
            raise AuthenticationFailedError(
                f"unsupported SCRAM mechanism {mechanism!r}; expected one of {sorted(SCRAM_HASHES)}"
            ) from None
        self.mechanism = mechanism
        self._password = password.encode()
        self._nonce = nonce if nonce is not None else secrets.token_urlsafe(24)
        ext = "".join(f",{k}={v}" for k, v in (extensions or {}).items())
        self._client_first_bare = f"n={_escape_username(username)},r={self._nonce}{ext}"
        self._server_signature: bytes | None = None
        self._stage = 0

    def _hmac(self, key: bytes, msg: bytes) -> bytes:
        return hmac.new(key, msg, self._hash_name).digest()

    def first(self) -> bytes:
        self._stage = 1
        return ("n,," + self._client_first_bare).encode()

    def step(self, challenge: bytes) -> bytes | None:
        if self._stage == 1:
            self._stage = 2
            return self._client_final(challenge)
        if self._stage == 2:
            self._stage = 3
            self._verify_server_final(challenge)
            self.done = True
            return None
        raise AuthenticationFailedError(f"{self.mechanism}: unexpected message after the exchange ended")

    def _client_final(self, server_first_bytes: bytes) -> bytes:
        try:
            server_first = server_first_bytes.decode()
        except UnicodeDecodeError:
            raise AuthenticationFailedError(f"{self.mechanism}: server-first message is not UTF-8") from None
        attrs = _parse_attributes(server_first, "server-first message")
        if "e" in attrs:
            raise AuthenticationFailedError(f"{self.mechanism}: server refused: {attrs['e']}")
        if "m" in attrs:
            raise AuthenticationFailedError(f"{self.mechanism}: server demands an unsupported extension")
        nonce, salt_b64, iter_text = attrs.get("r"), attrs.get("s"), attrs.get("i")
        if nonce is None or salt_b64 is None or iter_text is None:
            raise AuthenticationFailedError(
                f"{self.mechanism}: server-first message lacks r, s or i: {server_first!r}"
            )
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise AuthenticationFailedError(f"{self.mechanism}: server nonce does not extend ours")
        try:
            salt = base64.b64decode(salt_b64, validate=True)
            iterations = int(iter_text)
        except ValueError:
            raise AuthenticationFailedError(
                f"{self.mechanism}: bad salt or iteration count in {server_first!r}"
            ) from None
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            raise AuthenticationFailedError(
                f"{self.mechanism}: iteration count {iterations} outside {MIN_ITERATIONS}..{MAX_ITERATIONS}"
            )
        salted = hashlib.pbkdf2_hmac(self._hash_name, self._password, salt, iterations)
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self._hash_name, client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._client_first_bare},{server_first},{without_proof}".encode()
        signature = self._hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self._server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _verify_server_final(self, server_final_bytes: bytes) -> None:
        text = server_final_bytes.decode("utf-8", "replace")
        attrs = _parse_attributes(text, "server-final message")
        if "e" in attrs:
            raise AuthenticationFailedError(f"{self.mechanism}: server refused: {attrs['e']}")
        try:
            got = base64.b64decode(attrs.get("v", ""), validate=True)
        except ValueError:
            got = b""
        assert self._server_signature is not None
        if not got or not hmac.compare_digest(got, self._server_signature):
            raise AuthenticationFailedError(
                f"{self.mechanism}: the server's signature is wrong; it does not know the password"
            )


def make_sasl_client(mechanism: str, username: str | None, password: str | None) -> SaslClient:
    """The client for a ``sasl_mechanism`` setting, checking that credentials were given."""
    if username is None or password is None:
        raise ConfigError(f"SASL {mechanism} needs sasl_plain_username and sasl_plain_password")
    if mechanism == "PLAIN":
        return PlainClient(username, password)
    return ScramClient(mechanism, username, password)

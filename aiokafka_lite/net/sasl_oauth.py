"""SASL/OAUTHBEARER (KIP-255, RFC 7628): the client message, tokens, and the token cache.

The client sends one message, ``n,[a=authzid],`` + ``\\x01auth=Bearer TOKEN`` + ``\\x01key=value``
per extension + ``\\x01\\x01`` (the gs2 header of RFC 5801, then RFC 7628's key/value list; Kafka's
``OAuthBearerClientInitialResponse`` parses exactly this). A broker that accepts it answers with
empty bytes. One that refuses the token answers a JSON error (``{"status":"invalid_token"}``); RFC
7628 section 3.2.3 has the client answer that with a lone ``\\x01``, after which the broker ends the
exchange with SASL_AUTHENTICATION_FAILED and its message, which is what the user is shown.

Tokens come from a provider: the user's callable (sync or async) or a built-in fetcher of
:mod:`aiokafka_lite.net.oauth_fetch`. :class:`TokenCache` keeps one token per client and fetches the
next one once 80 % (+ up to 5 % jitter) of the current one's lifetime has passed, as the Java
client's refreshing login does (``sasl.login.refresh.window.factor`` 0.8, ``...jitter`` 0.05), so
that re-authentication (KIP-368) presents a fresh token before the broker's session, which ends
with the token, runs out. A failed refresh keeps the current token while it is still valid.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import logging
import math
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from ..errors import AuthenticationFailedError, ConfigError
from .scram import SaslClient

__all__ = [
    "REFRESH_WINDOW_FACTOR",
    "REFRESH_WINDOW_JITTER",
    "OAuthBearerClient",
    "OAuthBearerToken",
    "TokenCache",
    "jwt_expiry",
    "parse_extensions",
]

log = logging.getLogger("aiokafka_lite.net")

REFRESH_WINDOW_FACTOR = 0.8
REFRESH_WINDOW_JITTER = 0.05
_SEP = "\x01"
_EXT_KEY = re.compile(r"[A-Za-z]+")
_EXT_VALUE = re.compile(r"[\x21-\x7E \t\r\n]+")
_TOKEN = re.compile(r"[-_~+/.a-zA-Z0-9]+=*")  # RFC 6750's b64token


@dataclass(frozen=True)
class OAuthBearerToken:
    """An access token and when it stops being valid (``expires_at``: seconds since the epoch).

    ``extensions`` are SASL extensions to send with this token (merged over the configured ones).
    The token itself never appears in ``repr``.
    """

    value: str = field(repr=False)
    expires_at: float
    principal: str | None = None
    extensions: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_lifetime(cls, value: str, lifetime_s: float, **kw: Any) -> OAuthBearerToken:
        return cls(value, time.time() + lifetime_s, **kw)

    @property
    def remaining(self) -> float:
        """Seconds left before expiry (negative once expired)."""
        return self.expires_at - time.time()


#: What a token provider may return: a token, or ``(token_string, lifetime_seconds)``.
TokenLike = Union[OAuthBearerToken, tuple[str, float]]  # noqa: UP007 (a runtime alias on 3.10)
TokenProvider = Callable[[], Union[TokenLike, Awaitable[TokenLike]]]  # noqa: UP007


def _validate_extensions(extensions: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in extensions.items():
        if key == "auth" or not _EXT_KEY.fullmatch(key):
            raise ConfigError(
                f"SASL/OAUTHBEARER extension name {key!r} is invalid (letters only, not 'auth')"
            )
        if not isinstance(value, str) or not _EXT_VALUE.fullmatch(value):
            raise ConfigError(f"SASL/OAUTHBEARER extension {key!r} has an invalid value")
        out[key] = value
    return out


def parse_extensions(value: Any) -> dict[str, str]:
    """``sasl_oauthbearer_extensions``: a mapping, or ``"k=v,k=v"`` as in Java's JAAS options."""
    if value is None:
        return {}
    if isinstance(value, str):
        pairs = {}
        for item in filter(None, (s.strip() for s in value.split(","))):
            key, sep, val = item.partition("=")
            if not sep:
                raise ConfigError(f"sasl_oauthbearer_extensions: {item!r} is not key=value")
            pairs[key.strip()] = val.strip()
        return _validate_extensions(pairs)
    if isinstance(value, Mapping):
        return _validate_extensions(dict(value))
    raise ConfigError(
        f"sasl_oauthbearer_extensions must be a mapping or 'k=v,k=v', got {type(value).__name__}"
    )


def jwt_expiry(token: str) -> float | None:
    """The ``exp`` claim of a JWT, read without verifying it (only to know when to refresh)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, (int, float)) and not isinstance(exp, bool) else None


class OAuthBearerClient(SaslClient):
    """One OAUTHBEARER exchange for ``token``; ``authzid`` is RFC 5801's optional authorization id."""

    mechanism = "OAUTHBEARER"

    def __init__(
        self, token: OAuthBearerToken, extensions: Mapping[str, str] | None = None, authzid: str = ""
    ) -> None:
        if not _TOKEN.fullmatch(token.value):
            raise AuthenticationFailedError(
                "SASL/OAUTHBEARER: the token provider returned a value that is not an RFC 6750 bearer token"
            )
        self.token = token
        self._extensions = _validate_extensions({**(extensions or {}), **token.extensions})
        self._authzid = authzid.replace("=", "=3D").replace(",", "=2C")
        self._failed = False
        #: The broker's JSON error, once it refused the token.
        self.server_error: str | None = None

    def first(self) -> bytes:
        authz = f"a={self._authzid}" if self._authzid else ""
        ext = "".join(f"{_SEP}{k}={v}" for k, v in self._extensions.items())
        return f"n,{authz},{_SEP}auth=Bearer {self.token.value}{ext}{_SEP}{_SEP}".encode()

    def step(self, challenge: bytes) -> bytes | None:
        if self._failed:
            raise AuthenticationFailedError(f"the broker refused the token: {self.server_error}")
        if challenge:
            # An error (RFC 7628 3.2.2): acknowledge it with %x01 so the broker ends the exchange
            # and sends its reason in the SaslAuthenticate error.
            self._failed = True
            self.server_error = challenge.decode("utf-8", "replace")
            return _SEP.encode()
        self.done = True
        return None


class TokenCache:
    """The current token of one client, fetched through ``provider`` when due for refresh.

    Concurrent callers share one fetch. ``fetches`` counts provider calls (tests read it).
    """

    def __init__(self, provider: TokenProvider, *, what: str = "the token provider") -> None:
        # aiokafka's AbstractTokenProvider: an object whose async token() returns the string, and
        # whose extensions() returns the SASL extensions.
        if not callable(provider) and callable(getattr(provider, "token", None)):
            self._extensions_of: Callable[[], Any] | None = getattr(provider, "extensions", None)
            provider = provider.token
        else:
            self._extensions_of = None
        if not callable(provider):
            raise ConfigError("sasl_oauth_token_provider must be a callable returning a token")
        self._provider = provider
        self._what = what
        self._token: OAuthBearerToken | None = None
        self._refresh_at = 0.0
        self._pending: asyncio.Future[OAuthBearerToken] | None = None
        self.fetches = 0

    @property
    def current(self) -> OAuthBearerToken | None:
        return self._token

    async def get(self, fresh_for: float = 0.0) -> OAuthBearerToken:
        """A token not yet due for refresh (fetching one if needed).

        ``fresh_for``: also fetch anew if the current token has fewer seconds left than this (a
        re-authentication wants a token that outlasts the next session, not one about to end it).
        """
        token = self._token
        now = time.time()
        if token is not None and now < self._refresh_at and token.expires_at - now >= fresh_for:
            return token
        pending = self._pending
        if pending is None:
            pending = self._pending = asyncio.get_running_loop().create_future()
            try:
                token = await self._fetch()
            except BaseException as exc:
                self._pending = None
                old = self._token
                if old is not None and old.remaining > 0 and isinstance(exc, Exception):
                    log.warning("refreshing the OAuth token failed; the current one is kept: %s", exc)
                    pending.set_result(old)
                    return old
                pending.set_exception(exc)
                pending.exception()  # retrieved: other waiters get it too
                raise
            self._pending = None
            pending.set_result(token)
            return token
        return await asyncio.shield(pending)

    async def _fetch(self) -> OAuthBearerToken:
        self.fetches += 1
        result: Any = self._provider()
        if inspect.isawaitable(result):
            result = await result
        token = self._coerce(result)
        lifetime = token.remaining
        if lifetime < -1:
            log.warning("%s returned a token that expired %.0f s ago", self._what, -lifetime)
        share = REFRESH_WINDOW_FACTOR + random.random() * REFRESH_WINDOW_JITTER
        self._refresh_at = time.time() + max(lifetime, 0.0) * share
        self._token = token
        return token

    def _coerce(self, result: Any) -> OAuthBearerToken:
        if isinstance(result, OAuthBearerToken):
            return result
        extensions = dict(self._extensions_of() or {}) if self._extensions_of is not None else {}
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], str):
            # A JWT's own exp wins over a longer stated lifetime (exp is in whole seconds).
            expires = min(time.time() + float(result[1]), jwt_expiry(result[0]) or math.inf)
            return OAuthBearerToken(result[0], expires, extensions=extensions)
        if isinstance(result, str):
            # A bare string: its JWT "exp" claim if it has one; else asked for again on every use.
            return OAuthBearerToken(result, jwt_expiry(result) or time.time(), extensions=extensions)
        raise AuthenticationFailedError(
            f"{self._what} returned {type(result).__name__}; expected an OAuthBearerToken or "
            "(token, lifetime_seconds)"
        )

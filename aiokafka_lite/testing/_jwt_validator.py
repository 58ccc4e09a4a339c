"""The SASL front's OAUTHBEARER side: parse the client's message, check the JWT with joserfc.

Written apart from our client code (its own parser of Kafka's message grammar, an independent JOSE
library, PyPI ``joserfc``, which authlib builds on), so a client bug cannot hide behind a matching
server bug. The keys come from the authorization server's JWKS endpoint, as a broker's
``sasl.oauthbearer.jwks.endpoint.url`` does.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request

from joserfc import jwt
from joserfc.errors import ExpiredTokenError, JoseError
from joserfc.jwk import KeySet

__all__ = ["JwtValidator", "TokenRefused", "parse_client_first"]

# Kafka's OAuthBearerClientInitialResponse grammar: gs2 header, then key=value pairs each closed by
# \x01, then a final \x01.
_FIRST = re.compile(r"n,(?:a=(?P<authzid>[^,]*))?,\x01(?P<pairs>(?:[A-Za-z]+=[\x21-\x7E \t\r\n]+\x01)*)\x01")
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)")


class TokenRefused(Exception):
    """The token is not acceptable; ``args[0]`` says why (for the front's log and counters)."""


def parse_client_first(message: bytes) -> tuple[str, dict[str, str]]:
    """The bearer token and the extensions of an OAUTHBEARER client-first message."""
    m = _FIRST.fullmatch(message.decode("utf-8", "replace"))
    if m is None:
        raise TokenRefused("Invalid OAUTHBEARER client first message")
    pairs = dict(p.split("=", 1) for p in m.group("pairs").split("\x01") if p)
    auth = _AUTH.fullmatch(pairs.pop("auth", ""))
    if auth is None or auth.group("scheme").lower() != "bearer":
        raise TokenRefused("Invalid OAUTHBEARER client first message: invalid 'auth'")
    return auth.group("token"), pairs


class JwtValidator:
    """Checks RS256 JWTs against the keys at ``jwks_url``: signature, ``exp``, ``iss``."""

    def __init__(self, jwks_url: str, *, issuer: str | None = None) -> None:
        with urllib.request.urlopen(jwks_url, timeout=10) as answer:
            self.keys = KeySet.import_key_set(json.loads(answer.read()))
        self.issuer = issuer

    def validate(self, token: str) -> tuple[str, float]:
        """(principal, expiry in epoch seconds) of a valid token; TokenRefused otherwise."""
        try:
            decoded = jwt.decode(token, self.keys, algorithms=["RS256"])
            claims = {"exp": {"essential": True}, "sub": {"essential": True}}
            if self.issuer:
                claims["iss"] = {"essential": True, "value": self.issuer}  # type: ignore[dict-item]
            jwt.JWTClaimsRegistry(**claims).validate(decoded.claims)  # type: ignore[arg-type]
        except ExpiredTokenError:
            raise TokenRefused("the token has expired") from None
        except (JoseError, ValueError) as exc:
            raise TokenRefused(f"invalid token: {exc}") from None
        exp = float(decoded.claims["exp"])
        if exp <= time.time():
            raise TokenRefused("the token has expired")
        return str(decoded.claims["sub"]), exp

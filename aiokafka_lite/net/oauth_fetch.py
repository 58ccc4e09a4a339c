"""Built-in OAuth token fetching for SASL/OAUTHBEARER: client credentials (KIP-768), jwt-bearer (KIP-1139).

A token request is one HTTP/1.1 POST of a form to the token endpoint (RFC 6749 section 4.4, RFC 7523
section 2.1), so it is done here with asyncio streams and ``json`` (TLS through ``ssl``) rather than
with an HTTP library the client would otherwise not need. The connect and the answer each have their
own timeout (``sasl_login_connect_timeout_ms``, ``sasl_login_read_timeout_ms``), and every failure
is an :class:`AuthenticationFailedError` naming the endpoint and what went wrong: the refusal the
endpoint sent (``invalid_client: ...``), connection refused, or which timeout ran out.

As Java's client does, the client id and secret go in an HTTP Basic header, as they are unless
``sasl_oauthbearer_header_urlencode`` asks for them form-encoded first, as RFC 6749 section 2.3.1
says (Java's ``sasl.oauthbearer.header.urlencode``, KIP-1025, also off by default). A ``file://``
endpoint URL reads the token from that file instead (as Java's ``sasl.oauthbearer.token.endpoint.url``
allows), re-read at every refresh.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import ssl
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus, unquote, urlencode, urlsplit

from ..errors import AuthenticationFailedError, ConfigError
from .sasl_oauth import OAuthBearerToken, jwt_expiry

__all__ = ["HttpAnswer", "TokenEndpoint", "post_form", "token_provider_from_config"]

_MAX_BODY = 1 << 20
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class HttpAnswer:
    """Status code and body of an HTTP response."""

    def __init__(self, status: int, reason: str, body: bytes) -> None:
        self.status, self.reason, self.body = status, reason, body


async def post_form(
    url: str,
    form: Mapping[str, str],
    *,
    headers: Mapping[str, str] | None = None,
    ssl_context: ssl.SSLContext | None = None,
    connect_timeout: float = 10.0,
    read_timeout: float = 10.0,
) -> HttpAnswer:
    """POST ``form`` (urlencoded) to ``url``; raise :class:`AuthenticationFailedError` on any I/O failure."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"OAuth token endpoint {url!r} is not an http(s) URL")
    tls = parts.scheme == "https"
    port = parts.port or (443 if tls else 80)
    ctx = (ssl_context or ssl.create_default_context()) if tls else None
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(parts.hostname, port, ssl=ctx), connect_timeout
        )
    except asyncio.TimeoutError:
        raise AuthenticationFailedError(
            f"cannot reach the OAuth token endpoint {url}: no connection within "
            f"{round(connect_timeout * 1000)} ms (sasl_login_connect_timeout_ms)"
        ) from None
    except (OSError, ssl.SSLError) as exc:
        what = f"{os.strerror(exc.errno)} ({exc})" if exc.errno and exc.errno > 0 else str(exc)
        raise AuthenticationFailedError(f"cannot reach the OAuth token endpoint {url}: {what}") from None
    body = urlencode(form).encode()
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    lines = [f"POST {target} HTTP/1.1", f"Host: {host}", "Accept: application/json",
             "Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(body)}",
             "Connection: close", "User-Agent: aiokafka-lite"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        return await asyncio.wait_for(_read_answer(reader), read_timeout)
    except asyncio.TimeoutError:
        raise AuthenticationFailedError(
            f"the OAuth token endpoint {url} sent no complete answer within "
            f"{round(read_timeout * 1000)} ms (sasl_login_read_timeout_ms)"
        ) from None
    except (OSError, ssl.SSLError, asyncio.IncompleteReadError, ValueError) as exc:
        raise AuthenticationFailedError(f"reading the answer of the OAuth token endpoint {url} failed: "
                                        f"{exc!r}") from None
    finally:
        writer.close()


async def _read_answer(reader: asyncio.StreamReader) -> HttpAnswer:
    status_line = (await reader.readline()).decode("latin-1").strip()
    proto, _, rest = status_line.partition(" ")
    code, _, reason = rest.partition(" ")
    if not proto.startswith("HTTP/") or not code.isdigit():
        raise ValueError(f"not an HTTP response: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    while (line := (await reader.readline()).decode("latin-1").strip()):
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        chunks = []
        size_total = 0
        while (size := int((await reader.readline()).split(b";")[0].strip() or b"0", 16)) > 0:
            size_total += size
            if size_total > _MAX_BODY:
                raise ValueError("answer larger than 1 MiB")
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
        body = b"".join(chunks)
    elif "content-length" in headers:
        length = int(headers["content-length"])
        if length > _MAX_BODY:
            raise ValueError("answer larger than 1 MiB")
        body = await reader.readexactly(length)
    else:
        body = await reader.read(_MAX_BODY)
    return HttpAnswer(int(code), reason, body)


def _token_from_answer(url: str, grant: str, answer: HttpAnswer) -> OAuthBearerToken:
    try:
        data: Any = json.loads(answer.body)
    except ValueError:
        data = None
    if answer.status != 200 or not isinstance(data, dict):
        detail = ""
        if isinstance(data, dict) and "error" in data:
            detail = f": {data['error']}"
            if data.get("error_description"):
                detail += f": {data['error_description']}"
        elif answer.body:
            detail = f": {answer.body[:200].decode('utf-8', 'replace')!r}"
        raise AuthenticationFailedError(
            f"the OAuth token endpoint {url} refused the {grant} token request: "
            f"HTTP {answer.status} {answer.reason}{detail}"
        )
    token = data.get("access_token")
    if not isinstance(token, str) or not token:
        raise AuthenticationFailedError(f"the OAuth token endpoint {url} answered without an access_token")
    expires = jwt_expiry(token)
    if expires is None:
        lifetime = data.get("expires_in")
        if not isinstance(lifetime, (int, float)) or lifetime <= 0:
            raise AuthenticationFailedError(
                f"the OAuth token endpoint {url} gave neither a JWT with an exp claim nor expires_in"
            )
        expires = time.time() + float(lifetime)
    return OAuthBearerToken(token, expires)


class TokenEndpoint:
    """A token provider that asks an OAuth token endpoint (``grant``: client_credentials or jwt-bearer).

    ``assertion`` (jwt-bearer only) returns the signed client assertion to present, fresh each time.
    """

    def __init__(
        self,
        url: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        scope: str | None = None,
        assertion: Callable[[], str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 10.0,
        urlencode_header: bool = False,
    ) -> None:
        self.url = url
        self._urlencode = urlencode_header
        self.grant = "jwt-bearer" if assertion is not None else "client_credentials"
        if assertion is None and url.startswith("http") and (client_id is None or client_secret is None):
            raise ConfigError("the client_credentials grant needs sasl_oauthbearer_client_id and "
                              "sasl_oauthbearer_client_secret")
        self._client_id = client_id
        self._secret = client_secret
        self._scope = scope
        self._assertion = assertion
        self._ssl = ssl_context
        self._timeouts = (connect_timeout, read_timeout)

    def __repr__(self) -> str:
        return f"TokenEndpoint({self.url!r}, grant={self.grant!r}, client_id={self._client_id!r})"

    async def __call__(self) -> OAuthBearerToken:
        if self.url.startswith("file://"):
            return self._from_file()
        form: dict[str, str] = {}
        headers: dict[str, str] = {}
        if self._assertion is not None:
            form = {"grant_type": JWT_BEARER_GRANT, "assertion": self._assertion()}
        else:
            assert self._client_id is not None and self._secret is not None
            form = {"grant_type": "client_credentials"}
            cid, secret = self._client_id, self._secret
            if self._urlencode:
                cid, secret = quote_plus(cid), quote_plus(secret)
            pair = f"{cid}:{secret}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        if self._scope:
            form["scope"] = self._scope
        answer = await post_form(self.url, form, headers=headers, ssl_context=self._ssl,
                                 connect_timeout=self._timeouts[0], read_timeout=self._timeouts[1])
        return _token_from_answer(self.url, self.grant, answer)

    def _from_file(self) -> OAuthBearerToken:
        path = Path(unquote(urlsplit(self.url).path))
        try:
            token = path.read_text().strip()
        except OSError as exc:
            raise AuthenticationFailedError(f"cannot read the OAuth token file {path}: {exc}") from None
        expires = jwt_expiry(token)
        if expires is None:
            raise AuthenticationFailedError(f"the token in {path} is not a JWT with an exp claim")
        return OAuthBearerToken(token, expires)


def token_provider_from_config(config: Any) -> Any:
    """The token provider the settings describe: the user's callable, else a :class:`TokenEndpoint`."""
    provider = getattr(config, "sasl_oauth_token_provider", None)
    url = getattr(config, "sasl_oauthbearer_token_endpoint_url", None)
    if provider is not None:
        if url is not None:
            raise ConfigError(
                "set sasl_oauth_token_provider or sasl_oauthbearer_token_endpoint_url, not both"
            )
        return provider
    if url is None:
        raise ConfigError("SASL OAUTHBEARER needs sasl_oauth_token_provider (a callable returning a token) "
                          "or sasl_oauthbearer_token_endpoint_url")
    assertion = None
    if config.sasl_oauthbearer_assertion_file or config.sasl_oauthbearer_assertion_private_key_file:
        from .oauth_assertion import assertion_from_config

        assertion = assertion_from_config(config)
    return TokenEndpoint(
        url,
        client_id=config.sasl_oauthbearer_client_id,
        client_secret=config.sasl_oauthbearer_client_secret,
        scope=config.sasl_oauthbearer_scope,
        assertion=assertion,
        ssl_context=config.sasl_oauthbearer_ssl_context,
        connect_timeout=config.sasl_login_connect_timeout_ms / 1000,
        read_timeout=config.sasl_login_read_timeout_ms / 1000,
        urlencode_header=config.sasl_oauthbearer_header_urlencode,
    )

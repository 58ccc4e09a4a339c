"""What a new connection does before it carries requests: ApiVersions, then SASL if configured.

ApiVersions goes first (Kafka allows it before authentication) so that SaslAuthenticate's version
can be negotiated like any other API. It starts at v3 (which carries the client's name and version)
and drops to the broker's highest ApiVersions version, or v0, when the broker answers
UNSUPPORTED_VERSION (librdkafka's mock cluster refuses v3 this way).

SASL follows KIP-152: SaslHandshake v1 names the mechanism, then SaslAuthenticate requests carry the
mechanism's messages (see :mod:`aiokafka_lite.net.scram`). SaslHandshake v0, where the tokens travel
without Kafka framing, is not supported.
"""

from __future__ import annotations

import asyncio
import math
import struct
import time
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..errors import AuthenticationFailedError, ProtocolError, UnsupportedVersionError, for_code
from ..protocol import decode_response
from ..protocol.messages.api_versions import ApiVersionsRequest
from ..protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from ..protocol.messages.sasl_handshake import SaslHandshakeRequest
from .sasl_gssapi import start_gssapi
from .sasl_oauth import OAuthBearerClient, jwt_expiry
from .scram import SaslClient, make_sasl_client

if TYPE_CHECKING:
    from .connection import BrokerConnection

__all__ = ["CLIENT_SOFTWARE_NAME", "authenticate", "negotiate_api_versions"]

CLIENT_SOFTWARE_NAME = "aiokafka-lite"
_API_VERSIONS_KEY = 18
_UNSUPPORTED_VERSION = 35
_UNSUPPORTED_SASL_MECHANISM = 33
_INT16 = struct.Struct(">h")


async def negotiate_api_versions(conn: BrokerConnection) -> None:
    """Fill ``conn.api_versions`` from the broker's ApiVersions answer.

    The answer is read raw first: a broker refusing our version answers UNSUPPORTED_VERSION in a body
    that need not parse at the version we asked (Kafka sends v0; librdkafka's mock sends a body no
    version parses), so the error code, right after the correlation id, is checked before decoding.
    """
    version = min(conn.api_versions_max, ApiVersionsRequest.MAX_VERSION)
    timeout_ms = conn.settings.connect_timeout * 1000
    while True:
        request = ApiVersionsRequest(
            client_software_name=CLIENT_SOFTWARE_NAME, client_software_version=__version__
        )
        frame = await conn.send(request, version, timeout_ms=timeout_ms, raw=True)
        if len(frame) < 6:
            raise ProtocolError(f"{conn} sent an ApiVersions answer of {len(frame)} bytes")
        error_code = _INT16.unpack_from(frame, 4)[0]
        if error_code == _UNSUPPORTED_VERSION and version > 0:
            conn.api_versions_max = version = _fallback_version(frame, version)
            continue
        response: Any = decode_response(_API_VERSIONS_KEY, version, frame)[1]
        if response.error_code:
            raise for_code(response.error_code)(f"ApiVersions v{version} refused by {conn}")
        conn.api_versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        if not conn.api_versions:
            raise UnsupportedVersionError(f"{conn} answered ApiVersions with an empty list of APIs")
        return


def _fallback_version(frame: bytes, refused: int) -> int:
    """The ApiVersions version to retry with: the broker's own maximum if its v0 answer says so, else 0."""
    try:
        response: Any = decode_response(_API_VERSIONS_KEY, 0, frame)[1]
    except ProtocolError:
        return 0
    offered = [k.max_version for k in response.api_keys if k.api_key == _API_VERSIONS_KEY]
    return max(0, min(offered[0], refused - 1)) if offered else 0


async def authenticate(
    conn: BrokerConnection, *, reauth: bool = False, token_life: float = 0.0
) -> tuple[int, float]:
    """SaslHandshake + SaslAuthenticate rounds; AuthenticationFailedError says why it failed.

    Returns the session lifetime the broker gave (SaslAuthenticate v1+; 0: none), after which the
    connection must re-authenticate (``reauth=True``, KIP-368; see :mod:`aiokafka_lite.net.reauth`),
    and the loop time at which the request that the broker answered with it was written: the session
    began after that, and its answer may be read much later (a loaded broker, a late loop).
    ``token_life``: OAUTHBEARER fetches a new token unless the current one has this many seconds left.
    """
    settings = conn.settings
    mechanism = settings.sasl_mechanism
    client: SaslClient | None = None
    if settings.sasl_oauth is not None:
        oauth_token = await settings.sasl_oauth.get(fresh_for=token_life)
        client = OAuthBearerClient(oauth_token, settings.sasl_oauth_extensions)
    elif mechanism != "GSSAPI":  # GSSAPI's client is made after the handshake: it may wait for the KDC
        client = make_sasl_client(mechanism, settings.sasl_username, settings.sasl_password)
    timeout_ms = settings.connect_timeout * 1000
    handshake_version = conn.version_for(SaslHandshakeRequest)
    if handshake_version < 1:
        raise UnsupportedVersionError(
            f"{conn} offers only SaslHandshake v0 (unframed SASL tokens), which this client does not speak"
        )
    response = await conn.send(
        SaslHandshakeRequest(mechanism=mechanism), handshake_version, timeout_ms=timeout_ms, auth=True
    )
    if response.error_code == _UNSUPPORTED_SASL_MECHANISM:
        offered = list(response.mechanisms or ())
        if mechanism in offered or not offered:
            # The broker names our mechanism yet refuses it (or names none): its listener does not
            # authenticate at all, whatever the list says.
            raise AuthenticationFailedError(
                f"{conn} refused SASL mechanism {mechanism} (listed: {offered}): this listener does not "
                f"seem to enable SASL; is security_protocol={settings.security_protocol!r} right for this "
                "port (PLAINTEXT or SSL for a listener without SASL)?"
            )
        raise AuthenticationFailedError(
            f"{conn} does not enable SASL mechanism {mechanism}; it offers {offered}: set sasl_mechanism "
            "to one of those"
        )
    if response.error_code:
        raise AuthenticationFailedError(
            f"SaslHandshake for {mechanism} refused by {conn}: {for_code(response.error_code)()}"
        )
    auth_version = conn.version_for(SaslAuthenticateRequest)
    if client is None:
        # May wait for the KDC (in a thread): a connect timeout meanwhile says so.
        conn.pending_hint = "; no answer yet from the Kerberos KDC (see krb5.conf / KRB5_CONFIG)"
        gss = await start_gssapi(settings, conn.host)
        conn.pending_hint = ""
        client, subject = gss, f"principal {gss.principal!r}"
    elif settings.sasl_oauth is None:
        subject = f"user {settings.sasl_username!r}"
    else:
        subject = ""  # OAUTHBEARER: the principal is in the token
    token: bytes | None = client.first()
    lifetime_ms = 0
    subject = f" of {subject}" if subject else ""
    who = f"SASL {mechanism} {'re-' if reauth else ''}authentication{subject} with {conn}"
    loop = asyncio.get_running_loop()
    sent_at = loop.time()
    while token is not None:
        sent_at = loop.time()
        answer = await conn.send(
            SaslAuthenticateRequest(auth_bytes=token), auth_version, timeout_ms=timeout_ms, auth=True
        )
        if answer.error_code:
            reason = answer.error_message or for_code(answer.error_code).message
            raise AuthenticationFailedError(f"{who} failed: {reason}{_token_hint(client, reason)}")
        lifetime_ms = getattr(answer, "session_lifetime_ms", 0) or 0
        try:
            token = client.step(bytes(answer.auth_bytes or b""))
        except AuthenticationFailedError as exc:
            raise AuthenticationFailedError(f"{who} failed: {exc.args[0]}") from None
    return int(lifetime_ms), sent_at


def _token_hint(client: SaslClient, reason: str) -> str:
    """For a refused OAUTHBEARER token: the broker's JSON status, and whether the token had expired."""
    if not isinstance(client, OAuthBearerClient):
        return ""
    error = client.server_error
    hint = f" (broker said {error})" if error and error not in reason else ""
    now = time.time()
    expires = min(client.token.expires_at, jwt_expiry(client.token.value) or math.inf)
    if expires <= now:
        hint += f"; the token had expired {round(now - expires)} s before"
    return hint

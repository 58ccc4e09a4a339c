"""What a connection needs to know: its settings, and how to pick an API version.

Kept apart from :mod:`aiokafka_lite.net.connection` so that version choice can be used (and tested)
without a socket.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any

from .. import _debug
from ..errors import UnsupportedVersionError
from .oauth_fetch import token_provider_from_config
from .sasl_oauth import TokenCache, parse_extensions
from .tls import build_ssl_context

__all__ = ["ConnectionSettings", "choose_version"]


class ConnectionSettings:
    """The settings a connection reads, copied out of a :class:`Config` once (attribute access on
    ``Config`` is a dict lookup; the hot path reads plain slots)."""

    __slots__ = (
        "client_id",
        "connect_timeout",
        "debug",
        "idle_timeout",
        "max_frame",
        "max_in_flight",
        "rcvbuf",
        "request_timeout",
        "sasl_kerberos_domain_name",
        "sasl_kerberos_keytab",
        "sasl_kerberos_principal",
        "sasl_kerberos_service_name",
        "sasl_mechanism",
        "sasl_oauth",
        "sasl_oauth_extensions",
        "sasl_password",
        "sasl_username",
        "security_protocol",
        "sndbuf",
        "ssl_context",
    )

    def __init__(self, config: Any) -> None:
        self.client_id: str | None = config.client_id
        self.request_timeout: float = config.request_timeout_ms / 1000
        self.connect_timeout: float = config.socket_connection_setup_timeout_ms / 1000
        self.idle_timeout: float = config.connections_max_idle_ms / 1000
        self.max_in_flight: int = config.max_in_flight_requests_per_connection
        self.max_frame: int = config.receive_message_max_bytes
        self.sndbuf: int = config.send_buffer_bytes
        self.rcvbuf: int = config.receive_buffer_bytes
        self.security_protocol: str = config.security_protocol
        self.ssl_context: ssl.SSLContext | None = build_ssl_context(config)
        self.sasl_mechanism: str = config.sasl_mechanism
        self.sasl_username: str | None = config.sasl_plain_username
        self.sasl_password: str | None = config.sasl_plain_password
        self.sasl_kerberos_service_name: str = config.sasl_kerberos_service_name
        self.sasl_kerberos_domain_name: str | None = config.sasl_kerberos_domain_name
        self.sasl_kerberos_keytab: str | None = config.sasl_kerberos_keytab
        self.sasl_kerberos_principal: str | None = config.sasl_kerberos_principal
        if self.uses_sasl and self.sasl_mechanism == "GSSAPI":
            from .sasl_gssapi import require_gssapi

            require_gssapi()  # a missing optional package fails at construction, not at connect
        debug = getattr(config, "debug", None)
        #: The ``debug`` setting's contexts (``aiokafka_lite._debug``); empty when off.
        self.debug: frozenset[str] = frozenset(debug.split(",")) if debug else frozenset()
        if self.debug:
            _debug.enable(self.debug)
        #: OAUTHBEARER: the client's token cache (one per client, shared by its connections).
        self.sasl_oauth: TokenCache | None = None
        self.sasl_oauth_extensions: dict[str, str] = {}
        if self.uses_sasl and self.sasl_mechanism == "OAUTHBEARER":
            self.sasl_oauth = TokenCache(token_provider_from_config(config))
            self.sasl_oauth_extensions = parse_extensions(config.sasl_oauthbearer_extensions)

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")


def choose_version(
    broker_versions: Mapping[int, tuple[int, int]],
    request_cls: Any,
    max_version: int | None = None,
    where: str = "broker",
) -> int:
    """The highest version of ``request_cls`` that both sides know, capped at ``max_version``.

    Raises :class:`UnsupportedVersionError` naming both ranges when they do not overlap.
    """
    api_key = request_cls.API_KEY
    span = broker_versions.get(api_key)
    if span is None:
        raise UnsupportedVersionError(f"{where} does not offer {request_cls.NAME} (API key {api_key})")
    high = min(span[1], request_cls.MAX_VERSION)
    if max_version is not None:
        high = min(high, max_version)
    low = max(span[0], request_cls.MIN_VERSION)
    if high < low:
        cap = f", capped at v{max_version}" if max_version is not None else ""
        raise UnsupportedVersionError(
            f"no common version of {request_cls.NAME}: {where} offers v{span[0]}-v{span[1]}, "
            f"this client v{request_cls.MIN_VERSION}-v{request_cls.MAX_VERSION}{cap}"
        )
    return high

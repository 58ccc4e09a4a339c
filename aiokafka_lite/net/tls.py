"""The client's TLS context from its ssl_* settings, and what a failed TLS handshake means.

Built once per client (:class:`~aiokafka_lite.net.settings.ConnectionSettings`), so a wrong file,
password or PEM text is a :class:`ConfigError` naming the setting at construction, not an error on
every connection. The broker's certificate is always verified; its host name too unless
``ssl_endpoint_identification_algorithm`` is ``""`` (Kafka's way of turning the check off), which is
logged once per client because it lets anyone holding a certificate from the CA pose as the broker.
A ready ``ssl_context`` excludes the other settings: it already says all of it.
"""

from __future__ import annotations

import logging
import os
import ssl
from typing import Any

from ..errors import ConfigError

__all__ = ["TLS_DROPPED_HINT", "build_ssl_context", "tls_failure_hint"]

log = logging.getLogger("aiokafka_lite.net")

_FILE_SETTINGS = ("ssl_cafile", "ssl_cadata", "ssl_certfile", "ssl_keyfile", "ssl_password")


def build_ssl_context(config: Any) -> ssl.SSLContext | None:
    """The context for SSL / SASL_SSL connections (None for plaintext protocols)."""
    given = [name for name in _FILE_SETTINGS if getattr(config, name) is not None]
    check_hostname = config.ssl_endpoint_identification_algorithm == "https"
    if config.ssl_context is not None:
        if given or not check_hostname:
            extra = given + ([] if check_hostname else ["ssl_endpoint_identification_algorithm"])
            raise ConfigError(
                f"ssl_context cannot be combined with {', '.join(extra)}: configure the context itself "
                "(load_verify_locations, load_cert_chain, check_hostname), or leave ssl_context unset"
            )
        return config.ssl_context
    if config.security_protocol not in ("SSL", "SASL_SSL"):
        return None
    ctx = _verifying_context(config.ssl_cafile, config.ssl_cadata)
    _load_client_certificate(ctx, config.ssl_certfile, config.ssl_keyfile, config.ssl_password)
    if not check_hostname:
        ctx.check_hostname = False
        log.warning(
            "ssl_endpoint_identification_algorithm is '': broker host names are not checked against their "
            "certificates (client %s); any certificate the CA signed is accepted for any broker",
            config.client_id,
        )
    return ctx


def _verifying_context(cafile: str | None, cadata: str | None) -> ssl.SSLContext:
    if cafile is not None and not os.path.isfile(cafile):
        raise ConfigError(f"setting 'ssl_cafile': {cafile!r} is not a file")
    try:
        # No CA given: the system's trust store, as a browser would.
        return ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile, cadata=cadata)
    except (ssl.SSLError, ValueError, OSError) as exc:
        which = "ssl_cafile" if cafile is not None else "ssl_cadata"
        if cafile is not None and cadata is not None:
            which = "ssl_cafile or ssl_cadata"
        reason = _reason(exc)
        raise ConfigError(f"setting {which!r}: no PEM CA certificate could be read ({reason})") from None


def _load_client_certificate(
    ctx: ssl.SSLContext, certfile: str | None, keyfile: str | None, password: str | None
) -> None:
    if certfile is None:
        if keyfile is not None or password is not None:
            named = "ssl_keyfile" if keyfile is not None else "ssl_password"
            raise ConfigError(f"setting {named!r} needs ssl_certfile (the client certificate) as well")
        return
    for name, path in (("ssl_certfile", certfile), ("ssl_keyfile", keyfile)):
        if path is not None and not os.path.isfile(path):
            raise ConfigError(f"setting {name!r}: {path!r} is not a file")
    try:
        # A callable, so that OpenSSL never prompts on the terminal for a missing password.
        ctx.load_cert_chain(certfile, keyfile, password=lambda: password or "")
    except (ssl.SSLError, ValueError, OSError) as exc:
        # The reason is OpenSSL's (e.g. "bad decrypt"); it never contains the password or the key.
        raise ConfigError(
            f"settings 'ssl_certfile' / 'ssl_keyfile': the client certificate {certfile!r} and its key "
            f"{keyfile or certfile!r} could not be loaded ({_reason(exc)}): a PEM certificate and its "
            "private key, encrypted with ssl_password if it is set?"
        ) from None


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    return str(reason) if reason else type(exc).__name__


#: For a TLS connection closed before the broker's first answer (socat resets it without an alert).
TLS_DROPPED_HINT = (
    "; the broker ended the TLS connection before answering: it may require a client certificate "
    "(ssl_certfile, ssl_keyfile) or refuse the one given"
)


def tls_failure_hint(exc: BaseException, host: str) -> str:
    """What to change when a TLS handshake (or the first read after it) fails this way."""
    text = str(exc)
    if "Hostname mismatch" in text or "IP address mismatch" in text:
        return (f"; the broker's certificate does not name {host!r}: use a host name it holds, or set "
                "ssl_endpoint_identification_algorithm='' to skip the host name check")
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return "; the broker's certificate is not signed by a trusted CA: set ssl_cafile or ssl_cadata"
    if "CERTIFICATE_REQUIRED" in text or "HANDSHAKE_FAILURE" in text:
        return ("; the broker may require a client certificate (mutual TLS): set ssl_certfile and "
                "ssl_keyfile")
    if any(m in text for m in ("UNKNOWN_CA", "BAD_CERTIFICATE", "CERTIFICATE_UNKNOWN", "DECRYPT_ERROR")):
        return "; the broker refused the client certificate: is it signed by a CA the broker trusts?"
    return ""

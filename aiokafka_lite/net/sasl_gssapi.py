"""SASL GSSAPI (Kerberos V5, RFC 4752) as Kafka speaks it, over the ``gssapi`` package (MIT krb5).

The exchange: GSS-API context tokens until the context is established (we ask for mutual
authentication, as Kafka's Java client does; our last answer is then empty), then the broker's
wrapped 4-byte security-layer offer (a layer bitmask and a maximum message size), which we answer,
wrapped, with "no security layer" (TLS is Kafka's protection, not SASL's), size 0, and our principal
as authorization id (the Java client sends its principal too).

Credentials come from ``sasl_kerberos_keytab`` (logging in as ``sasl_kerberos_principal`` into an
in-memory cache shared by the process) or else from the default credential cache (``kinit``,
``KRB5CCNAME``). The broker is ``<sasl_kerberos_service_name>@<host>``, host being
``sasl_kerberos_domain_name`` when set. Only the first token can reach the KDC (for the initial
and the service ticket), so :func:`start_gssapi` computes it in a worker thread; the later steps
are local computations.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from typing import Any

from ..errors import AuthenticationFailedError, ConfigError
from .scram import SaslClient

__all__ = ["GssapiClient", "require_gssapi", "start_gssapi"]

_NO_SECURITY_LAYER = 0x01


def require_gssapi() -> Any:
    """The ``gssapi`` module, or a ConfigError saying how to install it."""
    try:
        import gssapi
    except ImportError:
        raise ConfigError(
            "sasl_mechanism='GSSAPI' needs the gssapi package (MIT Kerberos bindings): "
            "pip install 'aiokafka-lite[gssapi]'"
        ) from None
    return gssapi


class GssapiClient(SaslClient):
    """One GSSAPI exchange over an initiating ``gssapi.SecurityContext`` whose first token is known."""

    mechanism = "GSSAPI"

    def __init__(self, context: Any, first_token: bytes, principal: str) -> None:
        self._ctx = context
        self._first = first_token
        self.principal = principal

    def first(self) -> bytes:
        return self._first

    def step(self, challenge: bytes) -> bytes | None:
        if self.done:
            return None  # the broker's empty answer to our security-layer choice
        import gssapi

        try:
            if not self._ctx.complete:
                return bytes(self._ctx.step(challenge) or b"")
            offer = bytes(self._ctx.unwrap(challenge).message)
            if len(offer) != 4:
                raise AuthenticationFailedError(
                    f"the broker's security-layer offer has {len(offer)} bytes, RFC 4752 says 4"
                )
            if not offer[0] & _NO_SECURITY_LAYER:
                raise AuthenticationFailedError(
                    f"the broker demands a SASL security layer (offered mask {offer[0]:#04x}); this client "
                    "supports only 'no security layer' (use SASL_SSL for protection)"
                )
            answer = bytes([_NO_SECURITY_LAYER, 0, 0, 0]) + self.principal.encode()
            self.done = True
            return bytes(self._ctx.wrap(answer, False).message)
        except gssapi.exceptions.GSSError as exc:
            raise AuthenticationFailedError(_gss_message(exc)) from None


def _gss_message(exc: Any) -> str:
    """Kerberos's own reason (the minor status) first; GSS-API's generic one after it."""
    try:
        minor = "; ".join(exc.get_all_statuses(exc.min_code, False)) if exc.min_code else ""
        major = "; ".join(exc.get_all_statuses(exc.maj_code, True))
    except Exception:  # the message is a courtesy; the class name still says what failed
        return type(exc).__name__
    return f"{minor} ({major})" if minor else major


_STALE_KEYS = "the keytab's keys are not the principal's current keys (re-export it)"

#: Hints for Kerberos reasons whose cause is usually one setting or one missing step.
_HINTS = (
    ("Cannot contact any KDC", "is the KDC named in krb5.conf (KRB5_CONFIG) running and reachable?"),
    ("Server not found", "the KDC has no such service principal: check sasl_kerberos_service_name and "
                         "sasl_kerberos_domain_name"),
    ("Client not found", "the KDC does not know this principal"),
    ("Decrypt integrity check failed", _STALE_KEYS),
    ("Preauthentication failed", _STALE_KEYS),
)


def _hint(reason: str, keytab: str | None) -> str:
    if "No credentials cache found" in reason or "Matching credential not found" in reason:
        if keytab is not None:
            return "; the keytab holds no key for this principal (klist -k lists the keytab's principals)"
        return "; no ticket in the default credential cache (KRB5CCNAME): kinit, or set sasl_kerberos_keytab"
    return next((f"; {hint}" for marker, hint in _HINTS if marker in reason), "")


def _readable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.R_OK)


def _credentials(gssapi: Any, principal: str | None, keytab: str | None) -> Any:
    name = gssapi.Name(principal, gssapi.NameType.kerberos_principal) if principal else None
    if keytab is None:
        return gssapi.Credentials(name=name, usage="initiate")
    # One in-memory cache per (keytab, principal): connections of the process share its tickets.
    tag = hashlib.sha256(f"{os.path.abspath(keytab)}\0{principal}".encode()).hexdigest()[:16]
    store = {"client_keytab": keytab, "ccache": f"MEMORY:aiokafka-lite-{tag}"}
    return gssapi.Credentials(name=name, usage="initiate", store=store)


def _establish_first(
    principal: str | None, keytab: str | None, service: str, host: str
) -> tuple[Any, bytes, str]:
    gssapi = require_gssapi()
    creds = _credentials(gssapi, principal, keytab)
    target = gssapi.Name(f"{service}@{host}", gssapi.NameType.hostbased_service)
    flags = gssapi.RequirementFlag.mutual_authentication | gssapi.RequirementFlag.out_of_sequence_detection
    ctx = gssapi.SecurityContext(name=target, creds=creds, usage="initiate", flags=flags)
    token = bytes(ctx.step(None) or b"")
    return ctx, token, str(creds.name)


async def start_gssapi(settings: Any, host: str) -> GssapiClient:
    """Acquire credentials and the first context token (both may talk to the KDC) off the loop.

    AuthenticationFailedError names the principal (or the default cache) and says what Kerberos said.
    """
    principal: str | None = settings.sasl_kerberos_principal
    keytab: str | None = settings.sasl_kerberos_keytab
    service: str = settings.sasl_kerberos_service_name
    target_host: str = settings.sasl_kerberos_domain_name or host
    gssapi = require_gssapi()
    who = f"principal {principal!r}" if principal else "the default credential cache's principal"
    where = f" from keytab {keytab!r}" if keytab else ""
    failed = f"Kerberos login of {who}{where} for service {service}@{target_host} failed"
    if keytab is not None and not await asyncio.to_thread(_readable, keytab):
        raise AuthenticationFailedError(f"{failed}: the keytab is not a readable file")
    try:
        ctx, token, name = await asyncio.to_thread(_establish_first, principal, keytab, service, target_host)
    except gssapi.exceptions.GSSError as exc:
        reason = _gss_message(exc)
        raise AuthenticationFailedError(f"{failed}: {reason}{_hint(reason, keytab)}") from None
    return GssapiClient(ctx, token, name)

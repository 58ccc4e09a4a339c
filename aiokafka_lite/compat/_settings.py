"""aiokafka's constructor arguments turned into aiokafka_lite settings, with aiokafka's checks.

aiokafka refuses some settings at construction that aiokafka_lite would only refuse when connecting (an SSL
protocol without an SSL context, SASL PLAIN without credentials), and warns about ``loop=``; the compat
classes do the same here, before handing the rest to the native clients.
"""

from __future__ import annotations

import warnings
from typing import Any

#: aiokafka's "argument not given" default (``aiokafka.producer.producer._missing``): frameworks pass it
#: through for settings such as ``acks``; it means "the default" here too.
_missing: Any = object()

# Settings for which aiokafka takes None to mean "the default" (or "no limit").
_NONE_IS_DEFAULT = ("client_id", "max_poll_records", "metadata_max_age_ms", "partitioner")
# aiokafka-only arguments that tune aiokafka's own machinery and have no counterpart here.
_IGNORED = ("consumer_timeout_ms", "send_backoff_ms")
_SASL_MECHANISMS = ("PLAIN", "GSSAPI", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


def check_security(settings: dict[str, Any]) -> None:
    """aiokafka's AIOKafkaClient checks, raised as the ValueError aiokafka raises. TLS set up with
    aiokafka_lite's own ``ssl_cafile``/``ssl_certfile``/``ssl_capath`` counts as a context."""
    protocol = settings.get("security_protocol", "PLAINTEXT")
    if protocol not in ("SSL", "PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL"):
        raise ValueError("`security_protocol` should be SSL or PLAINTEXT")
    own_tls = any(settings.get(k) is not None for k in ("ssl_cafile", "ssl_certfile", "ssl_capath"))
    if protocol in ("SSL", "SASL_SSL") and settings.get("ssl_context") is None and not own_tls:
        raise ValueError("`ssl_context` is mandatory if security_protocol=='SSL'")
    if protocol.startswith("SASL_"):
        mechanism = settings.get("sasl_mechanism", "PLAIN")
        if mechanism not in _SASL_MECHANISMS:
            raise ValueError(f"sasl_mechanism {mechanism!r} is not supported; use one of {_SASL_MECHANISMS}")
        if mechanism == "PLAIN" and (settings.get("sasl_plain_username") is None
                                     or settings.get("sasl_plain_password") is None):
            raise ValueError("sasl_plain_username and sasl_plain_password required for PLAIN sasl")


def adapt(settings: dict[str, Any], renames: dict[str, str], kind: str) -> dict[str, Any]:
    """aiokafka's keyword arguments as native settings; ``kind`` names the class in warnings."""
    settings = {k: v for k, v in settings.items() if v is not _missing}
    check_security(settings)
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if key == "loop":
            if value is not None:
                warnings.warn(f"The loop argument is deprecated since 0.7.1, and scheduled for removal in "
                              f"0.9.0 (aiokafka's wording; {kind} uses the running loop)",
                              DeprecationWarning, stacklevel=3)
            continue
        if key in _IGNORED:
            continue
        if key == "api_version":
            if value not in ("auto", None):
                warnings.warn(f"api_version={value!r} is ignored: aiokafka_lite negotiates versions with "
                              "ApiVersions", stacklevel=3)
            continue
        if value is None and key in _NONE_IS_DEFAULT:
            continue
        out[renames.get(key, key)] = value
    return out


def warn_unclosed(obj: Any, kind: str) -> None:
    """aiokafka's ``__del__`` warning for a client started and never stopped."""
    if getattr(obj, "_started", False) and not getattr(obj, "_closed", True):
        warnings.warn(f"Unclosed {kind} {obj!r}", ResourceWarning, source=obj, stacklevel=2)

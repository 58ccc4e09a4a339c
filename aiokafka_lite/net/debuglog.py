"""The ``debug`` setting's request and response lines (contexts and loggers: ``aiokafka_lite._debug``).

Summaries only: API, version, correlation id, broker, size, latency, error codes. Never a field's value --
a SaslAuthenticate request carries the password, a Produce the records.
"""

from __future__ import annotations

from typing import Any

from .._debug import context_of, logger
from ..errors import for_code
from ..protocol import REQUEST_CLASSES

__all__ = ["closed", "connected", "error_codes", "request", "response"]


def error_codes(response: Any, limit: int = 8) -> str:
    """The non-zero error codes in a decoded response, with counts: "NOT_LEADER_OR_FOLLOWER(6)x3"."""
    counts: dict[int, int] = {}
    _collect(response, counts, 0)
    if not counts:
        return "none"
    parts = []
    for code, n in sorted(counts.items())[:limit]:
        name = getattr(for_code(code), "__name__", str(code))
        parts.append(f"{name}({code})" + (f"x{n}" if n > 1 else ""))
    return ",".join(parts)


def _collect(obj: Any, counts: dict[int, int], depth: int) -> None:
    if depth > 6 or obj is None or isinstance(obj, (bytes, bytearray, memoryview, str, int, float)):
        return
    if isinstance(obj, (list, tuple)):
        for item in obj:
            _collect(item, counts, depth + 1)
        return
    slots = getattr(type(obj), "__slots__", None)
    names = slots if slots else getattr(obj, "__dict__", {}).keys()
    for name in names:
        value = getattr(obj, name, None)
        if name == "error_code" and isinstance(value, int):
            if value:
                counts[value] = counts.get(value, 0) + 1
        elif isinstance(value, (list, tuple)) or hasattr(value, "__slots__"):
            _collect(value, counts, depth + 1)


def _api(api_key: int) -> str:
    try:
        return str(REQUEST_CLASSES[api_key].NAME)
    except (KeyError, IndexError):
        return f"API {api_key}"


def request(contexts: frozenset[str], conn: Any, api_key: int, version: int, corr: int, size: int,
            oneway: bool = False) -> None:
    """A request line: never the request's fields (SaslAuthenticate carries the password)."""
    ctx = context_of(api_key, contexts)
    if ctx is not None:
        logger(ctx).debug("sent %s v%d corr=%d to %s (%d bytes%s)", _api(api_key), version, corr, conn,
                          size, ", no response expected" if oneway else "")


def response(contexts: frozenset[str], conn: Any, api_key: int, version: int, corr: int, latency: float,
             decoded: Any) -> None:
    """A response line: latency and the error codes the response carries (never its data)."""
    ctx = context_of(api_key, contexts)
    if ctx is not None:
        errors = error_codes(decoded) if decoded is not None else "not decoded here"
        throttle = getattr(decoded, "throttle_time_ms", 0) or 0
        logger(ctx).debug("received %s v%d corr=%d from %s in %.1f ms, errors: %s%s", _api(api_key),
                          version, corr, conn, latency * 1000, errors,
                          f", throttled {throttle} ms" if throttle else "")


def connected(contexts: frozenset[str], conn: Any) -> None:
    if "broker" in contexts:
        logger("broker").debug("connected to %s (%d APIs offered%s)", conn, len(conn.api_versions),
                               ", SASL authenticated" if conn.settings.uses_sasl else "")


def closed(contexts: frozenset[str], conn: Any, reason: BaseException | None, in_flight: int) -> None:
    if "broker" in contexts:
        logger("broker").debug("closed %s: %s (%d requests in flight failed)", conn,
                               reason if reason is not None else "clean close", in_flight)

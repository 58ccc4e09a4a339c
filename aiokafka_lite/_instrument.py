"""The one place a client asks whether it is traced: ``telemetry_for(kind, config)``.

Clients call it once, at construction, and keep what it returns (None when nothing asked for
telemetry). Everything OpenTelemetry lives in :mod:`aiokafka_lite.otel`, imported only when a client is
actually instrumented -- globally through ``KafkaInstrumentor().instrument()`` (which registers itself
here) or per client through the ``tracer_provider`` / ``meter_provider`` settings -- so an application
without the ``[otel]`` extra never imports ``opentelemetry``, and a plain client pays nothing.

``kind`` is ``"producer"``, ``"consumer"`` or ``"share_consumer"``: a new client type calls this the
same way and drives the returned object's hooks (see :mod:`aiokafka_lite.otel.consumer`).
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["GlobalInstrumentation", "set_global", "telemetry_for"]


class GlobalInstrumentation(Protocol):
    """What ``KafkaInstrumentor.instrument()`` registers: it makes the telemetry for each new client."""

    def telemetry_for(self, kind: str, config: Any) -> Any: ...


_global: GlobalInstrumentation | None = None


def set_global(instrumentation: GlobalInstrumentation | None) -> None:
    """Install (or with None remove) the process-wide instrumentation for clients created afterwards."""
    global _global
    _global = instrumentation


def telemetry_for(kind: str, config: Any) -> Any:
    """The telemetry object for a new client, or None when it is not instrumented."""
    if (getattr(config, "tracer_provider", None) is not None
            or getattr(config, "meter_provider", None) is not None):
        from .otel import client_telemetry  # only now: the [otel] extra is needed only by who asks for it

        return client_telemetry(kind, config, _global)
    if _global is not None:
        return _global.telemetry_for(kind, config)
    return None

"""OpenTelemetry tracing and metrics for aiokafka_lite's clients (the ``[otel]`` extra).

``KafkaInstrumentor().instrument(tracer_provider=..., meter_provider=...)`` instruments every Producer and
Consumer created afterwards; ``uninstrument()`` turns it off again, for those clients too. One client
alone is instrumented by its ``tracer_provider=`` / ``meter_provider=`` settings. Only
``opentelemetry-api`` is imported; the SDK (exporters, processors, readers) is the application's.
See docs/observability.md.
"""

from __future__ import annotations

from typing import Any

from .. import _instrument
from ._common import Instruments
from .consumer import ConsumerTelemetry
from .producer import ProducerTelemetry

__all__ = ["ConsumerTelemetry", "KafkaInstrumentor", "ProducerTelemetry", "client_telemetry"]


def _make(kind: str, instruments: Instruments, config: Any) -> Any:
    if kind == "producer":
        return ProducerTelemetry(instruments, config)
    if kind in ("consumer", "share_consumer"):
        return ConsumerTelemetry(instruments, config)
    return None


def client_telemetry(kind: str, config: Any, global_instrumentation: Any = None) -> Any:
    """Telemetry for one client whose settings name its own providers (falling back, for the one not
    named, to the globally instrumented one, then to OpenTelemetry's global provider)."""
    tracer_provider = config.tracer_provider
    meter_provider = config.meter_provider
    if isinstance(global_instrumentation, _Global):
        if tracer_provider is None:
            tracer_provider = global_instrumentation.tracer_provider
        if meter_provider is None:
            meter_provider = global_instrumentation.meter_provider
    return _make(kind, Instruments(tracer_provider, meter_provider), config)


class _Global:
    """What one ``instrument()`` call registers: shared instruments for every new client."""

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.instruments = Instruments(tracer_provider, meter_provider)

    def telemetry_for(self, kind: str, config: Any) -> Any:
        return _make(kind, self.instruments, config)


class KafkaInstrumentor:
    """Instruments aiokafka_lite's clients, like the community instrumentors of other Kafka clients.

    All instances share one state (as OpenTelemetry's ``BaseInstrumentor`` does): a second
    ``instrument()`` without ``uninstrument()`` in between is ignored.
    """

    _active: _Global | None = None

    def instrument(self, *, tracer_provider: Any = None, meter_provider: Any = None, **_: Any) -> None:
        """Trace and measure every client created from now on (None: OpenTelemetry's global providers)."""
        if KafkaInstrumentor._active is not None:
            return
        active = KafkaInstrumentor._active = _Global(tracer_provider, meter_provider)
        _instrument.set_global(active)

    def uninstrument(self, **_: Any) -> None:
        """Stop: new clients are plain again, and clients instrumented by ``instrument()`` pass through."""
        active = KafkaInstrumentor._active
        if active is None:
            return
        KafkaInstrumentor._active = None
        active.instruments.enabled = False
        _instrument.set_global(None)

    @property
    def is_instrumented_by_opentelemetry(self) -> bool:
        return KafkaInstrumentor._active is not None

"""The real OpenTelemetry SDK: an in-memory span exporter and metric reader, and a span processor that
tracks spans started but not yet ended (to prove none is left open)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from aiokafka_lite.otel import KafkaInstrumentor


class OpenSpans(SpanProcessor):
    """Spans started and not yet ended, by span id."""

    def __init__(self) -> None:
        self.open: dict[int, Any] = {}

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.open[span.context.span_id] = span

    def on_end(self, span: Any) -> None:
        self.open.pop(span.context.span_id, None)


class Telemetry:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.open_spans = OpenSpans()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(self.open_spans)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def spans(self, name: str | None = None) -> list[Any]:
        return [s for s in self.exporter.get_finished_spans() if name is None or s.name == name]

    def metric_points(self, name: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        points: list[Any] = []
        for rm in data.resource_metrics if data else ():
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.name == name:
                        points.extend(m.data.data_points)
        return points

    def metric_sum(self, name: str, **attrs: Any) -> float:
        total = 0.0
        for p in self.metric_points(name):
            if all(p.attributes.get(k) == v for k, v in attrs.items()):
                total += p.value if hasattr(p, "value") else p.count
        return total


@pytest.fixture(scope="module")
def telemetry() -> Telemetry:
    return Telemetry()


@pytest.fixture
def instrumented(telemetry: Telemetry) -> Iterator[Telemetry]:
    """Every client made inside the test is instrumented (through KafkaInstrumentor)."""
    telemetry.exporter.clear()
    KafkaInstrumentor().instrument(tracer_provider=telemetry.tracer_provider,
                                   meter_provider=telemetry.meter_provider)
    try:
        yield telemetry
    finally:
        KafkaInstrumentor().uninstrument()

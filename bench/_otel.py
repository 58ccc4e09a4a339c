"""``--otel`` for the benchmarks: our clients instrumented through KafkaInstrumentor with the real SDK.

Spans go through a BatchSpanProcessor to an exporter that drops them, metrics to an in-memory reader:
the cost measured is ours plus the SDK's, as an application that exports would pay it (less the
export itself, which runs in the SDK's own thread).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def instrument() -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    from aiokafka_lite.otel import KafkaInstrumentor

    class Drop(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(Drop(), max_queue_size=65536))
    KafkaInstrumentor().instrument(tracer_provider=tracer_provider,
                                   meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]))

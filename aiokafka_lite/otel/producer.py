"""Producer telemetry: a ``send {topic}`` PRODUCER span per record, from ``send()`` to the broker's answer.

The span's context goes into the record's headers (W3C ``traceparent``, through the global propagator),
which is what the community aiokafka and confluent-kafka instrumentations read on their consumer side,
so a trace continues from our producer into their consumers (and ours). The span ends when the record's
future completes, with the partition and offset the broker assigned, or with ``error.type``.

The producer routes every ``send()`` here only while instrumented (its fast path is switched off then);
``send_many()`` gets one span for the whole call, its context injected into every record.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ._common import (
    BATCH_COUNT,
    ERROR_TYPE,
    HEADERS_SETTER,
    KEY,
    OFFSET,
    PARTITION,
    Instruments,
    base_attributes,
    key_text,
    operation_attributes,
)

__all__ = ["ProducerTelemetry"]

_monotonic = time.monotonic


class ProducerTelemetry:
    """The producer's hooks: :meth:`send` wraps one record, :meth:`send_many` one bulk call."""

    __slots__ = ("_base", "_inst", "_metric_attrs", "_span_attrs", "_tasks")

    def __init__(self, instruments: Instruments, config: Any) -> None:
        self._inst = instruments
        self._base = base_attributes(config)
        self._span_attrs: dict[str, dict[str, Any]] = {}
        #: Metric attribute sets per (topic, partition, error type), built once each, with their sent total.
        self._metric_attrs: dict[tuple[str, int, str | None], tuple[dict[str, Any], list[Any]]] = {}
        #: Waiters that end send_many spans (held so they are not collected mid-wait).
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def enabled(self) -> bool:
        return self._inst.enabled

    def _attrs_for(self, topic: str) -> dict[str, Any]:
        attrs = self._span_attrs.get(topic)
        if attrs is None:
            attrs = self._span_attrs[topic] = operation_attributes(self._base, "send", "send", topic)
        return attrs

    async def send(self, send: Callable[..., Awaitable[Any]], topic: str, value: Any, key: Any,
                   partition: int | None, timestamp_ms: int | None, headers: Any) -> Any:
        """Start the span, inject its context into a copy of ``headers``, call ``send``, end at the ack."""
        inst = self._inst
        if not inst.enabled:  # uninstrument() was called after this producer was made
            return await send(topic, value, key, partition, timestamp_ms, headers)
        attrs = self._attrs_for(topic)
        if key is not None or partition is not None:
            attrs = dict(attrs)
            if key is not None:
                attrs[KEY] = key_text(key)
            if partition is not None:
                attrs[PARTITION] = str(partition)
        span = inst.tracer.start_span(f"send {topic}", kind=SpanKind.PRODUCER, attributes=attrs)
        carrier = list(headers) if headers else []  # never change the caller's list
        propagate.inject(carrier, context=trace.set_span_in_context(span), setter=HEADERS_SETTER)
        started = _monotonic()
        try:
            fut = await send(topic, value, key, partition, timestamp_ms, carrier)
        except BaseException as exc:
            self._end(span, topic, -1, None, exc, started, 1)
            raise
        fut.add_done_callback(lambda f: self._acked(f, span, topic, started))
        return fut

    def _acked(self, fut: Any, span: Any, topic: str, started: float) -> None:
        if fut.cancelled():  # the caller stopped waiting; the span ends with the record's own outcome
            fut.follow().add_done_callback(lambda f: self._acked(f, span, topic, started))
            return
        exc = fut.exception()
        if exc is not None:
            self._end(span, topic, fut.partition, None, exc, started, 1)
        else:
            md = fut.result()
            self._end(span, topic, md.partition, md.offset, None, started, 1)

    def _end(self, span: Any, topic: str, partition: int, offset: int | None, exc: BaseException | None,
             started: float, count: int) -> None:
        error = type(exc).__qualname__ if exc is not None else None
        if span.is_recording():
            if partition >= 0:
                span.set_attribute(PARTITION, str(partition))
            if offset is not None and offset >= 0:
                span.set_attribute(OFFSET, offset)
            if exc is not None:
                span.set_attribute(ERROR_TYPE, error)
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
        span.end()
        cached = self._metric_attrs.get((topic, partition, error))
        if cached is None:
            known = partition if partition >= 0 else None
            attrs = operation_attributes(self._base, "send", "send", topic, known, error)
            cached = self._metric_attrs[(topic, partition, error)] = (attrs, self._inst.sent_total(attrs))
        cached[1][0] += count
        self._inst.operation_duration.record(_monotonic() - started, cached[0])

    async def send_many(self, send_many: Callable[..., Awaitable[Any]], topic: str, values: Sequence[Any],
                        keys: Sequence[Any] | None, partition: int | None, timestamp_ms: int | None,
                        headers: Sequence[Any] | None) -> Any:
        """One ``send {topic}`` span for the call (``messaging.batch.message_count``), injected into every
        record; it ends when the last record has its answer."""
        inst = self._inst
        if not inst.enabled:
            return await send_many(topic, values, keys, partition, timestamp_ms, headers)
        n = len(values)
        attrs = {**self._attrs_for(topic), BATCH_COUNT: n}
        if partition is not None:
            attrs[PARTITION] = str(partition)
        span = inst.tracer.start_span(f"send {topic}", kind=SpanKind.PRODUCER, attributes=attrs)
        ctx_headers: list[tuple[str, Any]] = []
        propagate.inject(ctx_headers, context=trace.set_span_in_context(span), setter=HEADERS_SETTER)
        names = {name for name, _ in ctx_headers}
        if headers is None:
            shared = tuple(ctx_headers)
            new_headers: list[Any] = [shared] * n
        else:
            new_headers = [[*(h for h in (hs or ()) if h[0] not in names), *ctx_headers] for hs in headers]
        started = _monotonic()
        part = partition if partition is not None else -1
        try:
            bulk = await send_many(topic, values, keys, partition, timestamp_ms, new_headers)
        except BaseException as exc:
            self._end(span, topic, part, None, exc, started, n)
            raise
        task = asyncio.ensure_future(self._await_bulk(bulk, span, topic, part, started, n))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return bulk

    async def _await_bulk(self, bulk: Any, span: Any, topic: str, partition: int, started: float,
                          n: int) -> None:
        try:
            await bulk
        except BaseException as exc:  # the caller learns it from the BulkFuture; here it is recorded
            self._end(span, topic, partition, None, exc, started, n)
        else:
            self._end(span, topic, partition, None, None, started, n)

"""Consumer telemetry: ``poll {topic}`` (CLIENT), ``process {topic}`` (CONSUMER), ``commit`` (CLIENT).

A record handed out alone (``getone()``, ``async for``) gets a ``process`` span that covers the
application's handling of it: it starts when the record is returned, is made the current span (so what
the handler does -- a send, a database call -- is its child), and ends when the next record is asked for,
on ``poll()``, or at ``stop()``. Its parent is the producer's context read from the record's headers
(``traceparent``), when there is one; the trace then runs from the producer through Kafka into the
handler. ``poll()`` returns many records at once: its span links to each record's producer context.

Any consumer type drives the same hooks (``poll``, ``getone``, ``commit``, ``close``), each taking the
plain method to call: a share consumer uses this class as it is (``kind="share_consumer"``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from opentelemetry import context, propagate, trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from ._common import (
    BATCH_COUNT,
    ERROR_TYPE,
    GROUP,
    HEADERS_GETTER,
    KEY,
    OFFSET,
    Instruments,
    base_attributes,
    key_text,
    operation_attributes,
)

__all__ = ["ConsumerTelemetry"]

_monotonic = time.monotonic
#: Most links one poll span carries (the SDK's default span limit is 128 as well).
_MAX_LINKS = 128


def _producer_context(headers: Any) -> Any:
    """The span context a producer injected into ``headers``, or None."""
    if not headers:
        return None
    ctx = trace.get_current_span(propagate.extract(headers, getter=HEADERS_GETTER)).get_span_context()
    return ctx if ctx.is_valid else None


class ConsumerTelemetry:
    """Per-consumer state: at most one open ``process`` span (the record being handled)."""

    __slots__ = ("_base", "_consumed", "_inst", "_metric_attrs", "_open", "_poll_name")

    def __init__(self, instruments: Instruments, config: Any, poll_name: str = "poll") -> None:
        self._inst = instruments
        base = base_attributes(config)
        group = getattr(config, "group_id", None)
        if group:
            base[GROUP] = group
        self._base = base
        self._poll_name = poll_name
        #: (span, context attached for it, when it started, its metric attributes) while a record is handled
        self._open: tuple[Any, Any, Any, float, dict[str, Any]] | None = None
        self._metric_attrs: dict[tuple[str, str, int | None, str | None], dict[str, Any]] = {}
        #: The shared consumed-records totals per (operation, topic, partition).
        self._consumed: dict[tuple[str, str, int], list[Any]] = {}

    @property
    def enabled(self) -> bool:
        return self._inst.enabled

    def _attrs(self, operation: str, topic: str | None, partition: int | None = None,
               error: str | None = None) -> dict[str, Any]:
        """Metric attributes, built once per combination."""
        cache_key = (operation, topic or "", partition, error)
        attrs = self._metric_attrs.get(cache_key)
        if attrs is None:
            kind = "process" if operation == "process" else "settle" if operation == "commit" else "receive"
            attrs = self._metric_attrs[cache_key] = operation_attributes(self._base, operation, kind, topic,
                                                                         partition, error)
        return attrs

    def _count(self, operation: str, topic: str, partition: int, n: int) -> None:
        total = self._consumed.get((operation, topic, partition))
        if total is None:
            total = self._consumed[(operation, topic, partition)] = self._inst.consumed_total(
                self._attrs(operation, topic, partition))
        total[0] += n

    # -- the record being handled -------------------------------------------------------------------

    def end_process(self) -> None:
        """The application is done with the record it had (it asks for more, polls, or stops)."""
        handled = self._open
        if handled is None:
            return
        self._open = None
        span, ctx, token, started, attrs = handled
        if context.get_current() is ctx:  # only where it was attached: another task has its own context
            context.detach(token)
        span.end()
        self._inst.process_duration.record(_monotonic() - started, attrs)

    def start_process(self, record: Any) -> None:
        """Open the ``process`` span of ``record``, current until :meth:`end_process`."""
        inst = self._inst
        topic, partition = record.topic, record.partition
        self._count("process", topic, partition, 1)
        parent = _producer_context(record.headers)
        attrs = {**self._attrs("process", topic, partition), OFFSET: record.offset}
        if record.key is not None:
            attrs[KEY] = key_text(record.key)
        span = inst.tracer.start_span(
            f"process {topic}", context=trace.set_span_in_context(trace.NonRecordingSpan(parent))
            if parent is not None else None, kind=SpanKind.CONSUMER, attributes=attrs)
        ctx = trace.set_span_in_context(span)
        token = context.attach(ctx)
        self._open = (span, ctx, token, _monotonic(), self._attrs("process", topic, partition))

    async def getone(self, getone: Callable[..., Awaitable[Any]], *partitions: Any) -> Any:
        self.end_process()
        record = await getone(*partitions)
        if self._inst.enabled:
            self.start_process(record)
        return record

    # -- batches ---------------------------------------------------------------------------------------

    async def poll(self, poll: Callable[..., Awaitable[Mapping[Any, Any]]], *args: Any, **kwargs: Any
                   ) -> Mapping[Any, Any]:
        """A ``poll`` span when records came (or it failed), linked to each record's producer context."""
        self.end_process()
        inst = self._inst
        if not inst.enabled:
            return await poll(*args, **kwargs)
        started = _monotonic()
        start_ns = time.time_ns()
        try:
            result = await poll(*args, **kwargs)
        except BaseException as exc:
            error = type(exc).__qualname__
            attrs = self._attrs(self._poll_name, None, None, error)
            inst.operation_duration.record(_monotonic() - started, attrs)
            span = inst.tracer.start_span(self._poll_name, kind=SpanKind.CLIENT, start_time=start_ns,
                                          attributes=attrs)
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, str(exc)))
            span.end()
            raise
        topics = {tp.topic for tp in result}
        topic = next(iter(topics)) if len(topics) == 1 else None
        inst.operation_duration.record(_monotonic() - started, self._attrs(self._poll_name, topic))
        if not result:
            return result
        total = 0
        links: list[Link] = []
        for tp, records in result.items():
            n = len(records)
            total += n
            self._count(self._poll_name, tp.topic, tp.partition, n)
            if len(links) < _MAX_LINKS and isinstance(records, list):
                for record in records:
                    ctx = _producer_context(record.headers)
                    if ctx is not None:
                        links.append(Link(ctx))
                        if len(links) >= _MAX_LINKS:
                            break
        attrs = {**self._attrs(self._poll_name, topic), BATCH_COUNT: total}
        name = f"{self._poll_name} {topic}" if topic else self._poll_name
        span = inst.tracer.start_span(name, kind=SpanKind.CLIENT, start_time=start_ns, attributes=attrs,
                                      links=links)
        span.end()
        return result

    # -- commits ---------------------------------------------------------------------------------------

    async def commit(self, commit: Callable[..., Awaitable[Any]], offsets: Any) -> Any:
        inst = self._inst
        if not inst.enabled:
            return await commit(offsets)
        topics = {tp.topic for tp in offsets} if offsets else set()
        topic = next(iter(topics)) if len(topics) == 1 else None
        started = _monotonic()
        with inst.tracer.start_as_current_span("commit", kind=SpanKind.CLIENT,
                                               attributes=self._attrs("commit", topic),
                                               record_exception=False, set_status_on_exception=False) as span:
            try:
                result = await commit(offsets)
            except BaseException as exc:
                error = type(exc).__qualname__
                span.set_attribute(ERROR_TYPE, error)
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                inst.operation_duration.record(_monotonic() - started,
                                               self._attrs("commit", topic, None, error))
                raise
        inst.operation_duration.record(_monotonic() - started, self._attrs("commit", topic))
        return result

    def close(self) -> None:
        """The consumer stops: the record being handled is done."""
        self.end_process()

"""What the producer's and the consumer's telemetry share: attribute names, instruments, header carriers.

Attribute and metric names are OpenTelemetry's messaging semantic conventions (v1.x, Kafka), written out
here so that only ``opentelemetry-api`` is needed (the semantic-conventions package is not).
"""

from __future__ import annotations

import weakref
from collections.abc import MutableSequence, Sequence
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.propagators import textmap

from .._version import __version__

__all__ = ["HEADERS_GETTER", "HEADERS_SETTER", "Instruments", "base_attributes", "key_text",
           "operation_attributes"]

SYSTEM = "messaging.system"
OPERATION_NAME = "messaging.operation.name"
OPERATION_TYPE = "messaging.operation.type"
DESTINATION = "messaging.destination.name"
PARTITION = "messaging.destination.partition.id"
OFFSET = "messaging.kafka.offset"
KEY = "messaging.kafka.message.key"
GROUP = "messaging.consumer.group.name"
BATCH_COUNT = "messaging.batch.message_count"
CLIENT_ID = "messaging.client.id"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

#: The semantic conventions' advice for messaging duration histograms (seconds).
_DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)


class Instruments:
    """A tracer and the four messaging metrics, from the given providers (None: the global ones).

    ``enabled`` is shared by every client made from one ``instrument()`` call, so that ``uninstrument()``
    turns their telemetry off too (they then pass straight through).
    """

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        self.enabled = True
        self.tracer = trace.get_tracer("aiokafka_lite", __version__, tracer_provider=tracer_provider)
        meter = metrics.get_meter("aiokafka_lite", __version__, meter_provider=meter_provider)
        self.operation_duration = meter.create_histogram(
            "messaging.client.operation.duration", unit="s",
            description="Duration of a messaging operation (send until acknowledged, poll, commit).",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS)
        self.process_duration = meter.create_histogram(
            "messaging.process.duration", unit="s",
            description="Duration of the application's processing of a record handed out by getone().",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS)
        self._counters = _counters(meter_provider, meter)

    def sent_total(self, attributes: dict[str, Any]) -> list[Any]:
        """The running total ``[count, attributes]`` of records sent with ``attributes``, shared by every
        client with the same attributes; a client keeps it and adds to ``[0]``."""
        return _total(self._counters.sent, attributes)

    def consumed_total(self, attributes: dict[str, Any]) -> list[Any]:
        return _total(self._counters.consumed, attributes)


class _Counters:
    """The message counters of one meter provider, kept as plain totals per attribute set and reported
    when the SDK collects (asynchronous counters: the same cumulative sums an exporter sees from a
    counter), so that counting a record is an integer addition instead of an SDK measurement. One per
    provider: the SDK keeps the first registration of an instrument name and ignores later callbacks."""

    def __init__(self, meter: Any) -> None:
        self.sent: dict[frozenset[tuple[str, Any]], list[Any]] = {}
        self.consumed: dict[frozenset[tuple[str, Any]], list[Any]] = {}
        meter.create_observable_counter(
            "messaging.client.sent.messages", callbacks=[lambda _options: _observe(self.sent)],
            unit="{message}",
            description="Records the producer sent (counted when the broker answered or the send failed).")
        meter.create_observable_counter(
            "messaging.client.consumed.messages", callbacks=[lambda _options: _observe(self.consumed)],
            unit="{message}", description="Records the consumer handed to the application.")


_COUNTERS: weakref.WeakKeyDictionary[Any, _Counters] = weakref.WeakKeyDictionary()
_GLOBAL_COUNTERS: list[_Counters] = []


def _counters(meter_provider: Any, meter: Any) -> _Counters:
    if meter_provider is None:  # OpenTelemetry's global provider (a proxy until one is set)
        if not _GLOBAL_COUNTERS:
            _GLOBAL_COUNTERS.append(_Counters(meter))
        return _GLOBAL_COUNTERS[0]
    counters = _COUNTERS.get(meter_provider)
    if counters is None:
        counters = _COUNTERS[meter_provider] = _Counters(meter)
    return counters


def _total(totals: dict[frozenset[tuple[str, Any]], list[Any]], attributes: dict[str, Any]) -> list[Any]:
    key = frozenset(attributes.items())
    entry = totals.get(key)
    if entry is None:
        entry = totals[key] = [0, dict(attributes)]
    return entry


def _observe(totals: dict[frozenset[tuple[str, Any]], list[Any]]) -> list[metrics.Observation]:
    return [metrics.Observation(n, attrs) for n, attrs in list(totals.values())]


def base_attributes(config: Any) -> dict[str, Any]:
    """Attributes of every span and metric of one client."""
    attrs: dict[str, Any] = {SYSTEM: "kafka"}
    client_id = getattr(config, "client_id", None)
    if client_id:
        attrs[CLIENT_ID] = client_id
    servers = getattr(config, "bootstrap_servers", None)
    if servers:
        host, port = servers[0]
        attrs[SERVER_ADDRESS] = host
        attrs[SERVER_PORT] = port
    return attrs


def operation_attributes(base: dict[str, Any], name: str, kind: str, topic: str | None = None,
                         partition: int | None = None, error: str | None = None) -> dict[str, Any]:
    """One operation's span or metric attributes: the client's (``base``), the operation's name and type,
    and its topic, partition and error type where there are some."""
    attrs = {**base, OPERATION_NAME: name, OPERATION_TYPE: kind}
    if topic is not None:
        attrs[DESTINATION] = topic
    if partition is not None:
        attrs[PARTITION] = str(partition)
    if error is not None:
        attrs[ERROR_TYPE] = error
    return attrs


def key_text(key: Any) -> str:
    """A record key as the conventions want it: a string (bytes decoded, undecodable bytes escaped)."""
    if isinstance(key, bytes):
        return key.decode("utf-8", "backslashreplace")
    return str(key)


class _HeadersGetter(textmap.Getter[Sequence[tuple[str, Any]]]):
    """Reads W3C trace context from Kafka record headers: ``(str, bytes)`` pairs, as the community
    aiokafka and confluent-kafka instrumentations write them (the value is the UTF-8 text)."""

    def get(self, carrier: Sequence[tuple[str, Any]], key: str) -> list[str] | None:
        for name, value in carrier:
            if name == key and value is not None:
                return [value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray))
                        else str(value)]
        return None

    def keys(self, carrier: Sequence[tuple[str, Any]]) -> list[str]:
        return [name for name, _ in carrier]


class _HeadersSetter(textmap.Setter[MutableSequence[tuple[str, Any]]]):
    def set(self, carrier: MutableSequence[tuple[str, Any]], key: str, value: str) -> None:
        # A header of the same name (a context injected upstream) is replaced, not duplicated: readers take
        # the first match, which must be ours.
        for i, (name, _) in enumerate(carrier):
            if name == key:
                carrier[i] = (key, value.encode())
                return
        carrier.append((key, value.encode()))


HEADERS_GETTER = _HeadersGetter()
HEADERS_SETTER = _HeadersSetter()

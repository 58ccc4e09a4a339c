"""OTLP metrics payloads (opentelemetry-proto ``MetricsData``), encoded by hand for KIP-714 pushes.

KIP-714 carries client metrics to the broker as a serialized ``MetricsData`` message. We need only a
handful of its messages (resource, scope, gauge and sum of number data points), so they are written
here from the .proto definitions (opentelemetry/proto/metrics/v1/metrics.proto and
common/v1/common.proto) instead of pulling protobuf into every install. Field numbers are facts of
those files; tests decode our bytes with the official ``opentelemetry-proto`` classes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["TEMPORALITY_CUMULATIVE", "TEMPORALITY_DELTA", "Point", "encode_metrics_data"]

#: AggregationTemporality enum values.
TEMPORALITY_DELTA = 1
TEMPORALITY_CUMULATIVE = 2

_pack_double = struct.Struct("<d").pack
_pack_u64 = struct.Struct("<Q").pack
_pack_i64 = struct.Struct("<q").pack


@dataclass
class Point:
    """One metric data point: a gauge, or a monotonic sum when ``monotonic``."""

    name: str
    value: float | int
    attributes: Mapping[str, str] = field(default_factory=dict)
    monotonic: bool = False
    start_ns: int = 0
    time_ns: int = 0


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _tag(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _len_field(number: int, payload: bytes) -> bytes:
    return _tag(number, 2) + _varint(len(payload)) + payload


def _str_field(number: int, text: str) -> bytes:
    return _len_field(number, text.encode())


def _key_value(key: str, value: str) -> bytes:
    any_value = _str_field(1, value)  # AnyValue.string_value = 1
    return _str_field(1, key) + _len_field(2, any_value)  # KeyValue.key = 1, value = 2


def _data_point(p: Point) -> bytes:
    out = bytearray()
    if p.start_ns:
        out += _tag(2, 1) + _pack_u64(p.start_ns)  # start_time_unix_nano (fixed64)
    out += _tag(3, 1) + _pack_u64(p.time_ns)  # time_unix_nano (fixed64)
    if isinstance(p.value, int) and not isinstance(p.value, bool):
        out += _tag(6, 1) + _pack_i64(p.value)  # as_int (sfixed64)
    else:
        out += _tag(4, 1) + _pack_double(float(p.value))  # as_double
    for k, v in p.attributes.items():
        out += _len_field(7, _key_value(k, v))  # attributes
    return bytes(out)


def _metric(name: str, points: list[Point], temporality: int) -> bytes:
    body = b"".join(_len_field(1, _data_point(p)) for p in points)  # data_points = 1
    out = _str_field(1, name)  # Metric.name
    if points[0].monotonic:
        body += _tag(2, 0) + _varint(temporality)  # Sum.aggregation_temporality
        body += _tag(3, 0) + _varint(1)  # Sum.is_monotonic
        return out + _len_field(7, body)  # Metric.sum = 7
    return out + _len_field(5, body)  # Metric.gauge = 5


def encode_metrics_data(points: Iterable[Point], resource: Mapping[str, str], scope_name: str,
                        scope_version: str, temporality: int) -> bytes:
    """A ``MetricsData`` with one resource and one scope; points of one name form one metric."""
    by_name: dict[str, list[Point]] = {}
    for p in points:
        by_name.setdefault(p.name, []).append(p)
    scope = _str_field(1, scope_name) + _str_field(2, scope_version)  # InstrumentationScope
    scope_metrics = _len_field(1, scope) + b"".join(
        _len_field(2, _metric(name, pts, temporality)) for name, pts in by_name.items())
    res = b"".join(_len_field(1, _key_value(k, v)) for k, v in resource.items())  # Resource.attributes
    resource_metrics = _len_field(1, res) + _len_field(2, scope_metrics)
    return _len_field(1, resource_metrics)  # MetricsData.resource_metrics = 1

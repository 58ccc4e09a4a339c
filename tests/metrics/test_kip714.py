"""KIP-714: pushes reach librdkafka's mock cluster with the subscribed metrics; brokers without the
APIs see nothing; our OTLP bytes decode with the official opentelemetry-proto classes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.proto.metrics.v1 import metrics_pb2

from aiokafka_lite import Consumer, Producer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import InvalidRecordError, UnknownSubscriptionIdError
from aiokafka_lite.metrics.kip714 import telemetry_name
from aiokafka_lite.metrics.otlp import TEMPORALITY_DELTA, Point, encode_metrics_data


def _names(lines: list[str]) -> set[str]:
    # Lines read "[thrd:mock]: mock:0/internal: string value: NAME".
    return {line.split("string value: ", 1)[1] for line in lines if "string value: " in line}


def _values(lines: list[str], name: str) -> list[float]:
    """The data point values the mock logged after each occurrence of metric ``name``."""
    out, current = [], None
    for line in lines:
        if "string value: " in line:
            current = line.split("string value: ", 1)[1]
        elif "NumberDataPoint" in line and current == name:
            out.append(float(line.split("value: ", 1)[1].split()[0]))
    return out


async def _wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def test_java_telemetry_names() -> None:
    assert telemetry_name("producer-metrics", "record-send-rate") == \
        "org.apache.kafka.producer.record.send.rate"
    assert telemetry_name("producer-node-metrics", "request-latency-avg") == \
        "org.apache.kafka.producer.node.request.latency.avg"
    assert telemetry_name("consumer-fetch-manager-metrics", "records-lag-max") == \
        "org.apache.kafka.consumer.fetch.manager.records.lag.max"


def test_otlp_payload_decodes_with_opentelemetry_proto() -> None:
    points = [
        Point("org.apache.kafka.producer.record.send.total", 42, {"topic": "t"}, monotonic=True,
              start_ns=1_000, time_ns=2_000),
        Point("org.apache.kafka.producer.record.send.total", 7, {"topic": "u"}, monotonic=True,
              start_ns=1_000, time_ns=2_000),
        Point("org.apache.kafka.producer.request.latency.avg", 1.5, time_ns=2_000),
    ]
    data = encode_metrics_data(points, {"client_id": "c1"}, "aiokafka_lite", "0.1.0", TEMPORALITY_DELTA)
    md = metrics_pb2.MetricsData.FromString(data)
    (rm,) = md.resource_metrics
    assert [(a.key, a.value.string_value) for a in rm.resource.attributes] == [("client_id", "c1")]
    (sm,) = rm.scope_metrics
    assert (sm.scope.name, sm.scope.version) == ("aiokafka_lite", "0.1.0")
    total, latency = sm.metrics
    assert total.name == "org.apache.kafka.producer.record.send.total" and total.WhichOneof("data") == "sum"
    assert total.sum.is_monotonic and total.sum.aggregation_temporality == 1  # DELTA
    assert [(p.as_int, p.attributes[0].value.string_value, p.start_time_unix_nano, p.time_unix_nano)
            for p in total.sum.data_points] == [(42, "t", 1_000, 2_000), (7, "u", 1_000, 2_000)]
    assert latency.WhichOneof("data") == "gauge" and latency.gauge.data_points[0].as_double == 1.5


@pytest.mark.asyncio
async def test_pushes_reach_the_mock_with_the_subscribed_metrics(mock_cluster: Any) -> None:
    mc = mock_cluster(1)
    mc.create_topic("tele", 2)
    mc.set_telemetry_metrics(["org.apache.kafka.producer.topic.", "org.apache.kafka.producer.record.send"])
    mc.set_telemetry_push_interval(200)
    p = Producer(bootstrap_servers=mc.bootstrap, client_id="tele-p")
    await p.start()
    try:
        for i in range(10):
            await p.send("tele", b"v%d" % i, partition=0)
        await p.flush()
        pusher = p._hub.pusher
        assert pusher is not None
        await _wait_for(lambda: pusher.pushes >= 3)
        assert pusher.client_instance_id is not None  # the mock handed one out
    finally:
        await p.stop()
    lines = mc.telemetry_log()
    names = _names(lines)
    assert {"org.apache.kafka.producer.topic.record.send.total",
            "org.apache.kafka.producer.topic.byte.rate",
            "org.apache.kafka.producer.record.send.rate",
            "org.apache.kafka.producer.record.send.total"} <= names
    # Only the subscribed prefixes: no request latency, no connection count, no consumer metrics.
    assert all(n.startswith(("org.apache.kafka.producer.topic.", "org.apache.kafka.producer.record.send"))
               for n in names if n.startswith("org.apache.kafka."))
    assert "tele" in names and "tele-p" in names  # the topic attribute and the client_id resource attribute
    # The mock asks for delta temporality: over all pushes the deltas of record-send-total add up to the
    # 10 records (cumulative values would repeat 10 in every push after the flush).
    sends = _values(lines, "org.apache.kafka.producer.record.send.total")
    assert len(sends) >= 3 and sum(sends) == 10, sends
    assert any(line.endswith("Metric type: 0") for line in lines)  # sums
    assert any(line.endswith("Metric type: 1") for line in lines)  # and gauges


@pytest.mark.asyncio
async def test_terminating_push_on_close(mock_cluster: Any) -> None:
    mc = mock_cluster(1)
    mc.create_topic("tele2", 1)
    mc.set_telemetry_metrics([""])  # everything
    mc.set_telemetry_push_interval(3_600_000)  # no periodic push within the test
    c = Consumer("tele2", bootstrap_servers=mc.bootstrap, client_id="tele-c")
    await c.start()
    try:
        await c.poll(timeout_ms=300)
        pusher = c._hub.pusher
        assert pusher is not None
        await _wait_for(lambda: pusher.client_instance_id is not None)
        assert pusher.pushes == 0 and mc.telemetry_log() == []
    finally:
        await c.stop()
    assert pusher.pushes == 1  # the terminating one
    names = _names(mc.telemetry_log())
    assert "org.apache.kafka.consumer.fetch.manager.fetch.total" in names
    assert "org.apache.kafka.consumer.io.wait.ratio" in names


@pytest.mark.asyncio
async def test_no_subscription_means_no_push(mock_cluster: Any) -> None:
    mc = mock_cluster(1)
    mc.create_topic("tele3", 1)
    mc.set_telemetry_push_interval(100)  # no metrics requested: the mock's default
    async with Producer(bootstrap_servers=mc.bootstrap) as p:
        await p.send_and_wait("tele3", b"x")
        pusher = p._hub.pusher
        assert pusher is not None
        await _wait_for(lambda: pusher.client_instance_id is not None)
        await asyncio.sleep(0.5)
    assert pusher.pushes == 0 and mc.telemetry_log() == []


@pytest.mark.asyncio
async def test_disabled_or_unsupported_push_is_silent(tansu: EmbeddedBroker, mock_cluster: Any,
                                                      new_topic: Callable[..., str]) -> None:
    # Tansu 0.6 offers GetTelemetrySubscriptions but not PushTelemetry: nothing is sent, nothing fails.
    async with Producer(bootstrap_servers=tansu.bootstrap) as p:
        await p.send_and_wait(new_topic(), b"x")
        pusher = p._hub.pusher
        assert pusher is not None
        await asyncio.sleep(0.3)
        assert pusher.client_instance_id is None and pusher.pushes == 0
    mc = mock_cluster(1)
    mc.create_topic("tele4", 1)
    mc.set_telemetry_metrics([""])
    mc.set_telemetry_push_interval(100)
    async with Producer(bootstrap_servers=mc.bootstrap, enable_metrics_push=False) as p:
        await p.send_and_wait("tele4", b"x")
        assert p._hub.pusher is None
        await asyncio.sleep(0.4)
    assert mc.telemetry_log() == []


GET_SUBSCRIPTIONS, PUSH = 71, 72


@pytest.mark.asyncio
async def test_unknown_subscription_id_fetches_the_subscription_again(mock_cluster: Any) -> None:
    mc = mock_cluster(1)
    mc.create_topic("tele5", 1)
    mc.set_telemetry_metrics(["org.apache.kafka.producer.record"])
    mc.set_telemetry_push_interval(150)
    async with Producer(bootstrap_servers=mc.bootstrap) as p:
        pusher = p._hub.pusher
        assert pusher is not None
        await _wait_for(lambda: pusher.pushes >= 1)
        mc.start_request_tracking()
        mc.push_request_errors(PUSH, [UnknownSubscriptionIdError])
        pushes = pusher.pushes
        await _wait_for(lambda: pusher.pushes >= pushes + 2)
        kinds = [r.api_key for r in mc.requests()]
    # The refused push, then at once a new GetTelemetrySubscriptions, then pushes again.
    first_push = kinds.index(PUSH)
    assert kinds[first_push + 1] == GET_SUBSCRIPTIONS and PUSH in kinds[first_push + 2:]


@pytest.mark.asyncio
async def test_a_refused_push_stops_telemetry_without_failing_the_client(mock_cluster: Any) -> None:
    mc = mock_cluster(1)
    mc.create_topic("tele6", 1)
    mc.set_telemetry_metrics([""])
    mc.set_telemetry_push_interval(100)
    async with Producer(bootstrap_servers=mc.bootstrap) as p:
        pusher = p._hub.pusher
        assert pusher is not None
        mc.start_request_tracking()
        mc.push_request_errors(PUSH, [InvalidRecordError])
        await _wait_for(lambda: pusher._task is not None and pusher._task.done())
        assert pusher.pushes == 0
        md = await p.send_and_wait("tele6", b"still fine")
        assert md.offset == 0
    # One refused push and nothing after it, not even the terminating push on close.
    assert [r.api_key for r in mc.requests()].count(PUSH) == 1

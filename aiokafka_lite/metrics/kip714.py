"""KIP-714: push this client's metrics to a broker that subscribes to them.

The client asks one broker (GetTelemetrySubscriptions) which metrics it wants, by name prefix, how
often, and in which compressions; then pushes (PushTelemetry) an OTLP ``MetricsData`` payload each
interval, and a last one marked ``terminating`` when it closes. A broker without these APIs, or
one that subscribes to nothing, costs one request at most. Telemetry never fails the client: broker
refusals end or pause it, with a log line saying why (Java and librdkafka behave the same way).

Metric names follow Java's telemetry naming (``TelemetryMetricNamingConvention``):
``org.apache.kafka.`` + the group without ``-metrics`` + the name, ``-`` becoming ``.``; tags become
point attributes with ``-`` as ``_``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from .._tasks import cancel_and_wait
from ..errors import (
    KafkaError,
    TelemetryTooLargeError,
    UnknownSubscriptionIdError,
    UnsupportedVersionError,
    for_code,
)
from ..protocol.messages.get_telemetry_subscriptions import GetTelemetrySubscriptionsRequest
from ..protocol.messages.push_telemetry import PushTelemetryRequest
from ..records import compress
from .monitor import Entry
from .otlp import TEMPORALITY_CUMULATIVE, TEMPORALITY_DELTA, Point, encode_metrics_data

__all__ = ["TelemetryPusher", "telemetry_name"]

log = logging.getLogger("aiokafka_lite.metrics")

#: Compression types we can produce, by Kafka's id (gzip, snappy, lz4, zstd).
_CODECS = (1, 2, 3, 4)
_SCOPE = "aiokafka_lite"


def telemetry_name(group: str, name: str) -> str:
    """Java's KIP-714 name for a metric: ``producer-node-metrics`` / ``request-rate`` ->
    ``org.apache.kafka.producer.node.request.rate``."""
    g = group.lower().replace("-", ".").replace(".metrics", "")
    return f"org.apache.kafka.{g}.{name.lower().replace('-', '.')}"


class _Subscription:
    __slots__ = ("codec", "delta", "id", "interval", "max_bytes", "prefixes")

    def __init__(self, response: Any) -> None:
        self.id: int = response.subscription_id
        self.interval = max(response.push_interval_ms, 100) / 1000.0
        self.max_bytes: int = response.telemetry_max_bytes
        self.delta: bool = response.delta_temporality
        self.prefixes: list[str] = list(response.requested_metrics)
        self.codec = next((c for c in response.accepted_compression_types if c in _CODECS), 0)

    def wants(self, name: str) -> bool:
        return any(name.startswith(p) for p in self.prefixes)  # [""] selects every metric


class TelemetryPusher:
    """One client's KIP-714 loop. ``snapshot()`` gives the client's metrics; ``resource`` the
    resource attributes (client_id, group_id, ...)."""

    def __init__(self, client: Any, snapshot: Callable[[], list[Entry]], resource: Mapping[str, str],
                 version: str) -> None:
        self._client = client
        self._snapshot = snapshot
        self._resource = dict(resource)
        self._version = version
        self._instance_id = uuid.UUID(int=0)
        self._sub: _Subscription | None = None
        self._node: int | None = None
        self._last: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self._last_push_ns = time.time_ns()
        self._task: asyncio.Task[None] | None = None
        #: Pushes the broker accepted (for tests and the stats command).
        self.pushes = 0

    @property
    def client_instance_id(self) -> uuid.UUID | None:
        """The id the broker gave this client (None until it answered)."""
        return None if self._instance_id.int == 0 else self._instance_id

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self, timeout: float) -> None:
        """Stop pushing; send the terminating push if a subscription is active (bounded by ``timeout``)."""
        task, self._task = self._task, None
        await cancel_and_wait(task)
        sub, node = self._sub, self._node
        if sub is not None and node is not None and sub.prefixes:
            try:
                await asyncio.wait_for(self._push(node, sub, terminating=True), timeout)
            except (KafkaError, asyncio.TimeoutError) as exc:
                log.debug("terminating telemetry push failed: %s", exc)

    async def _run(self) -> None:
        try:
            await self._loop()
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug here must not take the client down; say so and stop pushing
            log.exception("client telemetry (KIP-714) stopped")

    async def _loop(self) -> None:
        client = self._client
        first = True
        while True:
            try:
                node = self._node if self._node is not None else await client.any_ready_node()
                try:
                    client.api_version(node, GetTelemetrySubscriptionsRequest)
                    client.api_version(node, PushTelemetryRequest)
                except UnsupportedVersionError:
                    log.debug("node %s does not offer KIP-714 telemetry; not pushing metrics", node)
                    return
                self._node = node
                sub = await self._subscribe(node)
            except KafkaError as exc:
                self._node = None
                log.debug("telemetry subscription failed: %s", exc)
                await asyncio.sleep(30.0)
                continue
            if sub is None:
                return
            if not sub.prefixes:  # nothing wanted now; ask again after the interval
                await asyncio.sleep(sub.interval)
                continue
            # KIP-714: the first push waits a random 0.5-1.5 intervals, so clients do not push in step.
            await asyncio.sleep(sub.interval * (random.uniform(0.5, 1.5) if first else 1.0))
            first = False
            try:
                await self._push(node, sub, terminating=False)
            except UnknownSubscriptionIdError:
                continue  # the broker's subscriptions changed: ask again at once
            except TelemetryTooLargeError as exc:
                log.warning("the broker refused a telemetry push as too large: %s", exc)
            except KafkaError as exc:
                if not getattr(exc, "retriable", False) and getattr(exc, "errno", None) is not None:
                    log.warning("the broker refused client telemetry (%s); no more pushes", exc)
                    self._sub = None  # not even the terminating one
                    return
                self._node = None
                log.debug("telemetry push failed: %s", exc)

    async def _subscribe(self, node: int) -> _Subscription | None:
        response = await self._client.send(
            node, GetTelemetrySubscriptionsRequest(client_instance_id=self._instance_id))
        if response.error_code:
            error = for_code(response.error_code)
            if error.retriable:
                raise error(f"GetTelemetrySubscriptions: {error.message}")
            log.warning("the broker refused client telemetry: %s", error.message)
            self._sub = None
            return None
        self._instance_id = response.client_instance_id
        sub = _Subscription(response)
        if self._sub is None or sub.id != self._sub.id:
            self._last.clear()
        self._sub = sub
        return sub

    def payload(self, sub: _Subscription, now_ns: int) -> bytes:
        """The OTLP bytes of the metrics ``sub`` selects (uncompressed)."""
        points: list[Point] = []
        last = self._last
        start = self._last_push_ns
        for e in self._snapshot():
            value = e["value"]
            if value is None:
                continue
            name = telemetry_name(e["group"], e["name"])
            if not sub.wants(name):
                continue
            attrs = {k.replace("-", "_"): str(v) for k, v in e["tags"].items() if k != "client-id"}
            if e["name"].endswith("-total"):
                key = (name, tuple(sorted(attrs.items())))
                prev = last.get(key, 0)
                last[key] = value
                points.append(Point(name, value - prev if sub.delta else value, attrs, monotonic=True,
                                    start_ns=start, time_ns=now_ns))
            else:
                points.append(Point(name, value, attrs, time_ns=now_ns))
        return encode_metrics_data(points, self._resource, _SCOPE, self._version,
                                   TEMPORALITY_DELTA if sub.delta else TEMPORALITY_CUMULATIVE)

    async def _push(self, node: int, sub: _Subscription, *, terminating: bool) -> None:
        now_ns = time.time_ns()
        data = self.payload(sub, now_ns)
        codec = sub.codec
        if codec:
            data = compress(codec, data)
        if sub.max_bytes and len(data) > sub.max_bytes:
            raise TelemetryTooLargeError(
                f"{len(data)} bytes of metrics, over the broker's telemetry_max_bytes={sub.max_bytes}; "
                "narrow the subscription's metric prefixes")
        response = await self._client.send(node, PushTelemetryRequest(
            client_instance_id=self._instance_id, subscription_id=sub.id, terminating=terminating,
            compression_type=codec, metrics=data))
        if response.error_code:
            error = for_code(response.error_code)
            raise error(f"PushTelemetry: {error.message}")
        self._last_push_ns = now_ns
        self.pushes += 1

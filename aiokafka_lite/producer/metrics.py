"""Producer metrics: plain counters updated per batch and per request, never per record.

Counting per batch keeps ``send()`` free of bookkeeping. ``Producer.metrics()`` turns the counters into
the figures Kafka's producer reports: the flat dict of lifetime figures (record-send-total, byte-total,
batch-size-avg, ...) and, with ``tagged=True``, Java's groups (``producer-metrics``,
``producer-node-metrics``, ``producer-topic-metrics``) with windowed rates, built by :func:`collect`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..metrics.monitor import Feed, Totals

if TYPE_CHECKING:
    from .accumulator import RecordAccumulator

__all__ = ["ProducerMetrics", "TopicCounters", "collect"]

_G = "producer-metrics"
_NODE = "producer-node-metrics"
_TOPIC = "producer-topic-metrics"


class TopicCounters:
    """One topic's totals (producer-topic-metrics)."""

    __slots__ = ("bytes", "compressed", "errors", "records", "retries", "uncompressed")

    def __init__(self) -> None:
        self.records = 0
        self.bytes = 0
        self.compressed = 0
        self.uncompressed = 0
        self.errors = 0
        self.retries = 0


class ProducerMetrics:
    """Running totals kept by the Sender; read with :meth:`snapshot` or :func:`collect`."""

    __slots__ = (
        "batch_retries",
        "batch_splits",
        "batches_failed",
        "batches_sent",
        "bytes_sent",
        "compressed_bytes",
        "epoch_bumps",
        "latency",
        "latency_max",
        "metadata_requests",
        "nodes",
        "record_retries",
        "records_failed",
        "records_sent",
        "requests",
        "requests_in_flight",
        "topics",
        "uncompressed_bytes",
    )

    def __init__(self) -> None:
        self.records_sent = 0
        self.records_failed = 0
        self.record_retries = 0
        self.batches_sent = 0
        self.batches_failed = 0
        self.batch_retries = 0
        self.bytes_sent = 0
        self.compressed_bytes = 0
        self.uncompressed_bytes = 0
        self.requests = 0
        self.requests_in_flight = 0
        self.metadata_requests = 0
        self.epoch_bumps = 0
        self.batch_splits = 0
        self.latency = Totals()
        self.latency_max = 0.0
        #: Per node id: produce request latencies (producer-node-metrics).
        self.nodes: dict[int, Totals] = {}
        #: Per topic: totals (producer-topic-metrics).
        self.topics: dict[str, TopicCounters] = {}

    def on_response(self, latency: float, node: int) -> None:
        self.latency.add(latency)
        if latency > self.latency_max:
            self.latency_max = latency
        per_node = self.nodes.get(node)
        if per_node is None:
            per_node = self.nodes[node] = Totals()
        per_node.add(latency)

    def topic(self, topic: str) -> TopicCounters:
        counters = self.topics.get(topic)
        if counters is None:
            counters = self.topics[topic] = TopicCounters()
        return counters

    def snapshot(self, *, buffer_total: int, buffer_available: int, waiting_senders: int,
                 queued_batches: int) -> dict[str, Any]:
        """A dict of the lifetime figures (latencies in ms, ratios as floats)."""
        batches = self.batches_sent
        responses = self.latency.count
        return {
            "record-send-total": self.records_sent,
            "record-error-total": self.records_failed,
            "record-retry-total": self.record_retries,
            "batch-retry-total": self.batch_retries,
            "batch-send-total": batches,
            "batch-error-total": self.batches_failed,
            "byte-total": self.bytes_sent,
            "batch-size-avg": self.compressed_bytes / batches if batches else 0.0,
            "records-per-batch-avg": self.records_sent / batches if batches else 0.0,
            "compression-rate-avg": (self.compressed_bytes / self.uncompressed_bytes
                                     if self.uncompressed_bytes else 1.0),
            "request-total": self.requests,
            "response-total": responses,
            "requests-in-flight": self.requests_in_flight,
            "request-latency-avg": 1000 * self.latency.total / responses if responses else 0.0,
            "request-latency-max": 1000 * self.latency_max,
            "buffer-total-bytes": buffer_total,
            "buffer-available-bytes": buffer_available,
            "waiting-threads": waiting_senders,
            "queued-batches": queued_batches,
            "metadata-request-total": self.metadata_requests,
            "epoch-bump-total": self.epoch_bumps,
            "batch-split-total": self.batch_splits,
        }


def collect(feed: Feed, m: ProducerMetrics, acc: RecordAccumulator | None, buffer_memory: int) -> None:
    """Emit the producer's groups, as the Java producer names them, into ``feed``."""
    feed.total(_G, "record-send", m.records_sent)
    feed.total(_G, "record-error", m.records_failed)
    feed.total(_G, "record-retry", m.record_retries)
    feed.total(_G, "byte", m.bytes_sent)
    feed.total(_G, "request", m.requests)
    feed.total(_G, "response", m.latency.count)
    feed.avg_max(_G, "request-latency", m.latency, scale=1000.0)
    feed.ratio(_G, "batch-size-avg", m.compressed_bytes, m.batches_sent)
    feed.ratio(_G, "records-per-request-avg", m.records_sent, m.latency.count)
    feed.ratio(_G, "compression-rate-avg", m.compressed_bytes, m.uncompressed_bytes)
    feed.gauge(_G, "requests-in-flight", m.requests_in_flight)
    feed.gauge(_G, "buffer-total-bytes", acc.pool.total if acc is not None else buffer_memory)
    feed.gauge(_G, "buffer-available-bytes", acc.pool.available if acc is not None else buffer_memory)
    feed.gauge(_G, "waiting-threads", acc.pool.queued if acc is not None else 0)
    feed.time_ratio(_G, "bufferpool-wait-ratio", acc.pool.wait_seconds if acc is not None else 0.0)
    for node, lat in list(m.nodes.items()):
        tags = {"node-id": f"node-{node}"}
        feed.total(_NODE, "request", lat.count, tags)
        feed.avg_max(_NODE, "request-latency", lat, tags, scale=1000.0)
    for topic, t in list(m.topics.items()):
        tags = {"topic": topic}
        feed.total(_TOPIC, "record-send", t.records, tags)
        feed.total(_TOPIC, "byte", t.bytes, tags)
        feed.total(_TOPIC, "record-error", t.errors, tags)
        feed.total(_TOPIC, "record-retry", t.retries, tags)
        feed.ratio(_TOPIC, "compression-rate", t.compressed, t.uncompressed, tags)

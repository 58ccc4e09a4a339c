"""Producer metrics: plain counters updated per batch and per request, never per record.

Counting per batch keeps ``send()`` free of bookkeeping; ``Producer.metrics()`` turns the counters into
the figures Kafka's producer reports (record-send-total, byte-total, batch-size-avg,
compression-rate-avg, request-latency-avg/max, requests-in-flight, buffer-available-bytes,
record-retry-total, record-error-total).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ProducerMetrics"]


class ProducerMetrics:
    """Running totals kept by the Sender; read with :meth:`snapshot`."""

    __slots__ = (
        "batch_retries",
        "batch_splits",
        "batches_failed",
        "batches_sent",
        "bytes_sent",
        "compressed_bytes",
        "epoch_bumps",
        "latency_max",
        "latency_sum",
        "metadata_requests",
        "record_retries",
        "records_failed",
        "records_sent",
        "requests",
        "requests_in_flight",
        "responses",
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
        self.responses = 0
        self.requests_in_flight = 0
        self.metadata_requests = 0
        self.epoch_bumps = 0
        self.batch_splits = 0
        self.latency_sum = 0.0
        self.latency_max = 0.0

    def on_response(self, latency: float) -> None:
        self.responses += 1
        self.latency_sum += latency
        if latency > self.latency_max:
            self.latency_max = latency

    def snapshot(self, *, buffer_total: int, buffer_available: int, waiting_senders: int,
                 queued_batches: int) -> dict[str, Any]:
        """A dict of the current figures (latencies in ms, ratios as floats)."""
        batches = self.batches_sent
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
            "response-total": self.responses,
            "requests-in-flight": self.requests_in_flight,
            "request-latency-avg": 1000 * self.latency_sum / self.responses if self.responses else 0.0,
            "request-latency-max": 1000 * self.latency_max,
            "buffer-total-bytes": buffer_total,
            "buffer-available-bytes": buffer_available,
            "waiting-threads": waiting_senders,
            "queued-batches": queued_batches,
            "metadata-request-total": self.metadata_requests,
            "epoch-bump-total": self.epoch_bumps,
            "batch-split-total": self.batch_splits,
        }

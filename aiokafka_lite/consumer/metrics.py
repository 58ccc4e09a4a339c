"""Consumer metrics: plain counters and windowed rates, read with ``Consumer.metrics()``.

Names follow the Java consumer's fetch-manager and coordinator metrics (``records-consumed-total`` becomes
``records_consumed_total``) so dashboards built for Java clients map over one to one. Updating a metric is an
attribute increment on the hot path; rates and averages are computed only when read. :func:`collect` gives
Java's own names and groups (``Consumer.metrics(tagged=True)``), windowed by ``metrics.monitor``.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from ..metrics.monitor import Feed, Totals
from ..structs import TopicPartition

_G = "consumer-metrics"
_FETCH = "consumer-fetch-manager-metrics"
_COORD = "consumer-coordinator-metrics"


class _Latency(Totals):
    __slots__ = ("max", "recent")

    def __init__(self) -> None:
        super().__init__()
        self.max = 0.0
        self.recent: deque[tuple[float, float]] = deque(maxlen=256)

    def record(self, seconds: float) -> None:
        self.add(seconds)
        if seconds > self.max:
            self.max = seconds
        self.recent.append((time.monotonic(), seconds))

    def window(self, now: float, window: float) -> tuple[float, float]:
        """(average ms, max ms) over the last ``window`` seconds; (0, 0) without samples."""
        vals = [s for t, s in self.recent if now - t <= window]
        if not vals:
            return 0.0, 0.0
        return 1000.0 * sum(vals) / len(vals), 1000.0 * max(vals)


class ConsumerMetrics:
    """Counters the fetcher, coordinator and poll() update; :meth:`snapshot` renders them."""

    WINDOW = 30.0

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.records_consumed = 0
        self.bytes_consumed = 0
        self.fetch_requests = 0
        self.fetch_errors = 0
        self.fetch_bytes = 0
        self.fetch_latency = _Latency()
        self.full_fetches = 0
        self.incremental_fetches = 0
        self.rebalances = 0
        self.failed_rebalances = 0
        self.rebalance_latency = _Latency()
        self.last_rebalance: float | None = None
        self.commits = 0
        self.commit_latency = _Latency()
        self.heartbeats = 0
        self.last_heartbeat: float | None = None
        self.last_poll: float | None = None
        self._consumed_marks: deque[tuple[float, int, int]] = deque(maxlen=512)
        #: Per topic: [records, bytes] consumed (consumer-fetch-manager-metrics with a topic tag).
        self.topics: dict[str, list[int]] = {}

    def topic_consumed(self, topic: str, records: int, nbytes: int) -> None:
        """Per-topic totals, counted per partition chunk handed out (never per record)."""
        counts = self.topics.get(topic)
        if counts is None:
            counts = self.topics[topic] = [0, 0]
        counts[0] += records
        counts[1] += nbytes

    def record_consumed(self, records: int, nbytes: int) -> None:
        self.records_consumed += records
        self.bytes_consumed += nbytes
        now = time.monotonic()
        marks = self._consumed_marks
        if not marks or now - marks[-1][0] >= 0.1 or nbytes:  # rates need no finer grain
            marks.append((now, self.records_consumed, self.bytes_consumed))

    def _rates(self, now: float) -> tuple[float, float]:
        marks = [m for m in self._consumed_marks if now - m[0] <= self.WINDOW]
        if not marks:
            return 0.0, 0.0
        t0 = marks[0][0]
        span = max(now - t0, 1e-3) if len(marks) > 1 else max(now - self.started, 1e-3)
        first_records = marks[0][1] if len(marks) > 1 else 0
        first_bytes = marks[0][2] if len(marks) > 1 else 0
        return (self.records_consumed - first_records) / span, (self.bytes_consumed - first_bytes) / span

    def snapshot(self, lags: dict[TopicPartition, int | None]) -> dict[str, Any]:
        now = time.monotonic()
        rec_rate, byte_rate = self._rates(now)
        fetch_avg, fetch_max = self.fetch_latency.window(now, self.WINDOW)
        reb_avg, reb_max = self.rebalance_latency.window(now, 3600.0)
        com_avg, com_max = self.commit_latency.window(now, self.WINDOW)
        known = [v for v in lags.values() if v is not None]
        return {
            "records_consumed_total": self.records_consumed,
            "bytes_consumed_total": self.bytes_consumed,
            "records_consumed_rate": rec_rate,
            "bytes_consumed_rate": byte_rate,
            "fetch_total": self.fetch_requests,
            "fetch_errors_total": self.fetch_errors,
            "fetch_latency_avg_ms": fetch_avg,
            "fetch_latency_max_ms": fetch_max,
            "fetch_sessions_full_total": self.full_fetches,
            "fetch_sessions_incremental_total": self.incremental_fetches,
            # "topic-partition" keys, so that the whole snapshot is JSON-encodable (issue 15)
            "records_lag": {f"{tp.topic}-{tp.partition}": lag for tp, lag in lags.items()},
            "records_lag_max": max(known) if known else None,
            "rebalance_total": self.rebalances,
            "failed_rebalance_total": self.failed_rebalances,
            "rebalance_latency_avg_ms": reb_avg,
            "rebalance_latency_max_ms": reb_max,
            "last_rebalance_seconds_ago": None if self.last_rebalance is None else now - self.last_rebalance,
            "commit_total": self.commits,
            "commit_latency_avg_ms": com_avg,
            "commit_latency_max_ms": com_max,
            "heartbeat_total": self.heartbeats,
            "last_heartbeat_seconds_ago": None if self.last_heartbeat is None else now - self.last_heartbeat,
            "last_poll_seconds_ago": None if self.last_poll is None else now - self.last_poll,
        }


def _ago(now: float, then: float | None) -> float | None:
    return None if then is None else now - then


def collect(feed: Feed, m: ConsumerMetrics, lags: dict[TopicPartition, int | None],
            leads: dict[TopicPartition, int | None]) -> None:
    """Emit the consumer's groups, as the Java consumer names them, into ``feed``."""
    now = time.monotonic()
    feed.gauge(_G, "last-poll-seconds-ago", _ago(now, m.last_poll))
    feed.total(_FETCH, "records-consumed", m.records_consumed)
    feed.total(_FETCH, "bytes-consumed", m.bytes_consumed)
    feed.total(_FETCH, "fetch", m.fetch_requests)
    feed.total(_FETCH, "fetch-error", m.fetch_errors)
    feed.avg_max(_FETCH, "fetch-latency", m.fetch_latency, scale=1000.0)
    feed.ratio(_FETCH, "fetch-size-avg", m.fetch_bytes, m.fetch_requests)
    known_lags = [v for v in lags.values() if v is not None]
    known_leads = [v for v in leads.values() if v is not None]
    feed.gauge(_FETCH, "records-lag-max", max(known_lags) if known_lags else None)
    feed.gauge(_FETCH, "records-lead-min", min(known_leads) if known_leads else None)
    for topic, (records, nbytes) in list(m.topics.items()):
        feed.total(_FETCH, "records-consumed", records, {"topic": topic})
        feed.total(_FETCH, "bytes-consumed", nbytes, {"topic": topic})
    for tp, lag in lags.items():
        tags = {"topic": tp.topic, "partition": str(tp.partition)}
        feed.gauge(_FETCH, "records-lag", lag, tags)
        feed.gauge(_FETCH, "records-lead", leads.get(tp), tags)
    feed.total(_COORD, "commit", m.commits)
    feed.avg_max(_COORD, "commit-latency", m.commit_latency, scale=1000.0)
    feed.total(_COORD, "rebalance", m.rebalances)
    feed.total(_COORD, "failed-rebalance", m.failed_rebalances)
    feed.avg_max(_COORD, "rebalance-latency", m.rebalance_latency, scale=1000.0)
    feed.gauge(_COORD, "last-rebalance-seconds-ago", _ago(now, m.last_rebalance))
    feed.total(_COORD, "heartbeat", m.heartbeats)
    feed.gauge(_COORD, "last-heartbeat-seconds-ago", _ago(now, m.last_heartbeat))

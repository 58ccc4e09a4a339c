"""Per-client metrics: Java's names, groups and tags, computed from counters the clients keep.

The clients' hot paths only add to plain counters (per batch, per request, per fetch, never per
record). A :class:`ClientMonitor` reads them once a second and on every :meth:`ClientMonitor.snapshot`,
feeding the differences into windowed stats (:mod:`.stats`), so rates and averages follow Java's
``metrics.sample.window.ms`` / ``metrics.num.samples`` semantics without any timing on the hot path.
The same task measures the event loop: its lag behind a 1 s sleep, and the share of wall time the
loop's thread spent off the CPU (``io-wait-ratio``: waiting for I/O or timers, as Java's selector
thread reports it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from .._tasks import cancel_and_wait
from .stats import Windowed

__all__ = ["ClientMonitor", "Entry", "Feed", "Totals"]

log = logging.getLogger("aiokafka_lite.metrics")

#: One metric: ``{"group": ..., "name": ..., "tags": {...}, "value": float | int | None}``.
Entry = dict[str, Any]

_TagKey = tuple[tuple[str, str], ...]


class Totals:
    """Cumulative count and sum of some measure (a latency, a size) plus its peak since last read."""

    __slots__ = ("count", "peak", "total")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.peak = 0.0

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        if value > self.peak:
            self.peak = value


class Feed:
    """Builds one snapshot's entries and keeps the windowed state between snapshots."""

    def __init__(self, client_id: str, window: float, num_samples: int) -> None:
        self.client_id = client_id
        self.window = window
        self.num_samples = num_samples
        self.now = time.monotonic()
        self.entries: list[Entry] = []
        self._stats: dict[tuple[str, str, _TagKey], Windowed] = {}
        self._last: dict[tuple[str, str, _TagKey], tuple[float, float]] = {}

    def begin(self, now: float) -> None:
        self.now = now
        self.entries = []

    def _tags(self, tags: dict[str, str] | None) -> dict[str, str]:
        out = {"client-id": self.client_id}
        if tags:
            out.update(tags)
        return out

    def _stat(self, key: tuple[str, str, _TagKey]) -> Windowed:
        stat = self._stats.get(key)
        if stat is None:
            stat = self._stats[key] = Windowed(self.window, self.num_samples, self.now)
        return stat

    def _delta(self, key: tuple[str, str, _TagKey], count: float, total: float) -> tuple[float, float]:
        last_count, last_total = self._last.get(key, (0.0, 0.0))
        self._last[key] = (count, total)
        return count - last_count, total - last_total

    def emit(self, group: str, name: str, value: Any, tags: dict[str, str] | None = None) -> None:
        self.entries.append({"group": group, "name": name, "tags": self._tags(tags), "value": value})

    gauge = emit

    def total(self, group: str, base: str, total: float, tags: dict[str, str] | None = None) -> None:
        """``base-total`` and its windowed ``base-rate`` (per second)."""
        key = (group, base, tuple(sorted(tags.items())) if tags else ())
        _, delta = self._delta(key, 0, total)
        stat = self._stat(key)
        if delta:
            stat.record(delta, self.now)
        self.emit(group, f"{base}-rate", stat.rate(self.now), tags)
        self.emit(group, f"{base}-total", total, tags)

    def avg_max(self, group: str, base: str, totals: Totals, tags: dict[str, str] | None = None,
                scale: float = 1.0, with_max: bool = True) -> None:
        """Windowed ``base-avg`` and ``base-max`` of the values added to ``totals`` (times ``scale``)."""
        key = (group, base, tuple(sorted(tags.items())) if tags else ())
        count, total = self._delta(key, totals.count, totals.total)
        stat = self._stat(key)
        if count:
            stat.record(total * scale, self.now, int(count), totals.peak * scale)
            totals.peak = 0.0
        self.emit(group, f"{base}-avg", stat.avg(self.now), tags)
        if with_max:
            self.emit(group, f"{base}-max", stat.max(self.now), tags)

    def ratio(self, group: str, name: str, numerator: float, denominator: float,
              tags: dict[str, str] | None = None, *, emit: bool = True) -> float | None:
        """Windowed ratio of two growing totals (e.g. compressed / uncompressed bytes)."""
        key = (group, name, tuple(sorted(tags.items())) if tags else ())
        den, num = self._delta(key, denominator, numerator)
        stat = self._stat(key)
        if den:
            stat.record(num, self.now, den)  # the sample's count carries the denominator
        live_den = stat.count(self.now)
        value = stat.total(self.now) / live_den if live_den else None
        if emit:
            self.emit(group, name, value, tags)
        return value

    def time_ratio(self, group: str, name: str, seconds_total: float,
                   tags: dict[str, str] | None = None) -> None:
        """Share of wall time spent in some state, from the growing total of seconds spent in it."""
        key = (group, name, tuple(sorted(tags.items())) if tags else ())
        _, delta = self._delta(key, 0, seconds_total)
        stat = self._stat(key)
        stat.record(delta, self.now)
        self.emit(group, name, min(stat.rate(self.now), 1.0), tags)


class ClientMonitor:
    """Owns a client's :class:`Feed` and the once-a-second task that samples counters and the loop.

    ``collect(feed)`` is the client's part: it emits its groups from its own counters.
    ``connections()`` gives (open, created, closed) connection counts.
    """

    TICK = 1.0

    def __init__(self, client_type: str, client_id: str, *, window_ms: int, num_samples: int,
                 collect: Callable[[Feed], None],
                 connections: Callable[[], tuple[int, int, int]] | None = None) -> None:
        self.client_type = client_type
        self.group = "admin-client-metrics" if client_type == "admin" else f"{client_type}-metrics"
        self.feed = Feed(client_id, window_ms / 1000.0, num_samples)
        self._collect = collect
        self._connections = connections
        self._lag = Totals()
        self._cpu = 0.0
        self._wall = 0.0
        self._task: asyncio.Task[None] | None = None
        self._thread: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._mark = (0.0, 0.0)

    def start(self) -> None:
        if self._task is None:
            self._loop = asyncio.get_running_loop()
            self._thread = threading.get_ident()
            self._mark = (time.perf_counter(), time.thread_time())
            self._task = self._loop.create_task(self._run())

    async def close(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task)

    def _account_loop_time(self) -> None:
        """Add the loop thread's CPU and wall time since the last mark (on the loop's thread only:
        ``thread_time`` measures the calling thread, and a Prometheus scrape runs on another)."""
        if threading.get_ident() != self._thread:
            return
        wall, cpu = time.perf_counter(), time.thread_time()
        self._wall += wall - self._mark[0]
        self._cpu += cpu - self._mark[1]
        self._mark = (wall, cpu)

    async def _run(self) -> None:
        while True:
            wall0 = time.perf_counter()
            await asyncio.sleep(self.TICK)
            self._lag.add(max(time.perf_counter() - wall0 - self.TICK, 0.0))
            try:
                self._snapshot()
            except Exception:  # a bug in a collector must not stop the client; it is reported
                log.exception("collecting %s metrics failed", self.client_type)

    def snapshot(self, timeout: float = 5.0) -> list[Entry]:
        """Every metric of the client now, as JSON-encodable entries.

        Called from another thread (a Prometheus scrape), the work is handed to the client's event
        loop and awaited there, so the counters and the windowed state are only touched by the loop.
        """
        loop = self._loop
        if (loop is not None and self._thread is not None and threading.get_ident() != self._thread
                and loop.is_running()):
            done: concurrent.futures.Future[list[Entry]] = concurrent.futures.Future()

            def run() -> None:
                try:
                    done.set_result(self._snapshot())
                except BaseException as exc:
                    done.set_exception(exc)

            loop.call_soon_threadsafe(run)
            return done.result(timeout)
        return self._snapshot()

    def _snapshot(self) -> list[Entry]:
        self._account_loop_time()
        feed = self.feed
        feed.begin(time.monotonic())
        group = self.group
        if self._connections is not None:
            count, created, closed = self._connections()
            feed.gauge(group, "connection-count", count)
            feed.total(group, "connection-creation", created)
            feed.total(group, "connection-close", closed)
        # io-wait-ratio: the loop thread's time off the CPU per wall second, over the window.
        busy = feed.ratio(group, "loop-busy", self._cpu, self._wall, emit=False)
        feed.emit(group, "io-wait-ratio", None if busy is None else min(1.0, max(0.0, 1.0 - busy)))
        feed.avg_max(group, "event-loop-lag", self._lag, scale=1000.0)
        self._collect(feed)
        return feed.entries

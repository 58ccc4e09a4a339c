"""Windowed statistics with the Java client's semantics (``SampledStat``, ``Rate``, ``Avg``, ``Max``).

A stat keeps ``num_samples`` samples of ``window`` seconds each. A value recorded when the current
sample is older than ``window`` starts the next sample (overwriting the oldest); samples older than
``num_samples * window`` are ignored when measured. A rate divides the sum of the live samples by the
time they cover, padded to at least ``(num_samples - 1) * window`` as Java does, so a burst in the
first seconds of a client's life is not reported as a huge rate. Nothing here knows about Kafka.
"""

from __future__ import annotations

__all__ = ["Windowed"]


class _Sample:
    __slots__ = ("count", "peak", "start", "total")

    def __init__(self, start: float) -> None:
        self.start = start
        self.count = 0.0
        self.total = 0.0
        self.peak = float("-inf")

    def reset(self, start: float) -> None:
        self.start = start
        self.count = 0.0
        self.total = 0.0
        self.peak = float("-inf")


class Windowed:
    """One metric's samples; :meth:`record` is O(1), the measures walk ``num_samples`` samples."""

    __slots__ = ("_current", "_samples", "num_samples", "window")

    def __init__(self, window: float, num_samples: int, now: float) -> None:
        self.window = window
        self.num_samples = max(num_samples, 1)
        self._samples = [_Sample(now)]
        self._current = 0

    def record(self, value: float, now: float, count: float = 1, peak: float | None = None) -> None:
        """Add ``value`` (a sum of ``count`` events whose largest was ``peak``, default ``value``)."""
        sample = self._samples[self._current]
        if now - sample.start >= self.window:
            self._current = (self._current + 1) % self.num_samples
            if self._current >= len(self._samples):
                self._samples.append(_Sample(now))
            sample = self._samples[self._current]
            sample.reset(now)
        sample.count += count
        sample.total += value
        top = value if peak is None else peak
        if top > sample.peak:
            sample.peak = top

    def _live(self, now: float) -> list[_Sample]:
        expire = self.num_samples * self.window
        live = []
        for s in self._samples:
            if now - s.start >= expire:
                s.reset(now)  # Java's purgeObsoleteSamples
            live.append(s)
        return live

    def rate(self, now: float) -> float:
        """Sum per second over the live samples (Java's ``Rate`` with its minimum window)."""
        live = self._live(now)
        total = sum(s.total for s in live)
        elapsed = now - min(s.start for s in live)
        full = int(elapsed // self.window) if self.window > 0 else 0
        if full < self.num_samples - 1:
            elapsed += (self.num_samples - 1 - full) * self.window
        return total / elapsed if elapsed > 0 else 0.0

    def total(self, now: float) -> float:
        """Sum of the live samples."""
        return sum(s.total for s in self._live(now))

    def count(self, now: float) -> float:
        """Events (or, for a ratio, the denominator) in the live samples."""
        return sum(s.count for s in self._live(now))

    def avg(self, now: float) -> float | None:
        """Mean of the recorded events (None without any, where Java reports NaN)."""
        live = self._live(now)
        count = sum(s.count for s in live)
        return sum(s.total for s in live) / count if count else None

    def max(self, now: float) -> float | None:
        """Largest recorded event (None without any)."""
        peak = max(s.peak for s in self._live(now))
        return None if peak == float("-inf") else peak

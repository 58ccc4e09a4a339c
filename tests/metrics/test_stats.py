"""Java's SampledStat rules on a virtual clock (sans-I/O; the end-to-end checks are in
test_client_metrics.py)."""

from __future__ import annotations

import pytest

from aiokafka_lite.metrics.stats import Windowed


def test_rate_pads_a_young_window_as_java_does() -> None:
    w = Windowed(window=30.0, num_samples=2, now=0.0)
    w.record(30, now=10.0)
    # 10 s elapsed, fewer than num_samples - 1 full windows: Java pads the elapsed time by one window.
    assert w.rate(now=10.0) == pytest.approx(30 / 40)
    w.record(60, now=35.0)  # starts the second sample
    assert w.rate(now=45.0) == pytest.approx(90 / 45)


def test_samples_older_than_all_windows_are_forgotten() -> None:
    w = Windowed(window=1.0, num_samples=2, now=0.0)
    w.record(5, now=0.1, peak=4.0, count=2)
    assert w.avg(now=0.5) == 2.5 and w.max(now=0.5) == 4.0 and w.total(now=0.5) == 5
    assert w.rate(now=2.5) == 0 and w.avg(now=2.5) is None and w.max(now=2.5) is None


def test_a_third_sample_overwrites_the_oldest() -> None:
    w = Windowed(window=1.0, num_samples=2, now=0.0)
    for t, v in ((0.0, 1), (1.0, 10), (2.0, 100)):
        w.record(v, now=t)
    assert w.total(now=2.5) == 110  # the first sample was reused for the third

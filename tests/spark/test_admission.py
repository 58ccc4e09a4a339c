"""Trigger admission math: maxOffsetsPerTrigger never exceeds its budget, splits by lag, starves nobody."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, ReadMinRows

from aiokafka_lite import TopicPartition
from aiokafka_lite.spark.admission import TriggerPacer, admit, apportion, total_lag

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def test_everything_fits() -> None:
    assert apportion({A0: 0, A1: 5}, {A0: 10, A1: 5}, 100) == {A0: 10, A1: 5}


def test_split_in_proportion_to_lag() -> None:
    end = apportion({A0: 0, A1: 0, B0: 0}, {A0: 600, A1: 300, B0: 100}, 100)
    assert sum(end.values()) == 100
    assert end == {A0: 60, A1: 30, B0: 10}


def test_small_lag_is_not_starved() -> None:
    end = apportion({A0: 0, A1: 0}, {A0: 1_000_000, A1: 1}, 10)
    assert end[A1] == 1 and end[A0] == 9


def test_fewer_offsets_than_partitions_goes_to_biggest_lag() -> None:
    end = apportion({A0: 0, A1: 0, B0: 0}, {A0: 5, A1: 50, B0: 7}, 2)
    assert end == {A0: 0, A1: 1, B0: 1}


def test_partition_ahead_of_latest_is_left_alone() -> None:
    end = apportion({A0: 20, A1: 0}, {A0: 10, A1: 100}, 5)
    assert end == {A0: 10, A1: 5}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**5)), min_size=1, max_size=12),
       st.integers(0, 10**5))
def test_apportion_properties(parts: list[tuple[int, int]], budget: int) -> None:
    tps = [TopicPartition("t", i) for i in range(len(parts))]
    start = {tp: s for tp, (s, _) in zip(tps, parts, strict=True)}
    latest = {tp: s + lag for tp, (s, lag) in zip(tps, parts, strict=True)}
    end = apportion(start, latest, budget)
    advanced = sum(end[tp] - start[tp] for tp in tps)
    assert advanced == min(budget, total_lag(start, latest))
    for tp in tps:
        assert start[tp] <= end[tp] <= latest[tp]
    lagging = [tp for tp in tps if latest[tp] > start[tp]]
    if budget >= len(lagging):
        assert all(end[tp] > start[tp] for tp in lagging)


def test_read_all_available_ignores_options() -> None:
    pacer = TriggerPacer(60_000)
    assert admit({A0: 0}, {A0: 5}, ReadAllAvailable(), min_offsets_option=100, pacer=pacer) == {A0: 5}


def test_min_rows_waits_until_delay() -> None:
    pacer = TriggerPacer(max_delay_ms=1000)
    # The first trigger of a run always fires (as in Spark), and restarts the clock.
    def go(start: int, latest: int, now: float) -> object:
        return admit({A0: start}, {A0: latest}, ReadMinRows(10), min_offsets_option=None, pacer=pacer,
                     now_ms=now)

    assert go(0, 5, 10_000) == {A0: 5}
    assert go(5, 8, 10_500) is None
    assert go(5, 15, 10_600) == {A0: 15}
    assert go(15, 16, 11_000) is None
    assert go(15, 16, 11_700) == {A0: 16}


def test_max_rows_with_min_option() -> None:
    pacer = TriggerPacer(max_delay_ms=1000, last_trigger_ms=10_000)
    assert admit({A0: 0}, {A0: 3}, ReadMaxRows(50), min_offsets_option=5, pacer=pacer, now_ms=10_100) is None
    assert admit({A0: 0}, {A0: 300}, ReadMaxRows(50), min_offsets_option=5, pacer=pacer,
                 now_ms=10_200) == {A0: 50}
    # Without a pacer (Trigger.AvailableNow) nothing is held back.
    assert admit({A0: 0}, {A0: 3}, ReadMaxRows(50), min_offsets_option=None, pacer=None) == {A0: 3}

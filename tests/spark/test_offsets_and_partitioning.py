"""Offsets JSON as Spark's checkpoint holds it, and splitting ranges into tasks."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql.pandas.types import to_arrow_schema

from aiokafka_lite import TopicPartition
from aiokafka_lite.errors import IllegalArgumentError
from aiokafka_lite.spark.offsets import from_json_dict, to_json_dict
from aiokafka_lite.spark.partitioning import KafkaInputPartition, OffsetRange, plan_ranges
from aiokafka_lite.spark.schema import arrow_source_schema, source_schema


def test_json_is_sorted_and_round_trips() -> None:
    offsets = {TopicPartition("b", 10): 1, TopicPartition("b", 2): 7, TopicPartition("a", 0): 3}
    d = to_json_dict(offsets)
    assert json.dumps(d) == '{"a": {"0": 3}, "b": {"2": 7, "10": 1}}'
    assert from_json_dict(json.loads(json.dumps(d))) == offsets
    # Equal positions serialize identically whatever order they were built in.
    assert json.dumps(to_json_dict(dict(reversed(list(offsets.items()))))) == json.dumps(d)


@pytest.mark.parametrize("bad", [[], {"a": [1]}, {"a": {"x": 1}}, {"a": {"0": "1"}}, {"a": {"-1": 1}},
                                 {"a": {"0": True}}])
def test_bad_checkpoint_json(bad: object) -> None:
    with pytest.raises(IllegalArgumentError):
        from_json_dict(bad)


def test_one_task_per_partition_by_default() -> None:
    a0, a1, b0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
    ranges = plan_ranges({a0: 0, a1: 5, b0: 3}, {a0: 10, a1: 5, b0: 4})
    assert ranges == [OffsetRange("a", 0, 0, 10), OffsetRange("b", 0, 3, 4)]


def test_min_partitions_splits_big_ranges_more() -> None:
    a0, b0 = TopicPartition("a", 0), TopicPartition("b", 0)
    ranges = plan_ranges({a0: 0, b0: 0}, {a0: 900, b0: 100}, min_partitions=10)
    assert sum(1 for r in ranges if r.topic == "a") == 9
    assert sum(1 for r in ranges if r.topic == "b") == 1


def test_max_records_per_partition() -> None:
    a0 = TopicPartition("a", 0)
    ranges = plan_ranges({a0: 0}, {a0: 10}, max_records_per_partition=3)
    assert [r.size for r in ranges] == [3, 3, 2, 2]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 1000)), min_size=1, max_size=8),
       st.one_of(st.none(), st.integers(1, 50)), st.one_of(st.none(), st.integers(1, 300)))
def test_ranges_cover_each_offset_once(parts: list[tuple[int, int]], min_p: int | None,
                                       max_r: int | None) -> None:
    tps = [TopicPartition("t", i) for i in range(len(parts))]
    start = {tp: s for tp, (s, _) in zip(tps, parts, strict=True)}
    end = {tp: s + n for tp, (s, n) in zip(tps, parts, strict=True)}
    ranges = plan_ranges(start, end, min_partitions=min_p, max_records_per_partition=max_r)
    for tp in tps:
        mine = sorted((r.start, r.end) for r in ranges if r.topic_partition == tp)
        covered = [o for s, e in mine for o in range(s, e)]
        assert covered == list(range(start[tp], end[tp]))
    if max_r is not None:
        assert all(r.size <= max_r for r in ranges)


def test_input_partition_pickles() -> None:
    p = KafkaInputPartition(3, OffsetRange("a", 1, 5, 9))
    q = pickle.loads(pickle.dumps(p))
    assert q.value == 3 and q.range == p.range


@pytest.mark.parametrize("headers", [False, True])
def test_arrow_schema_is_what_pyspark_expects(headers: bool) -> None:
    assert arrow_source_schema(headers).equals(to_arrow_schema(source_schema(headers), timezone="UTC"))

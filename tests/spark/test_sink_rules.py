"""The sink's column rules (Spark's Kafka sink), checked on Arrow batches and schemas without Spark."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pytest
from _spark_kafka import read_all
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from aiokafka_lite.errors import ConfigError, IllegalArgumentError
from aiokafka_lite.spark.options import parse_sink_options
from aiokafka_lite.spark.schema import HEADERS_ARROW_TYPE, check_sink_schema
from aiokafka_lite.spark.writer import batch_groups

BOOT = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def opts(**kw: str):
    return parse_sink_options({**BOOT, **kw})


def test_one_group_for_a_fixed_topic() -> None:
    batch = pa.RecordBatch.from_pydict({"key": pa.array(["a", None], pa.string()),
                                        "value": pa.array([b"1", None], pa.binary()),
                                        "ignored": pa.array([1, 2])})
    [g] = batch_groups(batch, opts(topic="t"))
    assert (g.topic, g.partition, g.values, g.keys, g.headers) == (
        "t", None, [b"1", None], [b"a", None], None)


def test_topic_option_overrides_column_and_groups_keep_order() -> None:
    batch = pa.RecordBatch.from_pydict({
        "topic": ["x", "y", "x", "y"], "value": ["v0", "v1", "v2", "v3"],
        "partition": pa.array([0, 1, 0, None], pa.int32())})
    groups = batch_groups(batch, opts())
    assert [(g.topic, g.partition, g.values) for g in groups] == [
        ("x", 0, [b"v0", b"v2"]), ("y", 1, [b"v1"]), ("y", None, [b"v3"])]
    [g] = [g for g in batch_groups(batch, opts(topic="z")) if g.partition == 0]
    assert g.topic == "z" and g.values == [b"v0", b"v2"]


def test_headers_and_include_headers_false() -> None:
    headers = pa.array([[{"key": "h", "value": b"1"}], []], HEADERS_ARROW_TYPE)
    batch = pa.RecordBatch.from_pydict({"value": [b"a", b"b"], "headers": headers})
    [g] = batch_groups(batch, opts(topic="t"))
    assert g.headers == [[("h", b"1")], []]
    [g] = batch_groups(batch, opts(topic="t", includeHeaders="false"))
    assert g.headers is None


def test_null_topic_is_an_error() -> None:
    batch = pa.RecordBatch.from_pydict({"topic": ["x", None], "value": [b"a", b"b"]})
    with pytest.raises(IllegalArgumentError, match="topic"):
        batch_groups(batch, opts())


def schema(**cols: object) -> StructType:
    return StructType([StructField(name, t) for name, t in cols.items()])  # type: ignore[arg-type]


def test_sink_schema_rules() -> None:
    ok = schema(value=StringType(), topic=StringType())
    check_sink_schema(ok, default_topic=None, include_headers=None)
    with pytest.raises(ConfigError, match="'value' column"):
        check_sink_schema(schema(v=StringType()), default_topic="t", include_headers=None)
    with pytest.raises(ConfigError, match="no topic"):
        check_sink_schema(schema(value=StringType()), default_topic=None, include_headers=None)
    with pytest.raises(ConfigError, match="'value' must be"):
        check_sink_schema(schema(value=IntegerType()), default_topic="t", include_headers=None)
    with pytest.raises(ConfigError, match="'partition' must be an int"):
        check_sink_schema(schema(value=StringType(), partition=StringType()), default_topic="t",
                          include_headers=None)
    with pytest.raises(ConfigError, match="needs a 'headers' column"):
        check_sink_schema(ok, default_topic=None, include_headers=True)


END_TXN, TXN_OFFSET_COMMIT = 26, 28


def test_exactly_once_task_rides_out_coordinator_moves(mock_cluster: Any,
                                                       new_topic: Callable[..., str]) -> None:
    """librdkafka's mock cluster (3 brokers, transactions): while a task writes inside its transaction,
    both its transaction coordinator and its marker group's coordinator move to another broker. The task
    finds them again and commits every row once. (The mock takes TxnOffsetCommit without storing the
    offset, rdkafka_mock_handlers.c, so the marker's effect on a retried task is tested on noida-db, in
    test_sink.py.)"""
    from aiokafka_lite.spark.transactions import task_transaction
    from aiokafka_lite.spark.writer import _write_transactional

    mc = mock_cluster(3)
    topic = new_topic()
    mc.create_topic(topic, 2, 3)
    options = parse_sink_options({"kafka.bootstrap.servers": mc.bootstrap, "topic": topic,
                                  "exactlyOnce": "true"})
    txn = task_transaction(options.transactional_id_prefix, "scope-1", 0, 0, topic)
    mc.set_coordinator("transaction", txn.transactional_id, 1)
    mc.set_coordinator("group", txn.marker_group, 1)

    def batches() -> Iterator[pa.RecordBatch]:
        for start in range(0, 300, 100):
            if start == 100:  # mid-transaction: both coordinators move
                mc.set_coordinator("transaction", txn.transactional_id, 2)
                mc.set_coordinator("group", txn.marker_group, 3)
            yield pa.record_batch({"value": [b"v%d" % i for i in range(start, start + 100)]})

    mc.start_request_tracking()
    result = _write_transactional(options, batches(), 0, txn)
    assert (result.rows, result.skipped) == (300, False)
    seen = {(r.api_key, r.broker_id) for r in mc.requests()}
    assert (END_TXN, 2) in seen and (END_TXN, 1) not in seen  # committed at the new coordinator
    assert (TXN_OFFSET_COMMIT, 3) in seen  # the marker went to the group's new coordinator
    committed = [v for _p, _o, _k, v in read_all(mc.bootstrap, topic, read_committed=True) if v is not None]
    assert sorted(committed) == sorted(b"v%d" % i for i in range(300))

"""The stream and batch readers against real brokers, through a real local Spark (local[2]).

Setup and checks use confluent-kafka (an independent client). Tests parametrized with ``broker`` run on
Tansu and noida-db; those needing CreatePartitions, transactions, DeleteRecords or timestamp lookups run
on noida-db only (Tansu lacks them; see shared/brokers.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _spark_kafka import add_partitions, create_topic, delete_records, produce, transactional_produce

from aiokafka_lite.embedded import EmbeddedBroker

pytestmark = pytest.mark.timeout(240)


def reader(spark: Any, bootstrap: str, stream: bool = False, **options: Any) -> Any:
    r = (spark.readStream if stream else spark.read).format("aiokafka_lite")
    r = r.option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        r = r.option(key, str(value))
    return r.load()


def run_available_now(df: Any, sink: str, path_or_name: str, checkpoint: Path) -> Any:
    w = df.writeStream.option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)
    if sink == "memory":
        q = w.format("memory").queryName(path_or_name).start()
    else:
        q = w.format("parquet").option("path", path_or_name).start()
    q.awaitTermination(180)
    assert not q.isActive, "the availableNow query did not finish"
    if q.exception() is not None:
        raise q.exception()
    return q


EXPECTED_SCHEMA = ("struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
                   "timestamp:timestamp,timestampType:int,headers:array<struct<key:string,value:binary>>>")


def test_available_now_reads_exactly_n_rows(spark: Any, bootstrap: str, new_topic: Callable[..., str],
                                            ident: Callable[[str], str], tmp_path: Path) -> None:
    topic = new_topic()
    create_topic(bootstrap, topic, 3)
    n = 3000
    produce(bootstrap, topic, [(i % 3, b"k%d" % (i % 50), b"v%d" % i, [("h", b"x%d" % i)] if i % 2 else None)
                               for i in range(n)])
    before = time.time()
    df = reader(spark, bootstrap, stream=True, subscribe=topic, startingOffsets="earliest",
                includeHeaders="true")
    assert df.schema.simpleString() == EXPECTED_SCHEMA
    name = ident("avail")
    run_available_now(df, "memory", name, tmp_path / "ck")
    rows = spark.table(name).collect()
    assert len(rows) == n
    assert len({(r.partition, r.offset) for r in rows}) == n
    assert {r.value for r in rows} == {b"v%d" % i for i in range(n)}
    for p in range(3):
        assert sorted(r.offset for r in rows if r.partition == p) == list(range(n // 3))
    by_value = {r.value: r for r in rows}
    r1, r2 = by_value[b"v1"], by_value[b"v2"]
    assert r1.key == b"k1" and r1.topic == topic and r1.partition == 1 and r1.timestampType == 0
    assert [(h.key, h.value) for h in r1.headers] == [("h", b"x1")]
    assert r2.headers == []
    assert abs(r1.timestamp.timestamp() - before) < 120


def test_restart_on_same_checkpoint_no_duplicate_no_gap(
        spark: Any, bootstrap: str, new_topic: Callable[..., str], tmp_path: Path) -> None:
    topic = new_topic()
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, [(i % 2, None, b"a%d" % i) for i in range(500)])
    out, ck = str(tmp_path / "out"), tmp_path / "ck"
    opts = {"subscribe": topic, "startingOffsets": "earliest", "maxOffsetsPerTrigger": 200}
    run_available_now(reader(spark, bootstrap, stream=True, **opts), "parquet", out, ck)
    assert spark.read.parquet(out).count() == 500
    produce(bootstrap, topic, [(i % 2, None, b"b%d" % i) for i in range(700)])
    run_available_now(reader(spark, bootstrap, stream=True, **opts), "parquet", out, ck)
    rows = spark.read.parquet(out).select("partition", "offset", "value").collect()
    assert len(rows) == 1200
    assert len({(r.partition, r.offset) for r in rows}) == 1200
    for p in range(2):
        assert sorted(r.offset for r in rows if r.partition == p) == list(range(600))
    assert {r.value for r in rows} == {b"a%d" % i for i in range(500)} | {b"b%d" % i for i in range(700)}


def test_max_offsets_per_trigger_holds(spark: Any, bootstrap: str, new_topic: Callable[..., str],
                                       ident: Callable[[str], str], tmp_path: Path) -> None:
    topic = new_topic()
    create_topic(bootstrap, topic, 4)
    n, limit = 1000, 150
    # Uneven lag: partition 0 holds 70 % of the records.
    produce(bootstrap, topic, [(0 if i % 10 < 7 else i % 10 - 6, None, b"%d" % i) for i in range(n)])
    df = reader(spark, bootstrap, stream=True, subscribe=topic, startingOffsets="earliest",
                maxOffsetsPerTrigger=limit)
    name = ident("maxoff")
    q = run_available_now(df, "memory", name, tmp_path / "ck")
    counts = [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]
    assert all(c <= limit for c in counts), counts
    assert sum(counts) == n
    assert len(counts) == math.ceil(n / limit)
    assert spark.table(name).count() == n


def test_batch_read_honours_offsets(spark: Any, bootstrap: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, [(i % 2, None, b"%d" % i) for i in range(200)])
    df = reader(spark, bootstrap, subscribe=topic, startingOffsets=f'{{"{topic}":{{"0":10,"1":-2}}}}',
                endingOffsets=f'{{"{topic}":{{"0":50,"1":30}}}}')
    got = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    assert got == [(0, o) for o in range(10, 50)] + [(1, o) for o in range(30)]
    full = reader(spark, bootstrap, subscribe=topic, minPartitions=7)
    assert full.rdd.getNumPartitions() >= 7
    assert full.count() == 200
    assigned = reader(spark, bootstrap, assign=f'{{"{topic}":[1]}}',
                      endingOffsets=f'{{"{topic}":{{"1":-1}}}}')
    assert assigned.count() == 100


def test_bad_options_fail_at_load(spark: Any, tansu: EmbeddedBroker) -> None:
    with pytest.raises(Exception, match="exactly one of"):
        reader(spark, tansu.bootstrap, subscribe="a", assign='{"a":[0]}').schema  # noqa: B018
    with pytest.raises(Exception, match=r"auto\.offset\.reset"):
        reader(spark, tansu.bootstrap, stream=True, subscribe="a", **{"kafka.auto.offset.reset": "earliest"})


@pytest.mark.parametrize("broker", ["noida"], indirect=True)
def test_added_partition_is_read_by_running_query(spark: Any, bootstrap: str, new_topic: Callable[..., str],
                                                  ident: Callable[[str], str], tmp_path: Path) -> None:
    topic = new_topic()
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, [(0, None, b"first%d" % i) for i in range(100)])
    name = ident("grow")
    q = (reader(spark, bootstrap, stream=True, subscribe=topic, startingOffsets="earliest")
         .writeStream.format("memory").queryName(name).option("checkpointLocation", str(tmp_path / "ck"))
         .trigger(processingTime="500 milliseconds").start())
    try:
        _wait_rows(spark, q, name, 100)
        add_partitions(bootstrap, topic, 3)
        produce(bootstrap, topic, [(1 + i % 2, None, b"new%d" % i) for i in range(60)])
        _wait_rows(spark, q, name, 160)
    finally:
        q.stop()
    rows = spark.table(name).collect()
    assert len(rows) == 160
    assert {r.partition for r in rows} == {0, 1, 2}
    assert sorted(r.offset for r in rows if r.partition == 2) == list(range(30))


def _wait_rows(spark: Any, q: Any, name: str, n: int, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if q.exception() is not None:
            raise q.exception()
        if spark.table(name).count() >= n:
            return
        time.sleep(0.5)
    raise AssertionError(f"{name}: fewer than {n} rows after {timeout} s ({spark.table(name).count()})")


@pytest.mark.parametrize("broker", ["noida"], indirect=True)
def test_read_committed_hides_aborted_records(spark: Any, bootstrap: str, new_topic: Callable[..., str],
                                              ident: Callable[[str], str], tmp_path: Path) -> None:
    topic = new_topic()
    create_topic(bootstrap, topic, 2)
    transactional_produce(bootstrap, topic, f"txn-{topic}", [
        (True, [(i % 2, None, b"ok1-%d" % i) for i in range(20)]),
        (False, [(i % 2, None, b"aborted-%d" % i) for i in range(20)]),
        (True, [(i % 2, None, b"ok2-%d" % i) for i in range(20)]),
    ])
    committed = {b"ok1-%d" % i for i in range(20)} | {b"ok2-%d" % i for i in range(20)}
    rc = reader(spark, bootstrap, subscribe=topic, **{"kafka.isolation.level": "read_committed"})
    assert {r.value for r in rc.collect()} == committed and rc.count() == 40
    ru = reader(spark, bootstrap, subscribe=topic)
    assert ru.count() == 60
    # The stream reader too: it ends batches at the last stable offset and drops aborted records.
    name = ident("rc")
    run_available_now(reader(spark, bootstrap, stream=True, subscribe=topic, startingOffsets="earliest",
                             maxOffsetsPerTrigger=25, **{"kafka.isolation.level": "read_committed"}),
                      "memory", name, tmp_path / "ck")
    assert sorted(r.value for r in spark.table(name).collect()) == sorted(committed)


def test_starting_timestamp(spark: Any, bootstrap: str, new_topic: Callable[..., str]) -> None:
    """Both brokers: noida-db answers ListOffsets(timestamp) as Kafka does (-1 after every record);
    Tansu 0.6 answers offset 0 whatever the time, which the source detects and corrects."""
    topic = new_topic()
    create_topic(bootstrap, topic, 1)
    now = int(time.time() * 1000)
    produce(bootstrap, topic, [(0, None, b"old%d" % i, None, now - 60_000 + i) for i in range(30)]
            + [(0, None, b"new%d" % i, None, now - 10_000 + i) for i in range(20)])
    df = reader(spark, bootstrap, subscribe=topic, startingTimestamp=now - 30_000)
    assert sorted(r.value for r in df.collect()) == sorted(b"new%d" % i for i in range(20))
    with pytest.raises(Exception, match="startingOffsetsByTimestampStrategy"):
        reader(spark, bootstrap, subscribe=topic, startingTimestamp=now + 3_600_000).collect()
    # a time after every record means the end: nothing to read (strategy latest), everything before it
    later = now + 3_600_000
    assert reader(spark, bootstrap, subscribe=topic, startingTimestamp=later,
                  startingOffsetsByTimestampStrategy="latest").count() == 0
    assert reader(spark, bootstrap, subscribe=topic, endingTimestamp=later).count() == 50
    assert reader(spark, bootstrap, subscribe=topic, endingTimestamp=now - 30_000).count() == 30


@pytest.mark.parametrize("broker", ["noida"], indirect=True)
def test_fail_on_data_loss(spark: Any, bootstrap: str, new_topic: Callable[..., str], tmp_path: Path) -> None:
    topic = new_topic()
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, [(0, None, b"%d" % i) for i in range(100)])
    out, ck = str(tmp_path / "out"), tmp_path / "ck"
    opts = {"subscribe": topic, "startingOffsets": "earliest"}
    run_available_now(reader(spark, bootstrap, stream=True, **opts), "parquet", out, ck)
    produce(bootstrap, topic, [(0, None, b"%d" % i) for i in range(100, 200)])
    delete_records(bootstrap, topic, 0, 150)
    with pytest.raises(Exception, match="DataLossError"):
        run_available_now(reader(spark, bootstrap, stream=True, **opts), "parquet", out, ck)
    lenient = reader(spark, bootstrap, stream=True, failOnDataLoss="false", **opts)
    run_available_now(lenient, "parquet", out, ck)
    offsets = sorted(r.offset for r in spark.read.parquet(out).collect())
    assert offsets == list(range(100)) + list(range(150, 200))


def test_stream_refuses_ending_offsets_at_load(spark: Any, tansu: EmbeddedBroker) -> None:
    """Spark's Kafka source refuses endingOffsets in readStream when load() is called, not after start()."""
    from aiokafka_lite.errors import ConfigError

    for name, value in (("endingOffsets", "latest"), ("endingTimestamp", "1")):
        with pytest.raises(ConfigError, match=f"{name}.*not valid in streaming"):
            reader(spark, tansu.bootstrap, stream=True, subscribe="t", **{name: value})
        with pytest.raises(ConfigError, match=f"{name}.*not valid in streaming"):
            (spark.readStream.format("aiokafka_lite").options(**{"kafka.bootstrap.servers": tansu.bootstrap,
                                                                  "subscribe": "t", name: value}).load())
    # the same options are fine in a batch read, and streaming-only ones are ignored there
    df = reader(spark, tansu.bootstrap, subscribe="t", endingOffsets="latest", maxOffsetsPerTrigger="5")
    assert df.columns[:2] == ["key", "value"]


@pytest.mark.parametrize("broker", ["noida"], indirect=True)
def test_topic_recreated_while_stopped(spark: Any, bootstrap: str, new_topic: Callable[..., str],
                                       tmp_path: Path) -> None:
    """Deleted and recreated between two runs, with fewer records than the checkpoint's position: the
    offsets went back. failOnDataLoss=true fails naming the topic; false reads the new log from its start.
    (noida-db reports all-zero topic ids, so ids cannot tell the two topics apart there.)"""
    from confluent_kafka.admin import AdminClient

    topic = new_topic()
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, [(0, None, b"old%d" % i) for i in range(60)])
    out, ck = str(tmp_path / "out"), tmp_path / "ck"
    opts = {"subscribe": topic, "startingOffsets": "earliest"}
    run_available_now(reader(spark, bootstrap, stream=True, **opts), "parquet", out, ck)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics([topic])[topic].result(30)
    deadline = time.monotonic() + 30
    while True:
        try:
            create_topic(bootstrap, topic, 1)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    produce(bootstrap, topic, [(0, None, b"new%d" % i) for i in range(20)])
    with pytest.raises(Exception, match=f"topic '{topic}'.*went back from 60.*recreated"):
        run_available_now(reader(spark, bootstrap, stream=True, **opts), "parquet", out, ck)
    lenient = reader(spark, bootstrap, stream=True, failOnDataLoss="false", **opts)
    run_available_now(lenient, "parquet", out, ck)
    values = sorted(r.value for r in spark.read.parquet(out).collect())
    assert values == sorted([b"old%d" % i for i in range(60)] + [b"new%d" % i for i in range(20)])


@pytest.mark.parametrize("broker", ["tansu"], indirect=True)
def test_topic_recreated_under_running_query_by_topic_id(spark: Any, bootstrap: str,
                                                         new_topic: Callable[..., str],
                                                         ident: Callable[[str], str], tmp_path: Path) -> None:
    """Tansu gives real topic ids, and a new one to a recreated topic: even when the new topic already
    holds more records than the query's position (offsets did not go back), the query fails naming it."""
    from confluent_kafka.admin import AdminClient

    topic = new_topic()
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, [(0, None, b"old%d" % i) for i in range(10)])
    name = ident("ids")
    q = (reader(spark, bootstrap, stream=True, subscribe=topic, startingOffsets="earliest").writeStream
         .format("memory").queryName(name).option("checkpointLocation", str(tmp_path / "ck"))
         .trigger(processingTime="6 seconds").start())
    try:
        # Between two triggers (6 s apart) the topic is deleted, recreated and filled, so the next
        # trigger sees it back, with a new id and more records than the query has read.
        deadline = time.monotonic() + 120
        while spark.sql(f"select count(*) from {name}").collect()[0][0] < 10:
            assert time.monotonic() < deadline and q.isActive, q.exception()
            time.sleep(0.1)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.delete_topics([topic])[topic].result(30)
        create_topic(bootstrap, topic, 1)
        produce(bootstrap, topic, [(0, None, b"new%d" % i) for i in range(40)])
        with pytest.raises(Exception, match=f"topic '{topic}' was deleted and recreated while the query ran"):
            q.awaitTermination(60)
        assert not q.isActive
    finally:
        q.stop()

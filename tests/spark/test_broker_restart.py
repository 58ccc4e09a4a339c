"""A running streaming query rides out a broker restart (issue 16).

Its own noida-db (the session brokers are shared and must keep running), on a fixed port with a
persistent data directory, is stopped for several seconds while the query runs, then started again on
the same port and data directory. The query must neither fail nor lose or repeat a row: Spark's Kafka
source keeps polling for ``kafkaConsumer.pollTimeoutMs`` (120 s by default), and so do we.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _spark_kafka import create_topic, produce, read_all

from aiokafka_lite.embedded import EmbeddedBroker, free_port
from aiokafka_lite.errors import KafkaTimeoutError

pytestmark = pytest.mark.timeout(240)

#: 6 s in the suite; AIOKAFKA_LITE_OUTAGE_S=30 for the issue's longer outage.
OUTAGE_S = float(os.environ.get("AIOKAFKA_LITE_OUTAGE_S", "6"))


@pytest.fixture
def own_noida(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    broker = EmbeddedBroker("noida", port=free_port(), data_dir=tmp_path / "data", log_dir=tmp_path / "log")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop(grace=5.0)


def _subscribe(topic: str) -> Any:
    from aiokafka_lite.spark.options import Subscription

    return Subscription("subscribe", topics=(topic,))


def _wait(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_stream_rides_out_broker_restart(spark: Any, own_noida: EmbeddedBroker, new_topic: Callable[..., str],
                                         ident: Callable[[str], str], tmp_path: Path) -> None:
    bootstrap = own_noida.bootstrap
    topic = new_topic()
    create_topic(bootstrap, topic, 2)
    first = produce(bootstrap, topic, [(i % 2, None, b"a%d" % i) for i in range(2000)])
    out = new_topic("out")
    create_topic(bootstrap, out, 1)
    name = ident("restart")
    df = (spark.readStream.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", topic).option("startingOffsets", "earliest")
          .option("maxOffsetsPerTrigger", "200").load())
    query = (df.selectExpr("partition", "offset", "cast(value as string) as value").writeStream
             .format("memory").queryName(name).option("checkpointLocation", str(tmp_path / "ckpt"))
             .trigger(processingTime="100 milliseconds").start())
    # The writer must ride out the restart too: rows that do not come from the broker keep arriving
    # (one task per micro-batch, one output partition, so the topic must hold 0, 1, 2, ... in order).
    rate = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", "100")
            .option("numPartitions", "1").load())
    sink = (rate.selectExpr("cast(value as string) as value").writeStream.format("aiokafka_lite")
            .option("kafka.bootstrap.servers", bootstrap).option("topic", out)
            .option("checkpointLocation", str(tmp_path / "ckpt-out"))
            .trigger(processingTime="200 milliseconds").start())

    def rows() -> int:
        return int(spark.sql(f"select count(*) from {name}").collect()[0][0])

    outage: dict[str, float] = {}
    try:
        _wait(lambda: rows() > 0, 120, "the first micro-batch")
        before = rows()
        assert before < first, "the query read everything before the outage: nothing was tested"
        outage["rows_out_before"] = len(read_all(bootstrap, out))
        t0 = time.monotonic()
        own_noida.stop(grace=5.0)
        stopped = time.monotonic()
        time.sleep(OUTAGE_S)
        own_noida.start()
        outage["down_s"] = time.monotonic() - stopped
        outage["total_s"] = time.monotonic() - t0
        assert query.isActive and query.exception() is None, query.exception()
        assert sink.isActive and sink.exception() is None, sink.exception()
        second = produce(bootstrap, topic, [(i % 2, None, b"b%d" % i) for i in range(500)])
        total = first + second
        _wait(lambda: rows() >= total or not query.isActive, 180, f"{total} rows")
        assert query.exception() is None, query.exception()
        assert query.isActive
        got = spark.sql(f"select count(*), count(distinct partition, offset) from {name}").collect()[0]
        print(f"outage {outage['down_s']:.1f} s: rows {got[0]}, distinct (partition, offset) {got[1]}, "
              f"produced {total}")
        assert (got[0], got[1]) == (total, total)
        assert sink.isActive and sink.exception() is None, sink.exception()
        sink.stop()
        written = [int(v) for _p, _o, _k, v in sorted(read_all(bootstrap, out)) if v is not None]
        print(f"sink: {len(written)} records, {len(set(written))} distinct, last {written[-1:]}")
        assert written == list(range(len(written)))
        assert len(written) > outage["rows_out_before"]
    finally:
        query.stop()
        sink.stop()


def test_fetch_gives_up_after_poll_timeout_naming_broker_and_partition(
        own_noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """After kafkaConsumer.pollTimeoutMs of retries the task fails, and says where it could not read."""
    from aiokafka_lite.spark._client_cache import worker_loop
    from aiokafka_lite.spark._source_client import SourceClient
    from aiokafka_lite.structs import TopicPartition

    bootstrap = own_noida.bootstrap
    topic = new_topic()
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, [(0, None, b"x")])
    settings = {"bootstrap_servers": bootstrap, "client_id": f"gives-up-{topic}"}
    tp = TopicPartition(topic, 0)

    async def fetch(timeout_ms: int) -> Any:
        client = await SourceClient.get(settings)
        return await client.fetch(tp, 0, max_bytes=1 << 16, max_wait_ms=10, read_committed=False,
                                  timeout_ms=timeout_ms)

    assert worker_loop().run(fetch(5000), 60).records
    own_noida.stop(grace=5.0)
    started = time.monotonic()
    with pytest.raises(KafkaTimeoutError) as info:
        worker_loop().run(fetch(2500), 60)
    waited = time.monotonic() - started
    text = str(info.value)
    assert f"{topic}-0" in text and bootstrap in text and "pollTimeoutMs" in text, text
    assert 2.5 <= waited < 10, waited


def test_a_read_waiting_when_the_worker_loop_closes_raises_client_closed_error(
        own_noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """A task's read_range() waits on its prefetched step while the worker loop closes (the executor
    shuts down): it raises ClientClosedError at once, not concurrent.futures' bare CancelledError."""
    from aiokafka_lite.errors import ClientClosedError
    from aiokafka_lite.spark._client_cache import close_worker_loop
    from aiokafka_lite.spark.fetch import read_range
    from aiokafka_lite.spark.options import parse_source_options
    from aiokafka_lite.spark.partitioning import OffsetRange

    bootstrap = own_noida.bootstrap
    topic = new_topic()
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, [(0, None, b"x")])
    options = parse_source_options({"kafka.bootstrap.servers": bootstrap, "subscribe": topic,
                                    "kafkaConsumer.pollTimeoutMs": "120000"}, streaming=False)
    rows = read_range(options, OffsetRange(topic, 0, 0, 5))  # offsets 1-4 never come: it waits for them
    assert next(rows).num_rows == 1
    answers: list[BaseException] = []

    def read_on() -> None:
        try:
            next(rows)
        except BaseException as exc:
            answers.append(exc)

    thread = threading.Thread(target=read_on, daemon=True)
    thread.start()
    time.sleep(1.0)
    assert thread.is_alive() and not answers  # still waiting for offset 1
    close_worker_loop(timeout=5.0)
    thread.join(5.0)
    assert not thread.is_alive()
    assert len(answers) == 1 and isinstance(answers[0], ClientClosedError), answers


def test_fetch_follows_leader_move_and_waits_out_all_brokers_down(mock_cluster: Any,
                                                                 new_topic: Callable[..., str]) -> None:
    """librdkafka's mock cluster (3 brokers): the leader moves away from a broker that goes down, then
    every broker is down for 4 s (longer than the old 8-attempt loop's ~3 s); the fetch gets its records."""
    from aiokafka_lite.spark._client_cache import worker_loop
    from aiokafka_lite.spark._source_client import SourceClient
    from aiokafka_lite.structs import TopicPartition

    mc = mock_cluster(3)
    topic = new_topic()
    mc.create_topic(topic, 1, 3)
    mc.set_leader(topic, 0, 1)
    produce(mc.bootstrap, topic, [(0, None, b"r%d" % i) for i in range(50)], **{"enable.idempotence": False})
    settings = {"bootstrap_servers": mc.bootstrap, "client_id": f"moves-{topic}"}
    tp = TopicPartition(topic, 0)

    async def fetch() -> Any:
        client = await SourceClient.get(settings)
        return await client.fetch(tp, 0, max_bytes=1 << 16, max_wait_ms=10, read_committed=False,
                                  timeout_ms=30_000)

    assert worker_loop().run(fetch(), 60).records
    mc.set_leader(topic, 0, 2)
    mc.set_down(1)
    assert worker_loop().run(fetch(), 60).records
    mc.set_up(1)
    mc.set_down()
    timer = threading.Timer(4.0, mc.set_up)
    timer.start()
    started = time.monotonic()
    try:
        got = worker_loop().run(fetch(), 60)
    finally:
        timer.join()
    assert got.records and time.monotonic() - started >= 3.5


def test_write_fails_after_delivery_timeout_naming_broker_and_partition(
        spark: Any, own_noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """With every broker gone, a write task fails once kafka.delivery.timeout.ms has passed, saying
    which partition's records were not delivered and which brokers it was writing to."""
    bootstrap = own_noida.bootstrap
    topic = new_topic()
    create_topic(bootstrap, topic, 1)
    opts = {"kafka.bootstrap.servers": bootstrap, "topic": topic, "kafka.delivery.timeout.ms": "3000",
            "kafka.request.timeout.ms": "1000", "kafka.linger.ms": "0", "kafka.max.block.ms": "3000"}
    df = spark.createDataFrame([("a",), ("b",)], "value string").coalesce(1)
    df.write.format("aiokafka_lite").options(**opts).mode("append").save()
    own_noida.stop(grace=5.0)
    with pytest.raises(Exception) as info:
        df.write.format("aiokafka_lite").options(**opts).mode("append").save()
    text = str(info.value)
    assert f"Kafka sink: brokers {bootstrap}, topic {topic}" in text, text[-3000:]
    # a reused Python worker's producer names the partition whose records expired; a new worker's
    # producer could not start within the same bound
    assert (f"{topic}-0" in text or "starting a producer" in text) and "delivery_timeout_ms" in text, \
        text[-3000:]


def test_new_client_waits_for_a_restarting_broker(own_noida: EmbeddedBroker,
                                                  new_topic: Callable[..., str]) -> None:
    """A task that starts in a fresh Python worker while the broker is down waits for it to come back
    (within pollTimeoutMs) instead of failing at its first connection attempt."""
    from aiokafka_lite.spark._client_cache import worker_loop
    from aiokafka_lite.spark._source_client import SourceClient

    topic = new_topic()
    create_topic(own_noida.bootstrap, topic, 1)
    own_noida.stop(grace=5.0)
    timer = threading.Timer(2.0, own_noida.start)
    timer.start()
    started = time.monotonic()
    try:
        settings = {"bootstrap_servers": own_noida.bootstrap, "client_id": f"fresh-{topic}"}
        client = worker_loop().run(SourceClient.get(settings, 30_000), 60)
        parts = worker_loop().run(client.partitions(_subscribe(topic)), 60)
    finally:
        timer.join()
    assert len(parts) == 1 and time.monotonic() - started >= 1.5


def test_batch_write_during_restart(spark: Any, own_noida: EmbeddedBroker,
                                    new_topic: Callable[..., str]) -> None:
    """A df.write issued while the broker is down finishes once it is back (tasks in new or reused
    Python workers alike), every row once."""
    bootstrap = own_noida.bootstrap
    topic = new_topic()
    create_topic(bootstrap, topic, 2)
    df = spark.range(3000).selectExpr("cast(id as string) as value").repartition(3)
    df.count()  # plan and run the input once first, so that the write starts well inside the outage
    own_noida.stop(grace=5.0)
    timer = threading.Timer(6.0, own_noida.start)
    timer.start()
    try:
        df.write.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap).option("topic", topic) \
            .mode("append").save()
    finally:
        timer.join()
    values = [v for _p, _o, _k, v in read_all(bootstrap, topic)]
    assert (len(values), len(set(values))) == (3000, 3000)


def test_closed_worker_loop_leaves_no_client_retrying(own_noida: EmbeddedBroker,
                                                      new_topic: Callable[..., str],
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """``close_worker_loop()`` (after every test here, and at interpreter exit) stops the process's cached
    clients: once their broker is gone, none of them goes on refreshing metadata."""
    from aiokafka_lite.spark._client_cache import close_worker_loop, worker_loop
    from aiokafka_lite.spark._source_client import SourceClient

    topic = new_topic()
    create_topic(own_noida.bootstrap, topic, 1)
    settings = {"bootstrap_servers": own_noida.bootstrap, "client_id": f"closed-{topic}"}
    loop = worker_loop()
    client = loop.run(SourceClient.get(settings), 60)
    assert loop.run(client.partitions(_subscribe(topic)), 60)
    close_worker_loop()
    assert not loop.alive and not client.client.started
    with caplog.at_level(logging.DEBUG, logger="aiokafka_lite"):
        own_noida.stop(grace=5.0)
        time.sleep(1.5)  # a live client notices the broken connection at once and retries within 1 s
    assert not [r for r in caplog.records if "metadata" in r.getMessage()], caplog.text[-2000:]
    assert worker_loop() is not loop and worker_loop().alive  # the next use starts a fresh loop

"""Readers and writers pickle as options only, even after they have talked to a broker (no Spark needed)."""

from __future__ import annotations

import pickle
import socket
from collections.abc import Callable

from _spark_kafka import create_topic, produce
from pyspark import cloudpickle  # what PySpark itself ships readers to workers with
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from aiokafka_lite import TopicPartition
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.spark._client_cache import worker_loop
from aiokafka_lite.spark.options import parse_sink_options, parse_source_options
from aiokafka_lite.spark.partitioning import KafkaInputPartition
from aiokafka_lite.spark.stream_reader import KafkaStreamReader
from aiokafka_lite.spark.writer import KafkaStreamWriter


def _no_sockets(obj: object, seen: set[int] | None = None) -> None:
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    assert not isinstance(obj, socket.socket)
    for value in getattr(obj, "__dict__", {}).values():
        _no_sockets(value, seen)


def test_stream_reader_drives_offsets_and_pickles_clean(tansu: EmbeddedBroker,
                                                        new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    create_topic(tansu.bootstrap, topic, 2)
    produce(tansu.bootstrap, topic, [(i % 2, None, b"%d" % i) for i in range(40)])
    opts = parse_source_options({"kafka.bootstrap.servers": tansu.bootstrap, "subscribe": topic,
                                 "startingOffsets": "earliest", "maxOffsetsPerTrigger": "10"}, streaming=True)
    reader = KafkaStreamReader(opts)
    start = reader.initialOffset()
    assert start == {topic: {"0": 0, "1": 0}}
    assert reader.getDefaultReadLimit() == ReadMaxRows(10)
    end = reader.latestOffset(start, ReadMaxRows(10))
    assert end == {topic: {"0": 5, "1": 5}}
    assert reader.latestOffset(start, ReadAllAvailable()) == {topic: {"0": 20, "1": 20}}
    assert reader.reportLatestOffset() == {topic: {"0": 20, "1": 20}}
    parts = reader.partitions(start, end)
    assert [(p.range.partition, p.range.start, p.range.end) for p in parts] == [(0, 0, 5), (1, 0, 5)]
    # The executor's copy: options only, no client, loop or socket, even though this process has them now.
    assert worker_loop().alive
    copy = cloudpickle.loads(cloudpickle.dumps(reader))
    assert vars(copy).keys() == vars(KafkaStreamReader(opts)).keys()
    assert copy._available_now is None and copy._latest is None
    _no_sockets(copy)
    rows = [v for b in copy.read(pickle.loads(pickle.dumps(parts[1]))) for v in b.column("value").to_pylist()]
    assert rows == [b"%d" % i for i in range(1, 10, 2)]
    assert isinstance(parts[0], KafkaInputPartition)
    assert parts[0].range.topic_partition == TopicPartition(topic, 0)


def test_writer_pickles_clean() -> None:
    writer = KafkaStreamWriter(parse_sink_options({"kafka.bootstrap.servers": "127.0.0.1:9", "topic": "t"}))
    _no_sockets(cloudpickle.loads(cloudpickle.dumps(writer)))

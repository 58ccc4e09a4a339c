"""PySpark bridge benchmark: rows/s from a Kafka topic into Spark's noop sink, against Spark's own ceiling.

Fills a topic with N records (default 1M; key 8 bytes, value ``--value-size`` bytes, ``--partitions``
partitions) on a local broker (Tansu unless ``--broker noida`` or ``--bootstrap`` is given), then, in a
local[2] Spark:

* ``kafka_batch``: ``spark.read.format("aiokafka_lite")`` of the whole topic into ``format("noop")``;
* ``kafka_stream``: ``readStream`` with ``Trigger.AvailableNow`` into the noop sink;
* ``generated``: the same rows (same schema, sizes, partitions and Arrow batch size) produced by a
  Python data source without Kafka: what a Python data source can feed Spark on this machine at best.

Each figure is the best of ``--repeat`` runs after a warm-up. ``ratio`` = kafka_batch / generated (1.0
would mean Kafka costs nothing). The topic is filled with confluent-kafka, so the producer is not what
is measured. The last line printed is one JSON object.

    python bench/spark.py [--records N] [--partitions P] [--value-size V] [--repeat R] [--master cluster]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from aiokafka_lite.spark.schema import arrow_source_schema, source_schema

ROWS_PER_ARROW_BATCH = 8192


class GeneratedSource(DataSource):
    """Rows shaped like the Kafka source's, made in the Python worker: the ceiling of a Python source."""

    @classmethod
    def name(cls) -> str:
        return "bench_generated"

    def schema(self) -> Any:
        return source_schema(False)

    def reader(self, schema: Any) -> DataSourceReader:
        return GeneratedReader(int(self.options["records"]), int(self.options["partitions"]),
                               int(self.options["value_size"]))


class GeneratedReader(DataSourceReader):
    def __init__(self, records: int, partitions: int, value_size: int) -> None:
        self.records, self.parts, self.value_size = records, partitions, value_size

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(p) for p in range(self.parts)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        p = partition.value
        n = self.records // self.parts + (1 if p < self.records % self.parts else 0)
        schema = arrow_source_schema(False)
        size = min(ROWS_PER_ARROW_BATCH, max(n, 1))
        value = b"x" * self.value_size
        template = [
            pa.array([b"k%07d" % i for i in range(size)], pa.binary()),
            pa.array([value] * size, pa.binary()),
            pa.array(["bench"] * size, pa.string()),
            pa.array([p] * size, pa.int32()),
            None,
            pa.array([1_700_000_000_000_000] * size, pa.timestamp("us", tz="UTC")),
            pa.array([0] * size, pa.int32()),
        ]
        done = 0
        while done < n:
            k = min(size, n - done)
            cols = [c.slice(0, k) if c is not None else pa.array(range(done, done + k), pa.int64())
                    for c in template]
            yield pa.RecordBatch.from_arrays(cols, schema=schema)
            done += k


def fill_topic(bootstrap: str, topic: str, records: int, partitions: int, value_size: int) -> float:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1 << 20,
                         "compression.type": "none", "queue.buffering.max.messages": 1_000_000})
    value = b"x" * value_size
    started = time.perf_counter()
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value, b"k%07d" % i, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(300) != 0:
        raise SystemExit("could not produce every record")
    return time.perf_counter() - started


def best_of(repeat: int, fn: Any) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def _session(master: str) -> tuple[Any, Any]:
    """A Spark session on local[2], or on a standalone cluster of two one-core workers started here
    (returned too, to be stopped) once both executors have registered."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("bench-spark")
    cluster = None
    if master == "cluster":
        from aiokafka_lite.testing.spark_cluster import StandaloneSparkCluster

        cluster = StandaloneSparkCluster(workers=2, memory="1g")
        cluster.start()
        builder = builder.master(cluster.url)
        for key, value in cluster.session_config(executor_memory="768m").items():
            builder = builder.config(key, value)
    else:
        builder = builder.master("local[2]")
    spark = (builder.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.memory", "2g")
             .getOrCreate())
    if cluster is not None:
        jsc = spark.sparkContext._jsc.sc()
        deadline = time.monotonic() + 120
        while jsc.getExecutorMemoryStatus().size() < 3:  # the driver and one executor per worker
            if time.monotonic() > deadline:
                spark.stop()
                cluster.stop()
                raise SystemExit("the two executors did not register")
            time.sleep(0.5)
    return spark, cluster


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--broker", choices=("tansu", "noida"), default="tansu")
    ap.add_argument("--bootstrap", help="use this running broker instead of starting one")
    ap.add_argument("--master", choices=("local", "cluster"), default="local",
                    help="local[2], or a standalone cluster of two one-core workers started here on loopback")
    args = ap.parse_args()

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    broker = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        from aiokafka_lite.embedded import start_broker

        broker = start_broker(args.broker)
        bootstrap = broker.bootstrap
    spark = None
    cluster = None
    try:
        topic = f"bench-spark-{os.getpid()}"
        produce_s = fill_topic(bootstrap, topic, args.records, args.partitions, args.value_size)
        print(f"filled {topic} with {args.records} records in {produce_s:.1f} s", file=sys.stderr)

        from aiokafka_lite.spark import register

        spark, cluster = _session(args.master)
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        spark.dataSource.register(GeneratedSource)

        def kafka_batch() -> None:
            (spark.read.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", topic).load().write.format("noop").mode("overwrite").save())

        def kafka_stream() -> None:
            with tempfile.TemporaryDirectory() as ck:
                q = (spark.readStream.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap)
                     .option("subscribe", topic).option("startingOffsets", "earliest").load()
                     .writeStream.format("noop").option("checkpointLocation", ck)
                     .trigger(availableNow=True).start())
                q.awaitTermination()
                error = q.exception()
                if error is not None:
                    raise RuntimeError(f"the streaming run failed: {error}")

        def generated() -> None:
            (spark.read.format("bench_generated").option("records", args.records)
             .option("partitions", args.partitions).option("value_size", args.value_size).load()
             .write.format("noop").mode("overwrite").save())

        count = (spark.read.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap)
                 .option("subscribe", topic).load().count())
        if count != args.records:
            raise SystemExit(f"read {count} rows, expected {args.records}")
        generated()  # warm-up (JVM, Python workers)
        t_gen = best_of(args.repeat, generated)
        t_batch = best_of(args.repeat, kafka_batch)
        t_stream = best_of(args.repeat, kafka_stream)
        n = args.records
        result = {
            "bench": "spark",
            "records": n,
            "partitions": args.partitions,
            "value_size": args.value_size,
            "broker": "external" if args.bootstrap else args.broker,
            "master": "local[2]" if args.master == "local" else "standalone, 2 workers x 1 core",
            "kafka_batch_rows_per_s": round(n / t_batch),
            "kafka_stream_rows_per_s": round(n / t_stream),
            "generated_rows_per_s": round(n / t_gen),
            "ratio": round(t_gen / t_batch, 3),
            "stream_ratio": round(t_gen / t_stream, 3),
        }
        for k, v in result.items():
            print(f"{k:24} {v}", file=sys.stderr)
        print(json.dumps(result))
        return 0
    finally:
        if spark is not None:
            spark.stop()
        if cluster is not None:
            cluster.stop()
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    sys.exit(main())

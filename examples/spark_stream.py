"""Spark Structured Streaming on Kafka without JVM jars: read a topic, aggregate per key in each
micro-batch, write the result to another topic.

    python examples/spark_stream.py [BOOTSTRAP]

Without BOOTSTRAP it starts the embedded development broker (Tansu) for the run. It writes 3000 page
views for 12 pages to ``views``, runs the query with ``Trigger.AvailableNow`` (in micro-batches of at
most 1000 offsets), and each micro-batch writes one record per page seen in it to ``view-counts``:
key = page, value = ``{"batch": n, "views": count, "bytes": total}``. Then it reads ``view-counts``
back with aiokafka_lite's consumer and exits 1 unless the counts add up to 3000.

The per-micro-batch aggregation runs in ``foreachBatch``; its output goes through the sink as a batch
write. At least once by default: if the query fails mid-batch, that batch's counts may be written twice.
On brokers with transactions (Kafka, noida-db) run it with EXACTLY_ONCE=1: each micro-batch is then written
with ``exactlyOnce=true`` and ``writeId=<query id>-<batch id>``, so a replayed batch is not written again.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import uuid
from typing import Any

import aiokafka_lite
from aiokafka_lite import NewTopic, TopicPartition

EXACTLY_ONCE = os.environ.get("EXACTLY_ONCE") == "1"
PAGES = 12
VIEWS = 3000


async def seed(bootstrap: str, source: str, sink: str) -> None:
    async with aiokafka_lite.Admin(bootstrap_servers=bootstrap) as admin:
        await admin.create_topics([NewTopic(source, 3, 1), NewTopic(sink, 1, 1)])
    async with aiokafka_lite.Producer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        for i in range(VIEWS):
            page = f"/page/{i % PAGES}"
            view = {"user": i % 97, "ms": i % 50}
            await producer.send(source, json.dumps(view).encode(), key=page.encode())
        await producer.flush()


async def read_counts(bootstrap: str, sink: str) -> dict[str, int]:
    """Total views per page over every record of ``sink`` (read without a consumer group)."""
    totals: dict[str, int] = {}
    tp = TopicPartition(sink, 0)
    async with aiokafka_lite.Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                      enable_auto_commit=False, isolation_level="read_committed") as consumer:
        consumer.assign([tp])
        end = (await consumer.end_offsets([tp]))[tp]
        while await consumer.position(tp) < end:
            batch = await consumer.poll(timeout_ms=1000)
            for r in batch.get(tp, []):
                page = (r.key or b"").decode()
                totals[page] = totals.get(page, 0) + json.loads(r.value)["views"]
    return totals


def run_query(spark: Any, bootstrap: str, source: str, sink: str, checkpoint: str) -> None:
    from pyspark.sql import functions as F

    views = (spark.readStream.format("aiokafka_lite")
             .option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", source)
             .option("startingOffsets", "earliest")
             .option("maxOffsetsPerTrigger", 1000)
             .load())

    def per_batch(batch_df: Any, batch_id: int) -> None:
        counts = (batch_df.groupBy("key")
                  .agg(F.count("*").alias("views"), F.sum(F.length("value")).alias("bytes"))
                  .select("key", F.to_json(F.struct(F.lit(batch_id).alias("batch"), "views", "bytes"))
                          .alias("value")))
        w = (counts.write.format("aiokafka_lite").mode("append")
             .option("kafka.bootstrap.servers", bootstrap).option("topic", sink))
        if EXACTLY_ONCE:
            w = w.option("exactlyOnce", "true").option("writeId", f"{query_id}-{batch_id}")
        w.save()
        print(f"micro-batch {batch_id}: counts written to {sink}")

    query_id = ""
    query = (views.writeStream.foreachBatch(per_batch)
             .option("checkpointLocation", checkpoint)
             .trigger(availableNow=True)
             .start())
    query_id = str(query.id)
    query.awaitTermination()


def main() -> int:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    broker = None
    if len(sys.argv) > 1:
        bootstrap = sys.argv[1]
    else:
        from aiokafka_lite.embedded import start_broker

        broker = start_broker("tansu")
        bootstrap = broker.bootstrap
    run = uuid.uuid4().hex[:8]
    source, sink = f"views-{run}", f"view-counts-{run}"
    try:
        asyncio.run(seed(bootstrap, source, sink))

        from pyspark.sql import SparkSession

        from aiokafka_lite.spark import register

        spark = (SparkSession.builder.master("local[2]").appName("spark-stream-example")
                 .config("spark.ui.showConsoleProgress", "false")
                 .config("spark.sql.shuffle.partitions", "2").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        try:
            with tempfile.TemporaryDirectory() as checkpoint:
                run_query(spark, bootstrap, source, sink, checkpoint)
        finally:
            spark.stop()

        totals = asyncio.run(read_counts(bootstrap, sink))
    finally:
        if broker is not None:
            broker.stop()
    if sum(totals.values()) != VIEWS or len(totals) != PAGES:
        print(f"FAILED: {sum(totals.values())} views over {len(totals)} pages", file=sys.stderr)
        return 1
    print(f"OK: {VIEWS} views counted over {PAGES} pages: {dict(sorted(totals.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

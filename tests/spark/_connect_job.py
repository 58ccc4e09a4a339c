"""Run by tests/spark/test_connect.py in its own interpreter: the data source through Spark Connect.

``python _connect_job.py BOOTSTRAP SOURCE_TOPIC SINK_TOPIC CHECKPOINT`` starts a local Spark Connect
server (``SparkSession.builder.remote("local[2]")``), registers the source, writes 1000 rows to SINK with
``df.write``, reads them back in a batch, checks that ``endingOffsets`` is refused by ``readStream...load()``,
and streams SOURCE into a memory sink with an ``availableNow`` trigger. Prints one JSON line of counts.
"""

from __future__ import annotations

import json
import sys


def main(bootstrap: str, source: str, sink: str, checkpoint: str) -> int:
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    from aiokafka_lite.spark import register

    spark = (SparkSession.builder.remote("local[2]")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .getOrCreate())
    assert isinstance(spark, ConnectSession), type(spark)
    out: dict[str, object] = {}
    try:
        register(spark)
        rows = spark.range(1000).selectExpr("cast(id as string) as key", "cast(id * 2 as string) as value")
        (rows.write.format("aiokafka_lite").mode("append")
         .option("kafka.bootstrap.servers", bootstrap).option("topic", sink).save())
        back = (spark.read.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", sink).load())
        got = back.selectExpr("partition", "offset", "cast(key as string) k",
                              "cast(value as string) v").collect()
        out["written_read_back"] = len(got)
        out["distinct_positions"] = len({(r.partition, r.offset) for r in got})
        out["values_ok"] = all(int(r.v) == 2 * int(r.k) for r in got)
        out["distinct_keys"] = len({r.k for r in got})
        try:
            (spark.readStream.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", source).option("endingOffsets", "latest").load())
            out["ending_offsets_refused"] = False
        except Exception as exc:  # raised at load(), naming the option
            out["ending_offsets_refused"] = "endingOffsets" in str(exc)
        stream = (spark.readStream.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap)
                  .option("subscribe", source).option("startingOffsets", "earliest").load())
        query = (stream.selectExpr("partition", "offset").writeStream.format("memory")
                 .queryName("connect_rows").option("checkpointLocation", checkpoint)
                 .trigger(availableNow=True).start())
        query.awaitTermination(180)
        streamed = spark.sql("select partition, offset from connect_rows").collect()
        out["streamed"] = len(streamed)
        out["streamed_distinct"] = len({(r.partition, r.offset) for r in streamed})
    finally:
        spark.stop()
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))

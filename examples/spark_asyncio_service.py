"""An asyncio service writes to Kafka with aiokafka_lite; Spark consumes its records as they arrive.

    python examples/spark_asyncio_service.py [BOOTSTRAP]

Without BOOTSTRAP it starts the embedded development broker (Tansu) for the run.

The service (``sensor_service``) is ordinary asyncio code: a few simulated sensors, each a task that
sends a JSON reading every 20 ms through one shared ``aiokafka_lite.Producer``, keyed by sensor id so
that each sensor's readings stay in order in one partition. It runs on its own event loop in a thread,
the way it would run in its own process next to a Spark cluster.

Spark reads the topic with a running streaming query (a 1 s processing-time trigger) and keeps, per
micro-batch, each sensor's reading count and mean temperature in a memory table. When the service has
stopped, the script waits for Spark to catch up and exits 1 unless Spark saw exactly the readings the
service reports having sent (compared by (partition, offset), so a duplicate or a gap would show).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from typing import Any

import aiokafka_lite
from aiokafka_lite import NewTopic

SENSORS = 6
SECONDS = 8.0


async def sensor(producer: aiokafka_lite.Producer, topic: str, sensor_id: int, stop_at: float,
                 sent: list[tuple[int, int]]) -> None:
    temperature = 20.0 + sensor_id
    while time.monotonic() < stop_at:
        temperature += random.uniform(-0.5, 0.5)
        reading = {"sensor": sensor_id, "celsius": round(temperature, 2), "at": time.time()}
        fut = await producer.send(topic, json.dumps(reading).encode(), key=f"sensor-{sensor_id}".encode())
        md = await fut
        sent.append((md.partition, md.offset))
        await asyncio.sleep(0.02)


async def sensor_service(bootstrap: str, topic: str, sent: list[tuple[int, int]]) -> None:
    """The service: SENSORS concurrent tasks sharing one producer for SECONDS seconds."""
    async with aiokafka_lite.Producer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        stop_at = time.monotonic() + SECONDS
        await asyncio.gather(*(sensor(producer, topic, i, stop_at, sent) for i in range(SENSORS)))


async def create_topic(bootstrap: str, topic: str) -> None:
    async with aiokafka_lite.Admin(bootstrap_servers=bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 3, 1)])


def start_query(spark: Any, bootstrap: str, topic: str, checkpoint: str) -> Any:
    from pyspark.sql import functions as F

    readings = (spark.readStream.format("aiokafka_lite")
                .option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", topic)
                .option("startingOffsets", "earliest")
                .load()
                .select("partition", "offset",
                        F.from_json(F.col("value").cast("string"), "sensor INT, celsius DOUBLE, at DOUBLE")
                        .alias("r")))
    return (readings.writeStream.format("memory").queryName("sensor_readings")
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="1 second")
            .start())


def rows_read(spark: Any) -> int:
    return int(spark.sql("select count(*) as n from sensor_readings").collect()[0].n)


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
    topic = f"sensors-{uuid.uuid4().hex[:8]}"
    try:
        asyncio.run(create_topic(bootstrap, topic))

        from pyspark.sql import SparkSession

        from aiokafka_lite.spark import register

        spark = (SparkSession.builder.master("local[2]").appName("asyncio-service-example")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        sent: list[tuple[int, int]] = []
        errors: list[BaseException] = []

        def run_service() -> None:
            try:
                asyncio.run(sensor_service(bootstrap, topic, sent))
            except BaseException as exc:  # the service's failure must reach the script
                errors.append(exc)

        with tempfile.TemporaryDirectory() as checkpoint:
            query = start_query(spark, bootstrap, topic, checkpoint)
            while query.lastProgress is None:  # let the query start before the service does
                if query.exception() is not None:
                    raise query.exception()
                time.sleep(0.2)
            service = threading.Thread(target=run_service, name="sensor-service")
            service.start()
            while service.is_alive():
                service.join(2.0)
                print(f"service sent {len(sent)}, Spark has read {rows_read(spark)}")
            if errors:
                raise errors[0]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if rows_read(spark) >= len(sent):
                    break
                if query.exception() is not None:
                    raise query.exception()
                time.sleep(0.5)
            query.stop()
            seen_rows = spark.sql("select partition, offset from sensor_readings").collect()
            spark.sql("select r.sensor, count(*) as readings, round(avg(r.celsius), 2) as mean_celsius "
                      "from sensor_readings group by r.sensor order by r.sensor").show()
        spark.stop()
    finally:
        if broker is not None:
            broker.stop()
    seen = sorted((r.partition, r.offset) for r in seen_rows)
    if seen != sorted(sent):
        print(f"FAILED: the service sent {len(sent)} readings, Spark read {len(seen)} "
              f"({len(set(seen))} distinct)", file=sys.stderr)
        return 1
    print(f"OK: Spark read each of the {len(sent)} readings the service sent, once")
    return 0


if __name__ == "__main__":
    sys.exit(main())

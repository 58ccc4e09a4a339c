"""PySpark bridge: Kafka topics as a Spark source and sink, through aiokafka_lite.

Spark's own Kafka connector needs JVM jars; this one is a Python data source (PySpark >= 4.2 for
admission control, >= 4.1 for the streaming Arrow writer) built on this package's protocol, records
and client layers::

    from aiokafka_lite.spark import register
    register(spark)
    df = (spark.readStream.format("aiokafka_lite")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092").option("subscribe", "events")
          .option("startingOffsets", "earliest").load())

Options and columns follow Spark's Kafka source and sink; see docs/spark.md.
"""

from __future__ import annotations

from typing import Any


def _check_pyspark() -> None:
    try:
        import pyspark
    except ImportError:
        raise ImportError("aiokafka_lite.spark needs PySpark: pip install 'aiokafka_lite[spark]'") from None
    parts = []
    for piece in pyspark.__version__.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    if tuple(parts) < (4, 2):
        raise ImportError(f"aiokafka_lite.spark needs PySpark >= 4.2 (admission control for Python stream "
                          f"readers), found {pyspark.__version__}")


_check_pyspark()

from .source import FORMAT, KafkaDataSource  # noqa: E402 - after the version check, which gives the clear error

__all__ = ["FORMAT", "KafkaDataSource", "register"]


def register(spark: Any) -> None:
    """Register the data source with a SparkSession as format ``"aiokafka_lite"``."""
    from ._load_check import install

    install()  # batch-only options in readStream fail at load(), as with Spark's own Kafka source
    spark.dataSource.register(KafkaDataSource)

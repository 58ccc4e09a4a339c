"""A streaming read and a batch write on a standalone cluster: a master and two workers from the pyspark
package, on loopback (issue 16). Executors are separate JVMs with their own Python workers, so the options and
readers must pickle and every task must find its broker on its own.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _spark_kafka import create_topic, produce, read_all

from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.testing.spark_cluster import StandaloneSparkCluster

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneSparkCluster]:
    with StandaloneSparkCluster(workers=2, log_dir=tmp_path_factory.mktemp("cluster")) as c:
        yield c


def test_stream_and_batch_write_on_standalone_cluster(cluster: StandaloneSparkCluster, noida: EmbeddedBroker,
                                      new_topic: Callable[..., str],
                                      tmp_path: Path) -> None:
    from pyspark.sql import SparkSession

    from aiokafka_lite.spark import register

    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = SparkSession.builder.master(cluster.url).appName("aiokafka-lite-cluster")
    for key, value in cluster.session_config().items():
        builder = builder.config(key, value)
    session = (builder.config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .getOrCreate())
    try:
        register(session)
        deadline = time.monotonic() + 120
        jsc = session.sparkContext._jsc.sc()
        while jsc.getExecutorMemoryStatus().size() < 3:  # the driver and one executor per worker
            assert time.monotonic() < deadline, "the two executors did not register"
            time.sleep(0.5)
        bootstrap = noida.bootstrap
        topic = new_topic()
        create_topic(bootstrap, topic, 4)
        n = produce(bootstrap, topic, [(i % 4, None, b"c%d" % i) for i in range(20_000)])
        df = (session.readStream.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic).option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", "8000").load())
        q = (df.selectExpr("partition", "offset").writeStream.format("memory").queryName("cluster_rows")
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start())
        q.awaitTermination(180)
        assert q.exception() is None, q.exception()
        got = session.sql("select count(*), count(distinct partition, offset) from cluster_rows").collect()[0]
        print(f"cluster: rows {got[0]}, distinct (partition, offset) {got[1]}, produced {n}")
        assert (got[0], got[1]) == (n, n)
        # A batch write from both executors: every row lands once.
        out = new_topic("out")
        create_topic(bootstrap, out, 3)
        (session.range(10_000).selectExpr("cast(id as string) as value").repartition(2).write
         .format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap).option("topic", out)
         .mode("append").save())
        written = sorted(int(v) for _p, _o, _k, v in read_all(bootstrap, out) if v is not None)
        print(f"cluster write: {len(written)} records, {len(set(written))} distinct")
        assert written == list(range(10_000))
    finally:
        session.stop()

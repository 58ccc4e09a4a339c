"""A streaming read on a standalone cluster: a master and two workers from the pyspark package, on
loopback (issue 16). Executors are separate JVMs with their own Python workers, so the options and
readers must pickle and every task must find its broker on its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _spark_kafka import create_topic, produce

from aiokafka_lite.embedded import EmbeddedBroker, free_port, stop_pid

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SPARK_HOME": str(_spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "SPARK_WORKER_DIR": str(log.parent / "work")}
    with open(log, "wb") as fh:
        return subprocess.Popen([str(_spark_home() / "bin" / "spark-class"), *args], stdout=fh,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    d = tmp_path_factory.mktemp("cluster")
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    procs = [_start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                     "--webui-port", str(free_port())], d / "master.log")]
    try:
        for i in range(2):
            procs.append(_start(["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                 "--cores", "1", "--memory", "768m", "--webui-port", str(free_port()), url],
                                d / f"worker{i}.log"))
        yield url
    finally:
        for p in reversed(procs):
            stop_pid(p, 10.0)


def test_stream_on_standalone_cluster(cluster: str, noida: EmbeddedBroker, new_topic: Callable[..., str],
                                      tmp_path: Path) -> None:
    from pyspark.sql import SparkSession

    from aiokafka_lite.spark import register

    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master(cluster).appName("aiokafka-lite-cluster")
               .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1").config("spark.executor.cores", "1")
               .config("spark.executor.memory", "512m").config("spark.cores.max", "2")
               .config("spark.executorEnv.PYTHONPATH", str(ROOT))
               .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
               .config("spark.sql.shuffle.partitions", "2").getOrCreate())
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
    finally:
        session.stop()

"""A Spark standalone cluster on loopback for tests and benchmarks: a master and N workers started from
the pyspark package's own scripts (``spark-class``), each stopped by its PID.

Executors run in the workers' JVMs with Python workers of their own, so a job on this cluster proves what
``local[N]`` cannot: options and readers pickle, and every task finds its broker by itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from ..embedded import free_port, stop_pid

__all__ = ["StandaloneSparkCluster"]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


class StandaloneSparkCluster:
    """``with StandaloneSparkCluster(workers=2) as c: SparkSession.builder.master(c.url)...``"""

    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "768m",
                 log_dir: Path | None = None) -> None:
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="aiokafka-lite-spark-"))
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self._procs: list[subprocess.Popen[bytes]] = []

    def _start(self, args: list[str], log: Path) -> None:
        env = {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
               "PYSPARK_PYTHON": sys.executable, "SPARK_WORKER_DIR": str(self.log_dir / "work")}
        with open(log, "wb") as fh:
            self._procs.append(subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), *args], stdout=fh, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=env, start_new_session=True))

    def start(self) -> None:
        try:
            self._start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                         str(self.port), "--webui-port", str(free_port())], self.log_dir / "master.log")
            for i in range(self.workers):
                self._start(["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores",
                             str(self.cores), "--memory", self.memory, "--webui-port", str(free_port()),
                             self.url], self.log_dir / f"worker{i}.log")
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for p in reversed(self._procs):
            stop_pid(p, 10.0)
        self._procs.clear()

    def session_config(self, executor_memory: str = "512m") -> dict[str, Any]:
        """Spark settings for a session on this cluster: loopback driver, one executor per worker, the
        executors' Python the driver's (so they import the same aiokafka_lite)."""
        return {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                "spark.executor.cores": str(self.cores), "spark.executor.memory": executor_memory,
                "spark.cores.max": str(self.cores * self.workers),
                "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
                "spark.executorEnv.PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    def __enter__(self) -> StandaloneSparkCluster:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

"""The data source through Spark Connect (issue 16): register, a batch write, a batch read, the load()-time
refusal of ``endingOffsets`` for a stream, and a stream, on ``SparkSession.builder.remote("local[2]")``.

Connect runs in its own interpreter (tests/spark/_connect_job.py): a Connect session and the classic
session of the other Spark tests cannot share one process's JVM gateway.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from _spark_kafka import create_topic, produce

from aiokafka_lite.embedded import EmbeddedBroker

pytestmark = pytest.mark.timeout(400)


def test_register_write_read_and_stream_through_spark_connect(
        tansu: EmbeddedBroker, new_topic: Callable[..., str], tmp_path: Path) -> None:
    source, sink = new_topic("connect-src"), new_topic("connect-sink")
    create_topic(tansu.bootstrap, source, 3)
    create_topic(tansu.bootstrap, sink, 3)
    produce(tansu.bootstrap, source, [(i % 3, str(i).encode(), b"v%d" % i) for i in range(1500)])
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1")
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "_connect_job.py"), tansu.bootstrap, source, sink,
         str(tmp_path / "checkpoint")], capture_output=True, text=True, timeout=360, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-6000:]
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert counts == {"written_read_back": 1000, "distinct_positions": 1000, "values_ok": True,
                      "distinct_keys": 1000, "ending_offsets_refused": True, "streamed": 1500,
                      "streamed_distinct": 1500}, counts

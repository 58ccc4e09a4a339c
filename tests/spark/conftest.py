"""One local SparkSession per test module (starting one takes 6-13 s), with our data source registered.

Executors run Python workers with this interpreter (PYSPARK_PYTHON), so they import the same
aiokafka_lite. Spark is bound to the loopback interface only.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from aiokafka_lite.embedded import EmbeddedBroker


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark.sql import SparkSession

    from aiokafka_lite.spark import register

    session = (SparkSession.builder.master("local[2]").appName("aiokafka-lite-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.streaming.forceDeleteTempCheckpointLocation", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(autouse=True)
def _no_client_outlives_its_test() -> Iterator[None]:
    """Tests that drive the readers or ``SourceClient`` in this process run them on its worker loop, whose
    clients are cached for the process's life: once the test's own broker or mock cluster is gone, they
    would retry metadata until pytest exits. Each test's clients are closed after it."""
    yield
    from aiokafka_lite.spark._client_cache import close_worker_loop

    close_worker_loop()


@pytest.fixture
def bootstrap(broker: EmbeddedBroker) -> str:
    return broker.bootstrap


@pytest.fixture
def ident(new_topic: Callable[..., str]) -> Callable[[str], str]:
    """A fresh SQL-safe identifier (memory-sink query names)."""
    def make(prefix: str) -> str:
        return re.sub(r"[^a-zA-Z0-9_]", "_", new_topic(prefix))
    return make

"""A failed sink task reports its own error, even when cleaning up after it fails too (no Spark JVM)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyarrow as pa
import pytest

from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.spark._client_cache import close_worker_loop
from aiokafka_lite.spark.options import parse_sink_options
from aiokafka_lite.spark.writer import _write_at_least_once


def test_a_failed_task_raises_its_own_error_when_its_cleanup_fails(
    tansu: EmbeddedBroker, new_topic: Callable[..., str]
) -> None:
    """The rows' iterator fails after the worker loop was closed under it (the Python worker shuts
    down): the discard of the task's producer then fails too, and the task still raises the rows'
    error, with the discard's failure as a note, not the other way round."""
    options = parse_sink_options({"kafka.bootstrap.servers": tansu.bootstrap, "topic": new_topic()})

    def batches() -> Iterator[pa.RecordBatch]:
        close_worker_loop()
        raise ValueError("the rows failed")
        yield pa.record_batch({"value": pa.array([b"x"])})  # (a generator)

    with pytest.raises(ValueError, match="the rows failed") as info:
        _write_at_least_once(options, batches(), 0)
    assert any("discarding this task's producer failed too" in note for note in info.value.__notes__)

"""Exactly-once writes: one Kafka transaction per Spark write task, made idempotent across replays.

What is guaranteed (sink option ``exactlyOnce=true``; brokers with transactions, e.g. noida-db, Kafka):

* Each write task sends its rows inside one transaction, with a transactional id derived from the
  query (or job) and the task's partition index: ``<prefix>-<queryId>-<partitionId>``. Starting the
  producer (InitProducerId) fences every earlier attempt of the same task and aborts its open
  transaction, so a zombie or a failed attempt never adds rows.
* In the same transaction the task commits a *marker*: offset ``batchId + 1`` for partition 0 of the
  marker topic, in a consumer group named after the transactional id. Before writing, a task reads its
  marker; if the batch is already recorded there, it writes nothing. So when Spark re-runs a
  micro-batch (after a driver crash, a restart from the checkpoint, or a task retried after it had
  committed), the rows of each (micro-batch, task) are committed exactly once.
* Consumers with ``isolation.level=read_committed`` see each task's rows all at once or not at all.

What is *not* guaranteed: a micro-batch's tasks commit independently, so a read_committed consumer can
see some tasks' rows of a micro-batch before the others'; and replays must produce the same rows in the
same task partitions (a deterministic query, as every exactly-once sink of Spark assumes). Consumers
with read_uncommitted see rows of aborted attempts too. A batch ``df.write`` gets the same per-task
guarantee for the retries of its tasks; running the job again is a new job and writes again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..structs import TopicPartition

__all__ = ["TaskTransaction", "task_transaction"]

_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]")


@dataclass(frozen=True)
class TaskTransaction:
    """The transactional identity of one write task and where its progress marker lives."""

    transactional_id: str
    marker_group: str
    marker_partition: TopicPartition
    batch_id: int

    @property
    def marker_offset(self) -> int:
        """The marker value that says "this batch is committed"."""
        return self.batch_id + 1


def task_transaction(prefix: str, scope: str, partition_id: int, batch_id: int,
                     marker_topic: str) -> TaskTransaction:
    """Name the transaction of task ``partition_id`` of micro-batch ``batch_id`` of ``scope``.

    ``scope`` is the streaming query's id (stable across restarts from the same checkpoint) or, for a
    batch write, an id drawn when the write was planned.
    """
    tid = _UNSAFE.sub("_", f"{prefix}-{scope}-{partition_id}")
    return TaskTransaction(tid, tid, TopicPartition(marker_topic, 0), batch_id)

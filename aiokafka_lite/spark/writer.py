"""``df.write`` / ``df.writeStream`` with ``format("aiokafka_lite")``: the Kafka sink.

Columns, as in Spark's Kafka sink: ``value`` (required, binary or string; null writes a tombstone),
``key`` (binary or string), ``topic`` (string; the ``topic`` option, when set, overrides it),
``partition`` (int; null lets the partitioner choose) and ``headers``
(``array<struct<key string, value binary>>``). Other columns are ignored.

Delivery, by default *at least once*: each task sends through an idempotent producer (no duplicates
from the producer's own retries, order kept per partition) and does not finish until every record is
acknowledged; any failure fails the task, and Spark's retry of the task may write some rows again.
With ``exactlyOnce=true`` each task writes inside a Kafka transaction; see ``transactions.py`` for
exactly what that guarantees.

Tasks receive Arrow record batches (PySpark's Arrow writers) and hand each batch's rows to the
producer's ``send_many`` per destination topic: no Spark Row and no ``send`` call per row. The
idempotent producer is kept per configuration in the worker process (``_client_cache``) and reused by
later tasks; transactional producers are made per task, because starting one is what fences the
task's earlier attempts.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from ..errors import IllegalArgumentError, KafkaError
from ._client_cache import config_key, worker_loop
from ._source_client import retry_until
from .options import SinkOptions
from .porting import bootstrap_text, live_settings
from .transactions import TaskTransaction, task_transaction

__all__ = ["KafkaBatchWriter", "KafkaStreamWriter", "WriteResult"]

log = logging.getLogger("aiokafka_lite.spark")

_DELIVERY_TIMEOUT_S = 600.0


@dataclass
class WriteResult(WriterCommitMessage):
    """What one task reports to the driver."""

    partition_id: int
    rows: int
    skipped: bool = False
    transactional_id: str | None = None


# -- rows out of Arrow ---------------------------------------------------------------------------


@dataclass
class SendGroup:
    """Rows of one Arrow batch bound for one topic (and one partition, or the partitioner's choice)."""

    topic: str
    partition: int | None
    values: list[bytes | None]
    keys: list[bytes | None] | None
    headers: list[list[tuple[str, bytes | None]]] | None


def _bytes_column(batch: pa.RecordBatch, name: str) -> list[bytes | None] | None:
    idx = batch.schema.get_field_index(name)
    if idx < 0:
        return None
    col = batch.column(idx)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        col = col.cast(pa.binary())  # UTF-8 bytes, without a Python str per row
    out: list[bytes | None] = col.to_pylist()
    return out


def _column(batch: pa.RecordBatch, name: str) -> list[Any] | None:
    idx = batch.schema.get_field_index(name)
    if idx < 0:
        return None
    out: list[Any] = batch.column(idx).to_pylist()
    return out


def _headers(raw: Any) -> list[tuple[str, bytes | None]]:
    if not raw:
        return []
    out = []
    for h in raw:
        value = h["value"]
        out.append((h["key"], value.encode("utf-8") if isinstance(value, str) else value))
    return out


def batch_groups(batch: pa.RecordBatch, options: SinkOptions) -> list[SendGroup]:
    """Split an Arrow batch by destination, with Spark's sink rules; row order kept within a group."""
    n = batch.num_rows
    values = _bytes_column(batch, "value")
    if values is None:
        raise IllegalArgumentError("the sink needs a 'value' column")
    keys = _bytes_column(batch, "key")
    if keys is not None and all(k is None for k in keys):
        keys = None
    raw_headers = _column(batch, "headers") if options.include_headers is not False else None
    headers = [_headers(h) for h in raw_headers] if raw_headers is not None else None
    if headers is not None and not any(headers):
        headers = None
    parts = _column(batch, "partition")
    if parts is not None and all(p is None for p in parts):
        parts = None
    if options.topic is not None:
        topics: list[Any] | None = None
    else:
        topics = _column(batch, "topic")
        if topics is None or any(t is None for t in topics):
            raise IllegalArgumentError("a row has no 'topic' and the sink has no 'topic' option")
        if len(set(topics)) == 1:
            topics = None if n == 0 else topics
    if topics is None and parts is None:
        topic = options.topic if options.topic is not None else (_column(batch, "topic") or [""])[0]
        return [SendGroup(topic, None, values, keys, headers)] if n else []
    groups: dict[tuple[str, int | None], list[int]] = {}
    for i in range(n):
        dest = (topics[i] if topics is not None else options.topic, parts[i] if parts is not None else None)
        groups.setdefault(dest, []).append(i)  # type: ignore[arg-type]
    return [SendGroup(t, p, [values[i] for i in idx], [keys[i] for i in idx] if keys is not None else None,
                      [headers[i] for i in idx] if headers is not None else None)
            for (t, p), idx in groups.items()]


# -- sending (coroutines run on the worker loop) ---------------------------------------------------


class _Sender:
    """Sends through one producer, a whole group per call; checks deliveries as they complete."""

    def __init__(self, producer: Any) -> None:
        self.producer = producer
        self.pending: deque[Any] = deque()
        self.rows = 0

    async def send(self, groups: list[SendGroup]) -> None:
        for g in groups:
            fut = await self.producer.send_many(g.topic, g.values, g.keys, partition=g.partition,
                                                headers=g.headers)
            self.pending.append(fut)
            self.rows += len(g.values)
        while self.pending and self.pending[0].done():
            await self.pending.popleft()  # raises the first failed delivery

    async def finish(self) -> int:
        await self.producer.flush()
        while self.pending:
            await self.pending.popleft()
        return self.rows


async def _shared_producer(options: SinkOptions) -> tuple[str, Any]:
    from ..producer import Producer

    key = config_key("producer", options.client)

    async def make() -> Any:
        return await _started(lambda: Producer(**live_settings(options.client)), options)

    async def close(p: Any) -> None:
        await p.stop()

    return key, await worker_loop().client(key, make, close)


async def _started(new_producer: Any, options: SinkOptions) -> Any:
    """A started producer, waiting out unreachable brokers (a restart) within delivery_timeout_ms, as
    its sends would: a task that begins while a broker restarts must not fail at once. Each attempt
    uses a new producer (a failed start leaves one stopped)."""
    timeout_ms = int(options.client.get("delivery_timeout_ms", 120_000))

    async def attempt() -> Any:
        producer = new_producer()
        try:
            await producer.start()
        except BaseException:
            with contextlib.suppress(Exception):  # the start's error is the one to report
                await producer.stop()
            raise
        return producer

    return await retry_until(
        f"starting a producer for {bootstrap_text(options.client.get('bootstrap_servers'))}",
        timeout_ms, int(options.client.get("retry_backoff_ms", 100)) / 1000.0, attempt,
                      bound="delivery_timeout_ms")


async def _read_marker(options: SinkOptions, txn: TaskTransaction) -> int | None:
    from ..consumer import Consumer

    settings = {k: v for k, v in live_settings(options.client).items() if k in _COMMON_KEYS}
    consumer = Consumer(group_id=txn.marker_group, enable_auto_commit=False, **settings)
    await consumer.start()
    try:
        committed = await consumer.committed(txn.marker_partition)
    finally:
        await consumer.stop()
    if committed is None:
        return None
    return int(getattr(committed, "offset", committed))


def _common_keys() -> frozenset[str]:
    from ..config import COMMON

    return frozenset(s.name for s in COMMON)


_COMMON_KEYS = _common_keys()


# -- the task body -----------------------------------------------------------------------------------


def _write_at_least_once(options: SinkOptions, batches: Iterator[pa.RecordBatch],
                         partition_id: int) -> WriteResult:
    loop = worker_loop()
    key, producer = loop.run(_shared_producer(options), _DELIVERY_TIMEOUT_S)
    sender = _Sender(producer)
    try:
        inflight = None
        for batch in batches:
            rows = batch_groups(batch, options)
            if inflight is not None:
                loop.wait(inflight, _DELIVERY_TIMEOUT_S)
            inflight = loop.submit(sender.send(rows))
        if inflight is not None:
            loop.wait(inflight, _DELIVERY_TIMEOUT_S)
        rows_sent = loop.run(sender.finish(), _DELIVERY_TIMEOUT_S)
    except BaseException as exc:
        # The producer may hold records of this failed task; don't let a later task inherit them. The
        # task's own error is what Spark must report: a failed discard (a closed worker loop) is a note.
        try:
            loop.run(loop.discard(key), 60.0)
        except Exception as cleanup:
            exc.add_note(f"discarding this task's producer failed too: {cleanup!r}")
        raise
    return WriteResult(partition_id, rows_sent)


def _write_transactional(options: SinkOptions, batches: Iterator[pa.RecordBatch], partition_id: int,
                         txn: TaskTransaction) -> WriteResult:
    from ..producer import Producer

    loop = worker_loop()
    producer = loop.run(_started(lambda: Producer(**live_settings(options.client),  # fences earlier
                                                  transactional_id=txn.transactional_id),  # attempts
                                 options), _DELIVERY_TIMEOUT_S)
    try:
        marker = loop.run(_read_marker(options, txn), _DELIVERY_TIMEOUT_S)
        if marker is not None and marker >= txn.marker_offset:
            log.info("%s: batch %d already committed (marker %d); writing nothing", txn.transactional_id,
                     txn.batch_id, marker)
            return WriteResult(partition_id, 0, skipped=True, transactional_id=txn.transactional_id)
        sender = _Sender(producer)
        loop.run(producer.begin_transaction(), _DELIVERY_TIMEOUT_S)
        try:
            for batch in batches:
                loop.run(sender.send(batch_groups(batch, options)), _DELIVERY_TIMEOUT_S)
            rows = loop.run(sender.finish(), _DELIVERY_TIMEOUT_S)
            loop.run(producer.send_offsets_to_transaction({txn.marker_partition: txn.marker_offset},
                                                          txn.marker_group), _DELIVERY_TIMEOUT_S)
            loop.run(producer.commit_transaction(), _DELIVERY_TIMEOUT_S)
        except BaseException:
            try:
                loop.run(producer.abort_transaction(), 60.0)
            except Exception as exc:  # the first error matters; the next attempt fences us anyway
                log.warning("%s: abort after a failed write also failed: %s", txn.transactional_id, exc)
            raise
        return WriteResult(partition_id, rows, transactional_id=txn.transactional_id)
    finally:
        loop.run(producer.stop(), 60.0)


def _naming_brokers(options: SinkOptions, write: Any) -> WriteResult:
    """Run a task's write; a Kafka error (e.g. records not delivered within delivery_timeout_ms while
    a broker is down: the producer's message names the partition and node) also gets the brokers'
    addresses and the topic, which Spark shows with the task's failure."""
    try:
        result: WriteResult = write()
        return result
    except KafkaError as exc:
        note = (f"Kafka sink: brokers {bootstrap_text(options.client.get('bootstrap_servers'))}, topic "
                f"{options.topic if options.topic is not None else '(from the topic column)'}")
        add_note = getattr(exc, "add_note", None)  # Python 3.11+
        if add_note is None:
            raise KafkaError(f"{exc}\n{note}") from exc
        add_note(note)
        raise


def _task_context() -> Any:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        raise KafkaError("the Kafka sink must run inside a Spark task")
    return ctx


def _marker_topic(options: SinkOptions) -> str:
    if options.topic is None:
        raise IllegalArgumentError(
            "exactlyOnce needs the sink option 'topic' (it also holds the progress marker)")
    return options.topic


class KafkaBatchWriter(DataSourceArrowWriter):
    """``df.write``: every task sends its rows; the job succeeds when every task's rows are acknowledged."""

    def __init__(self, options: SinkOptions) -> None:
        self.options = options
        # Drawn once at planning and pickled to every task: the scope of the tasks' transactional ids.
        self.job_id = options.write_id or uuid.uuid4().hex

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        ctx = _task_context()
        if self.options.exactly_once:
            txn = task_transaction(self.options.transactional_id_prefix, self.job_id, ctx.partitionId(), 0,
                                   _marker_topic(self.options))
            return _naming_brokers(
                self.options, lambda: _write_transactional(self.options, iterator, ctx.partitionId(), txn))
        return _naming_brokers(
            self.options, lambda: _write_at_least_once(self.options, iterator, ctx.partitionId()))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        rows = sum(m.rows for m in messages if isinstance(m, WriteResult))
        log.info("Kafka sink: job %s wrote %d rows in %d tasks", self.job_id, rows, len(messages))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        log.warning("Kafka sink: job %s failed; rows of finished tasks stay in Kafka", self.job_id)


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream``: as the batch writer, per micro-batch; transactions keyed by query and batch."""

    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteResult:
        ctx = _task_context()
        if self.options.exactly_once:
            query_id = ctx.getLocalProperty("sql.streaming.queryId")
            batch_id = ctx.getLocalProperty("streaming.sql.batchId")
            if not query_id or batch_id is None:
                raise KafkaError("exactlyOnce: Spark did not tell the task its query id and batch id")
            txn = task_transaction(self.options.transactional_id_prefix, query_id, ctx.partitionId(),
                                   int(batch_id), _marker_topic(self.options))
            return _naming_brokers(
                self.options, lambda: _write_transactional(self.options, iterator, ctx.partitionId(), txn))
        return _naming_brokers(
            self.options, lambda: _write_at_least_once(self.options, iterator, ctx.partitionId()))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        rows = sum(m.rows for m in messages if isinstance(m, WriteResult))
        skipped = sum(1 for m in messages if isinstance(m, WriteResult) and m.skipped)
        log.info("Kafka sink: micro-batch %d wrote %d rows (%d tasks had already committed)", batchId, rows,
                 skipped)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.warning("Kafka sink: micro-batch %d failed; Spark will run it again", batchId)

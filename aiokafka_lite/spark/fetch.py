"""Reading exactly the offsets ``[start, end)`` of one partition, as Arrow record batches (executor side).

The loop stops when the fetch position reaches ``end``, never on a row count: compaction removes
offsets and transaction markers occupy offsets that carry no row, so a range of ``n`` offsets may hold
fewer than ``n`` rows. The position advances by the end of each batch the broker returned, whatever
the decoder kept of it.

Fetched bytes go straight to :func:`aiokafka_lite.records.decode_arrow`, which builds the Arrow batch
(and, with ``read_committed``, drops the records of aborted transactions using the fetch response's
aborted-transaction list). Only two cheap column operations follow: timestamps from milliseconds to the
microseconds Spark wants, and dropping ``headers`` unless ``includeHeaders`` is set.

With read_committed, the fetch response lists the aborted transactions to drop. Kafka lists only those
still open at the fetch offset; noida-db 0.2 also lists transactions whose ABORT marker lies *before*
it, and the decoder would then drop later, committed records of the same producer. So an aborted
transaction that started before the fetch position is kept only after checking, once, that its marker
is not between its first offset and the position (``_closed_before``); Kafka's lists pass that check
unchanged.

Fetching and decoding run on the worker's loop thread; the next fetch is issued before the current batch
is handed to Spark, so the network and Spark's own work on a batch overlap.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..errors import KafkaError, KafkaTimeoutError, for_code
from ..records import CONTROL_ABORT, decode_arrow, read_batches
from ..structs import TopicPartition
from ._client_cache import worker_loop
from ._source_client import FetchedPartition, SourceClient
from .data_loss import report_data_loss
from .options import SourceOptions
from .partitioning import OffsetRange
from .schema import arrow_source_schema

__all__ = ["read_range"]

#: Kafka's error codes the fetch loop acts on.
_OFFSET_OUT_OF_RANGE = 1

_TS_US = pa.timestamp("us", tz="UTC")


@dataclass
class _Step:
    """One fetch, decoded: rows in range, where to fetch next, and what the broker said."""

    batch: pa.RecordBatch | None
    next_offset: int
    error_code: int
    high_watermark: int
    log_start_offset: int
    truncated: bool


def _to_spark(batch: pa.RecordBatch, schema: pa.Schema, include_headers: bool) -> pa.RecordBatch:
    ts = batch.column(5)
    if ts.type != _TS_US:
        ts = ts.cast(_TS_US)
    cols = [batch.column(0), batch.column(1), batch.column(2), batch.column(3), batch.column(4), ts,
            batch.column(6)]
    if include_headers:
        cols.append(batch.column(7))
    return pa.RecordBatch.from_arrays(cols, schema=schema)


class _RangeFetcher:
    """Fetch-and-decode steps for one range; every method runs on the worker loop."""

    def __init__(self, options: SourceOptions, rng: OffsetRange) -> None:
        self.options = options
        self.rng = rng
        self.tp = TopicPartition(rng.topic, rng.partition)
        self.schema = arrow_source_schema(options.include_headers)
        client = options.client
        self.max_bytes = int(client.get("max_partition_fetch_bytes", 1 << 20))
        self.max_wait_ms = int(client.get("fetch_max_wait_ms", 500))
        self.check_crcs = bool(client.get("check_crcs", True))
        #: Aborted transactions known to have ended before some position already fetched.
        self._closed: set[tuple[int, int]] = set()
        #: How far the search for an aborted transaction's marker got without finding it.
        self._scanned: dict[tuple[int, int], int] = {}

    async def step(self, position: int, delay_s: float = 0.0) -> _Step:
        if delay_s:
            await asyncio.sleep(delay_s)  # nothing was there a moment ago: don't spin on the broker
        client = await SourceClient.get(self.options.client, self.options.poll_timeout_ms)
        rc = self.options.read_committed
        fetched: FetchedPartition = await client.fetch(
            self.tp, position, max_bytes=self.max_bytes, max_wait_ms=self.max_wait_ms, read_committed=rc,
            timeout_ms=self.options.poll_timeout_ms)
        if fetched.error_code or not fetched.records:
            return _Step(None, position, fetched.error_code, fetched.high_watermark, fetched.log_start_offset,
                         False)
        aborted = None
        if rc and fetched.aborted_transactions is not None:
            aborted = [t for t in fetched.aborted_transactions
                       if t[1] >= position or not await self._closed_before(client, t, position)]
        decoded = decode_arrow(fetched.records, self.rng.topic, self.rng.partition,
                               check_crcs=self.check_crcs, start_offset=position, end_offset=self.rng.end,
                               aborted=aborted)
        batch = None
        if decoded.batch.num_rows:
            batch = _to_spark(decoded.batch, self.schema, self.options.include_headers)
        return _Step(batch, decoded.next_offset, 0, fetched.high_watermark, fetched.log_start_offset,
                     decoded.truncated)

    async def _closed_before(self, client: SourceClient, txn: tuple[int, int], position: int) -> bool:
        """Whether aborted transaction ``(producer_id, first_offset)`` ended before ``position``."""
        if txn in self._closed:
            return True
        pid, first = txn
        offset = max(first, self._scanned.get(txn, first))
        while offset < position:
            got = await client.fetch(self.tp, offset, max_bytes=self.max_bytes, max_wait_ms=10,
                                     read_committed=False, timeout_ms=self.options.poll_timeout_ms)
            if got.error_code or not got.records:
                break  # can't tell: treat it as open, as the broker's list says
            advanced = offset
            for batch in read_batches(got.records, check_crcs=self.check_crcs):
                if batch.base_offset >= position:
                    advanced = position
                    break
                if (batch.producer_id == pid and batch.is_control and batch.base_offset >= first
                        and batch.control_type == CONTROL_ABORT):
                    self._closed.add(txn)
                    return True
                advanced = max(advanced, batch.next_offset)
            if advanced <= offset:
                break
            offset = advanced
        self._scanned[txn] = offset
        return False

    async def earliest(self) -> int:
        client = await SourceClient.get(self.options.client, self.options.poll_timeout_ms)
        found = await client.retrying(
            f"asking for the earliest offset of {self.tp.topic}-{self.tp.partition}",
            self.options.poll_timeout_ms,
            lambda: client.list_offsets([self.tp], -2, self.options.read_committed))
        off = found.get(self.tp)
        if off is None:
            raise KafkaError(f"no earliest offset for {self.tp}")
        return off


def _out_of_range(options: SourceOptions, rng: OffsetRange, position: int, earliest: int) -> int:
    """OFFSET_OUT_OF_RANGE at ``position``: data loss to report (or fail on); where to go on (``rng.end``
    when the position is past the log's end: nothing more to read)."""
    where = f"Cannot fetch {rng.topic}-{rng.partition} at offset {position}"
    if position < earliest:
        report_data_loss(options.fail_on_data_loss,
                         f"{where}: the earliest offset is now {earliest}; offsets [{position}, "
                         f"{min(earliest, rng.end)}) are gone.")
        return earliest
    report_data_loss(options.fail_on_data_loss,
                     f"{where}: it is beyond the end of the log (was the log truncated?); offsets "
                     f"[{position}, {rng.end}) are gone.")
    return rng.end


def _stalled(options: SourceOptions, rng: OffsetRange, fetcher: _RangeFetcher, step: _Step,
             position: int) -> None:
    """No progress for kafkaConsumer.pollTimeoutMs: a batch too big to fetch fails the task; missing
    offsets are data loss (reported, or failed on)."""
    if step.truncated:
        raise KafkaError(f"a record batch of {fetcher.tp} at offset {position} is larger than "
                         f"max.partition.fetch.bytes={fetcher.max_bytes}; raise "
                         "kafka.max.partition.fetch.bytes")
    report_data_loss(options.fail_on_data_loss,
                     f"{rng.topic}-{rng.partition} has no records at offset {position} "
                     f"(high watermark {step.high_watermark}) although the range ends at "
                     f"{rng.end}; offsets [{position}, {rng.end}) are missing.")


def read_range(options: SourceOptions, rng: OffsetRange) -> Iterator[pa.RecordBatch]:
    """Yield the rows of offsets ``[rng.start, rng.end)`` as record batches in the source's schema."""
    if rng.size <= 0:
        return
    loop = worker_loop()
    fetcher = _RangeFetcher(options, rng)
    timeout_s = options.poll_timeout_ms / 1000.0
    # A step retries through broker restarts for up to pollTimeoutMs and then raises an error naming the
    # broker; the wait here only catches a step that hangs beyond that (one more request's worth).
    step_timeout_s = timeout_s + (int(options.client.get("request_timeout_ms", 30000))
                                  + fetcher.max_wait_ms) / 1000.0 + 5.0
    position = rng.start
    pending: Any = loop.submit(fetcher.step(position))
    stalled_since: float | None = None
    try:
        while position < rng.end:
            try:
                step: _Step = loop.result(pending, step_timeout_s)
            except FutureTimeout:
                raise KafkaTimeoutError(f"fetching {fetcher.tp} at offset {position} took longer than "
                                        f"kafkaConsumer.pollTimeoutMs={options.poll_timeout_ms}") from None
            pending = None
            if step.error_code == _OFFSET_OUT_OF_RANGE:
                position = _out_of_range(options, rng, position, loop.run(fetcher.earliest(), step_timeout_s))
                if position < rng.end:
                    pending = loop.submit(fetcher.step(position))
                continue
            if step.error_code:
                raise for_code(step.error_code)(f"fetching {fetcher.tp} at offset {position}")
            if step.next_offset > position:
                position = step.next_offset
                stalled_since = None
                if position < rng.end:
                    pending = loop.submit(fetcher.step(position))  # prefetch while Spark takes this batch
                if step.batch is not None:
                    yield step.batch
                continue
            # No progress: the broker has nothing at this position (yet), or a batch too big to fit.
            now = time.monotonic()
            if stalled_since is None:
                stalled_since = now
            elif now - stalled_since > timeout_s:
                _stalled(options, rng, fetcher, step, position)
                return
            if step.truncated:
                fetcher.max_bytes = min(fetcher.max_bytes * 2, 1 << 30)
            pending = loop.submit(fetcher.step(position, 0.0 if step.truncated else 0.1))
    finally:
        if pending is not None:
            pending.cancel()

"""Splitting a batch the broker refused as too large (MESSAGE_TOO_LARGE / RECORD_LIST_TOO_LARGE).

A batch can be larger than the broker's ``max.message.bytes`` although every record fits (the topic's
limit is lower than ``batch_size``, or compression did worse than hoped). As the Java client does, such
a batch of more than one record is cut in two halves by record count, each re-encoded with the records
layer's :class:`BatchBuilder`, and both go back to the head of the partition's queue in order; only a
single record that is still too large fails its caller's future.

The callers hold handles on the original batch's :class:`BatchResult`; it records its halves in
``parts``, so each handle answers with the outcome of the half that holds its record, and the original
result is done once every part is.

With idempotence the broker accepted no sequence of the refused batch, so the halves take its sequence
range in place (``base``, ``base + k``): batches sent after it keep theirs and follow without an epoch
bump, as in Java's ``ProducerBatch.split``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import MessageTooLargeError, RecordListTooLargeError
from ..records import BatchBuilder, read_batches
from .batch import BatchState, ProducerBatch
from .handles import BatchResult, make_future

if TYPE_CHECKING:
    from .accumulator import RecordAccumulator

__all__ = ["SPLIT_CODES", "can_split", "settle_parents", "split_batch"]

#: Answers that mean "this batch is too large", not "this record is".
SPLIT_CODES = frozenset({MessageTooLargeError.errno, RecordListTooLargeError.errno})
_INT32_MAX = 0x7FFFFFFF


def can_split(batch: ProducerBatch, code: int | None) -> bool:
    return code in SPLIT_CODES and batch.data is not None and batch.record_count > 1


def split_batch(batch: ProducerBatch, acc: RecordAccumulator) -> list[ProducerBatch]:
    """Two batches holding ``batch``'s records (first half, second half), for
    :meth:`RecordAccumulator.reenqueue_split`; ``batch``'s result gets ``parts`` so the callers' handles
    follow the halves. Reads the accumulator's settings only."""
    assert batch.data is not None
    records = [r for b in read_batches(batch.data) for r in b.records]
    n = len(records)
    half = n // 2
    tp = batch.tp
    parent = batch.result
    parents = [parent, *(batch.parents or ())]
    children: list[ProducerBatch] = []
    parts: list[tuple[int, BatchResult]] = []
    for lo, hi in ((0, half), (half, n)):
        builder = BatchBuilder(acc.compression, batch.uncompressed_size or acc.batch_size,
                               is_transactional=batch.transactional or acc.transactional)
        for r in records[lo:hi]:
            if builder.append(r.timestamp, r.key, r.value, r.headers or None) is None:
                raise AssertionError("a split half does not fit the original batch's size")
        child = ProducerBatch(tp, builder, BatchResult(tp.topic, tp.partition, acc.loop), batch.created, 0)
        child.transition_to(BatchState.SEALED)
        child.parents = parents
        if batch.has_sequence:
            child.set_producer_state(batch.producer_id, batch.producer_epoch,
                                     (batch.base_sequence + lo) & _INT32_MAX, batch.transactional)
        if batch.handles is not None:
            child.handles = [make_future(child.result, j, r.timestamp) for j, r in enumerate(records[lo:hi])]
        children.append(child)
        parts.append((lo, child.result))
    parent.parts = parts
    return children


def settle_parents(batch: ProducerBatch) -> None:
    """``batch`` (a split half) has its outcome: finish each original result all of whose parts are done."""
    for parent in batch.parents or ():
        parts = parent.parts
        if parent.done or parts is None or not all(p.done for _, p in parts):
            return
        parent.set_result(-1, -1)  # each record's outcome is its part's (see BatchResult.locate)

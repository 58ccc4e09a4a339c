"""The ProduceRequest a Sender sends and what its answer means per batch: sans-I/O, no state.

Kept apart from the Sender so the wire rules -- one entry per partition, a DUPLICATE_SEQUENCE_NUMBER
answer being a success (an earlier attempt was written), a partition left out of the answer being an
unknown outcome -- read in one place and can be tested without a connection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..errors import (
    DuplicateSequenceNumberError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    for_code,
)
from ..protocol.messages.produce import ZERO_UUID, PartitionProduceData, ProduceRequest, TopicProduceData
from .batch import ProducerBatch

__all__ = ["Ack", "batch_outcomes", "build_request", "expiry_error"]

_DUP = DuplicateSequenceNumberError.errno
_new = object.__new__


class Ack(NamedTuple):
    """The broker wrote the batch: its first offset (-1 when unknown) and LogAppendTime (-1: none)."""

    base_offset: int
    log_append_time: int


#: ``Ack(a, b)`` without the Python-level ``__new__`` a NamedTuple gets: once per acknowledged batch.
_ack = tuple.__new__


def build_request(batches: Sequence[ProducerBatch], *, acks: int, timeout_ms: int,
                  transactional_id: str | None) -> ProduceRequest:
    """One ProduceRequest for built batches (``batch.data``), one entry per partition.

    Its parts are made without their keyword-argument ``__init__``s, as the generated decoders make
    theirs: every slot is set here (tests/producer/test_produce_wire.py compares them with the
    constructed ones). The constructors cost as much as the rest of building the request.
    """
    by_topic: dict[str, list[PartitionProduceData]] = {}
    for batch in batches:
        tp = batch.tp
        part = _new(PartitionProduceData)
        part.index = tp.partition
        part.records = batch.data
        part._unknown_tagged = None
        parts = by_topic.get(tp.topic)
        if parts is None:
            by_topic[tp.topic] = [part]
        else:
            parts.append(part)
    topics = []
    for name, parts in by_topic.items():
        topic = _new(TopicProduceData)
        topic.name = name
        topic.topic_id = ZERO_UUID
        topic.partition_data = parts
        topic._unknown_tagged = None
        topics.append(topic)
    request = _new(ProduceRequest)
    request.transactional_id = transactional_id
    request.acks = acks
    request.timeout_ms = timeout_ms
    request.topic_data = topics
    request._unknown_tagged = None
    return request


def batch_outcomes(response: Any, batches: Sequence[ProducerBatch], node: int
                   ) -> list[tuple[ProducerBatch, Ack | KafkaError]]:
    """Each batch's outcome in ``response`` (a decoded ProduceResponse)."""
    # Keyed by topic, then partition: no (topic, partition) tuple to build and hash per partition.
    answers: dict[str, dict[int, Any]] = {}
    for topic in response.responses:
        by_index = answers.get(topic.name)
        if by_index is None:
            by_index = answers[topic.name] = {}
        for part in topic.partition_responses:
            by_index[part.index] = part
    out: list[tuple[ProducerBatch, Ack | KafkaError]] = []
    for batch in batches:
        tp = batch.tp
        by_index = answers.get(tp.topic)
        part = by_index.get(tp.partition) if by_index is not None else None
        if part is not None and part.error_code == 0:  # first: the common case, once per batch
            out.append((batch, _ack(Ack, (part.base_offset, part.log_append_time_ms))))
            continue
        where = f"{batch.tp.topic}-{batch.tp.partition}"
        if part is None:
            out.append((batch, KafkaConnectionError(
                f"node {node} answered the produce request without {where}")))
        elif part.error_code == _DUP:
            # Already written by an earlier attempt (I4): that is a success.
            out.append((batch, Ack(part.base_offset if part.base_offset >= 0 else -1, -1)))
        else:
            detail = part.error_message or ""
            if part.record_errors:
                detail = (detail + " " + "; ".join(
                    f"record {e.batch_index}: {e.batch_index_error_message}"
                    for e in part.record_errors)).strip()
            out.append((batch, for_code(part.error_code)(where + (f": {detail}" if detail else ""))))
    return out


def expiry_error(batch: ProducerBatch, leader: int | None, connect_errors: Mapping[int, BaseException],
                 delivery_timeout: float) -> KafkaTimeoutError:
    """Why a batch expired: the last error the broker gave, else what kept it from being sent."""
    if batch.last_error is not None:
        why = f"last error: {type(batch.last_error).__name__}: {batch.last_error}"
    elif leader is None or leader < 0:
        why = "no leader known for the partition"
    elif leader in connect_errors:
        err = connect_errors[leader]
        why = f"never sent: node {leader} unreachable: {type(err).__name__}: {err}"
    else:
        why = f"never sent: node {leader} slow to take it"
    maybe = (" It may have been written by an attempt whose answer never came."
             if batch.unknown_outcome else "")
    return KafkaTimeoutError(
        f"{batch.count()} records for {batch.tp.topic}-{batch.tp.partition} not delivered within "
        f"delivery_timeout_ms={round(delivery_timeout * 1000)} after {batch.attempts} attempts; "
        f"{why}.{maybe}")

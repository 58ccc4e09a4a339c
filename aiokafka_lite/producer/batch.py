"""A batch of records for one partition, from its first append to the broker's answer."""

from __future__ import annotations

from typing import Any

from ..errors import MessageTooLargeError, RecordListTooLargeError
from ..records import BatchBuilder, patch_producer_state
from ..structs import TopicPartition
from .handles import BatchResult

__all__ = ["NO_SEQUENCE", "ProducerBatch"]

NO_SEQUENCE = -1


class ProducerBatch:
    """Records of one partition built into one v2 record batch, plus its send bookkeeping.

    Appends go to ``builder`` while the batch is ``open`` (the newest batch of its partition). The
    Sender closes it when draining: ``close()`` builds the bytes once (compression happens here), and
    the producer id, epoch and base sequence are stamped into the header -- again on a retry after an
    epoch bump, without re-encoding the records.
    """

    __slots__ = (
        "_last_error",
        "attempts",
        "base_sequence",
        "builder",
        "created",
        "data",
        "handles",
        "in_flight",
        "is_open",
        "node",
        "parents",
        "producer_epoch",
        "producer_id",
        "record_count",
        "reserved",
        "result",
        "retry_at",
        "tp",
        "transactional",
        "uncompressed_size",
        "unknown_outcome",
    )

    def __init__(self, tp: TopicPartition, builder: BatchBuilder, result: BatchResult, created: float,
                 reserved: int) -> None:
        self.tp = tp
        self.builder: BatchBuilder | None = builder
        self.result = result
        self.created = created
        self.reserved = reserved
        self.is_open = True
        self.data: bytes | None = None
        self.record_count = 0
        self.uncompressed_size = 0
        self.attempts = 0
        self.retry_at = 0.0
        self.in_flight = False
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = NO_SEQUENCE
        self.transactional = False
        #: True once an attempt ended without knowing whether the broker wrote it (timeout, disconnect).
        self.unknown_outcome = False
        self._last_error: BaseException | None = None
        #: The broker the latest attempt went to.
        self.node = -1
        #: Per-record handles, kept only when interceptors want per-record acknowledgements.
        self.handles: list[Any] | None = None
        #: For a half of a split batch: the results it stands in for, innermost first (see split.py).
        self.parents: list[BatchResult] | None = None

    @property
    def last_error(self) -> BaseException | None:
        """The latest attempt's error."""
        return self._last_error

    @last_error.setter
    def last_error(self, error: BaseException | None) -> None:
        # The broker's "too large" answer names no size: the batch knows it (the error then says it).
        if isinstance(error, (MessageTooLargeError, RecordListTooLargeError)) and error.batch_bytes is None:
            error.batch_bytes = self.size
            error.batch_records = self.record_count
        self._last_error = error

    @property
    def has_sequence(self) -> bool:
        return self.base_sequence != NO_SEQUENCE

    @property
    def size(self) -> int:
        """Bytes this batch puts in a request (estimated before it is built)."""
        if self.data is not None:
            return len(self.data)
        assert self.builder is not None
        return self.builder.size

    def close(self) -> bytes:
        """Stop appends and build the batch bytes (once)."""
        self.is_open = False
        if self.data is None:
            builder = self.builder
            assert builder is not None
            self.record_count = builder.record_count
            self.uncompressed_size = builder.size
            if self.producer_id >= 0:
                builder.set_producer_state(self.producer_id, self.producer_epoch, self.base_sequence)
            self.data = builder.build()
            self.builder = None
        return self.data

    def set_producer_state(self, producer_id: int, epoch: int, base_sequence: int,
                           transactional: bool) -> None:
        """Stamp idempotence fields; on a built batch only the header and CRC change."""
        self.producer_id = producer_id
        self.producer_epoch = epoch
        self.base_sequence = base_sequence
        self.transactional = transactional
        if self.data is not None:
            self.data = patch_producer_state(self.data, producer_id, epoch, base_sequence, transactional)

    def count(self) -> int:
        if self.builder is not None:
            return int(self.builder.record_count)
        return self.record_count

    def __repr__(self) -> str:
        return (f"<ProducerBatch {self.tp.topic}-{self.tp.partition} records={self.count()} "
                f"seq={self.base_sequence} attempts={self.attempts}>")

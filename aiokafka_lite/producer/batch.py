"""A batch of records for one partition, from its first append to the broker's answer."""

from __future__ import annotations

import enum
from typing import Any

from .._state import IllegalTransitionError, table
from ..errors import MessageTooLargeError, RecordListTooLargeError
from ..records import BatchBuilder, patch_producer_state
from ..structs import TopicPartition
from .core import BatchHead
from .handles import BatchResult

__all__ = ["BATCH", "NO_SEQUENCE", "BatchState", "ProducerBatch"]

NO_SEQUENCE = -1


class BatchState(enum.Enum):
    """Where a batch is, from its first append to its outcome."""

    # Members are singletons: hashing by identity keeps the door's table lookups in C (Enum's own
    # __hash__ is a Python call, twice per move, several moves per batch).
    __hash__ = object.__hash__

    OPEN = "open"            # the newest batch of its partition: takes appends
    SEALED = "sealed"        # takes no more (full, a newer batch behind it, or drained); not built yet
    BUILT = "built"          # its bytes are built (compressed); waiting to be sent, or to be retried
    IN_FLIGHT = "in_flight"  # in a Produce request that has no answer yet
    DONE = "done"            # acknowledged, failed, or replaced by its two halves (split.py)


#: The allowed moves; :meth:`ProducerBatch.transition_to` refuses every other.
BATCH: dict[BatchState, frozenset[BatchState]] = table({
    BatchState.OPEN: (BatchState.SEALED, BatchState.DONE),
    BatchState.SEALED: (BatchState.BUILT, BatchState.DONE),
    BatchState.BUILT: (BatchState.IN_FLIGHT, BatchState.DONE),
    BatchState.IN_FLIGHT: (BatchState.BUILT, BatchState.DONE),
    BatchState.DONE: (),
})
_OPEN, _SEALED, _BUILT = BatchState.OPEN, BatchState.SEALED, BatchState.BUILT
_IN_FLIGHT = BatchState.IN_FLIGHT


class ProducerBatch(BatchHead):
    """Records of one partition built into one v2 record batch, plus its send bookkeeping.

    Its ``state`` (:class:`BatchState`) moves only through :meth:`transition_to`, along ``BATCH``.
    Appends go to ``builder`` while it is OPEN (the newest batch of its partition). The Sender drains it
    (SEALED) and ``close()`` builds the bytes once (BUILT; compression happens here), and the producer id,
    epoch and base sequence are stamped into the header -- again on a retry after an epoch bump, without
    re-encoding the records. ``is_open`` and ``in_flight`` are the state as two flags the door keeps, read
    per batch in the append and drain loops as plain attributes; ``builder``, ``result`` and ``is_open``
    are the base class's (:class:`~.core.BatchHead`), which the compiled send path reads as C fields.
    """

    __slots__ = (
        "_last_error",
        "attempts",
        "base_sequence",
        "created",
        "data",
        "handles",
        "in_flight",
        "node",
        "parents",
        "producer_epoch",
        "producer_id",
        "record_count",
        "reserved",
        "retry_at",
        "state",
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
        self.state = _OPEN
        self.is_open = True
        self.in_flight = False
        self.data: bytes | None = None
        self.record_count = 0
        self.uncompressed_size = 0
        self.attempts = 0
        self.retry_at = 0.0
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

    def transition_to(self, new: BatchState) -> None:
        """The only door that changes the state (staying where it is is not a move)."""
        old = self.state
        if new is old:
            return
        if new not in BATCH[old]:
            raise IllegalTransitionError(
                f"batch {self.tp.topic}-{self.tp.partition}: {old.name} -> {new.name} is not a transition")
        self.state = new
        self.is_open = new is _OPEN
        self.in_flight = new is _IN_FLIGHT

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
        """Stop appends and build the batch bytes (once): OPEN or SEALED -> BUILT."""
        if self.data is None:
            if self.state is _OPEN:
                self.transition_to(_SEALED)
            builder = self.builder
            assert builder is not None
            self.record_count = builder.record_count
            self.uncompressed_size = builder.size
            if self.producer_id >= 0:
                builder.set_producer_state(self.producer_id, self.producer_epoch, self.base_sequence)
            self.data = builder.build()
            self.builder = None
            self.transition_to(_BUILT)
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
            return self.builder.record_count  # an int already: no int() call (per batch, twice)
        return self.record_count

    def __repr__(self) -> str:
        return (f"<ProducerBatch {self.tp.topic}-{self.tp.partition} {self.state.name} "
                f"records={self.count()} seq={self.base_sequence} attempts={self.attempts}>")

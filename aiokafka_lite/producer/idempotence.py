"""Idempotence: the producer id and epoch, per-partition sequence numbers, and epoch bumps.

The rules below are numbered; docs/architecture.md lists them with the reasons, and the Sender and the
tests name them (``I1`` ... ``I8``).

I1. A batch gets its sequence when it is first drained and keeps it across retries within an epoch.
I2. At most ONE batch of a partition is in flight at a time. Kafka lets five go, trusting the broker to
    refuse a batch whose predecessor failed (OUT_OF_ORDER_SEQUENCE_NUMBER). Not every broker checks:
    librdkafka's mock cluster checks sequences only for transactional producers
    (``rd_kafka_mock_validate_records`` in rdkafka_mock.c returns early without a TransactionalId), and
    there a failed batch 0 followed by an accepted batch 1 is a reorder nobody can undo. With one batch
    per partition in flight, order never depends on the broker. Requests still pipeline across
    partitions up to ``max_in_flight_requests_per_connection`` per broker.
I3. Retries of a partition go in sequence order (the accumulator re-queues by sequence) -- I2 makes a
    retry go alone.
I4. A batch whose attempt ended without an answer (timeout, broken connection) has an *unknown outcome*:
    the broker may have written it. It is only ever resent under the same epoch and sequence, where the
    broker answers DUPLICATE_SEQUENCE_NUMBER (a success) if it had written it. It is never re-sequenced.
I5. UNKNOWN_PRODUCER_ID or OUT_OF_ORDER_SEQUENCE_NUMBER for a batch, checked in this order:
    b. OUT_OF_ORDER for exactly the next sequence after one the broker acknowledged in this epoch: the
       broker lost acknowledged records. The batch fails with OutOfOrderSequenceNumberError so the
       application learns of the loss (Java fails the batch the same way; librdkafka raises a fatal
       error); the epoch is bumped so later records still go. This holds for a batch of unknown
       outcome too: had its earlier attempt been written, the broker would hold that sequence and
       answer DUPLICATE_SEQUENCE_NUMBER, so the loss is certain and must not hide behind (a);
    a. of unknown outcome: nothing can tell whether the earlier attempt was written, so the batch fails
       with an error that says so (never resent under a new epoch, which could duplicate it);
    c. otherwise (certainly not written): bump the epoch and resend the batch under it.
I6. A sequenced batch that fails for good in the current epoch leaves a gap: bump the epoch.
I7. The bump waits until no batch is in flight and no batch of unknown outcome waits for its retry
    (those retry under the old epoch meanwhile, I4). Nothing else waits for it, so it cannot deadlock:
    in-flight batches end within ``request_timeout_ms`` and unknown-outcome ones within
    ``delivery_timeout_ms``.
I8. A new id or epoch starts every partition again at sequence 0; queued batches are re-sequenced in
    queue order when next drained.

The producer id and epoch themselves are a state machine (states.PidState): NO_PID -> INITIALIZING ->
READY -> BUMP_NEEDED -> BUMPING -> READY, changed only through :meth:`IdempotenceState._to`.
"""

from __future__ import annotations

from .._state import Stateful
from ..errors import KafkaError, OutOfOrderSequenceNumberError
from ..structs import TopicPartition
from .batch import NO_SEQUENCE, ProducerBatch
from .states import PID, PidState, StateMachine

__all__ = ["MAX_IN_FLIGHT_PER_PARTITION", "Decision", "IdempotenceState"]

#: The broker keeps the last five batches per producer and partition for duplicate detection.
MAX_IN_FLIGHT_PER_PARTITION = 5
_INT32_MAX = 0x7FFFFFFF


class Decision:
    """What the Sender does with a batch refused for a producer-state reason (rule I5)."""

    RETRY_NEW_EPOCH = "retry-new-epoch"   # I5c: bump, then resend re-sequenced
    FAIL = "fail"                         # I5a / I5b: fail the batch with the returned error


class _Partition:
    __slots__ = ("last_acked", "next_seq", "sequenced")

    def __init__(self) -> None:
        self.next_seq = 0
        #: Last sequence the broker acknowledged in the current epoch (-1: none yet).
        self.last_acked = -1
        #: Batches holding a sequence and not finished, ordered by sequence (in flight or re-queued).
        self.sequenced: list[ProducerBatch] = []


class IdempotenceState(Stateful[PidState]):
    """Producer id/epoch and sequence bookkeeping; the Sender consults it on every drain. Its state
    (``state``) changes only through ``_to``, along states.PID."""

    def __init__(self, transactional: bool = False) -> None:
        self.producer_id = -1
        self.producer_epoch = -1
        self.transactional = transactional
        self._sm = StateMachine("producer id", PID, PidState.NO_PID)
        #: Why the epoch must be bumped (while BUMP_NEEDED or BUMPING).
        self.bump_reason: BaseException | None = None
        self._partitions: dict[TopicPartition, _Partition] = {}

    @property
    def has_pid(self) -> bool:
        return self.state in (PidState.READY, PidState.BUMP_NEEDED, PidState.BUMPING)

    @property
    def bump_needed(self) -> bool:
        """The epoch must be bumped before new batches may go out (the bump may be in flight)."""
        return self.state in (PidState.BUMP_NEEDED, PidState.BUMPING)

    @property
    def init_in_flight(self) -> bool:
        return self.state in (PidState.INITIALIZING, PidState.BUMPING)

    def begin_init(self) -> bool:
        """InitProducerId goes out now: a first id, or (returns True) a bump of the current one."""
        bump = self.state is PidState.BUMP_NEEDED
        self._to(PidState.BUMPING if bump else PidState.INITIALIZING)
        return bump

    def init_failed(self) -> None:
        """InitProducerId failed; it may be tried again."""
        if self.state is PidState.BUMPING:
            self._to(PidState.BUMP_NEEDED)
        elif self.state is PidState.INITIALIZING:
            self._to(PidState.NO_PID)

    def set_producer_id(self, producer_id: int, epoch: int) -> None:
        """A new id or epoch: every partition starts again at sequence 0 (I8)."""
        if not self.init_in_flight:
            self.begin_init()
        changed = (producer_id, epoch) != (self.producer_id, self.producer_epoch)
        self.producer_id = producer_id
        self.producer_epoch = epoch
        self._to(PidState.READY)
        self.bump_reason = None
        if changed:
            for st in self._partitions.values():
                for batch in st.sequenced:
                    batch.base_sequence = NO_SEQUENCE
                st.sequenced.clear()
                st.next_seq = 0
                st.last_acked = -1

    def request_bump(self, reason: BaseException) -> None:
        # Without an id (or while the first is coming) there is nothing to bump: a fresh id resets all.
        if self.state is PidState.READY:
            self._to(PidState.BUMP_NEEDED)
            self.bump_reason = reason

    def _state(self, tp: TopicPartition) -> _Partition:
        st = self._partitions.get(tp)
        if st is None:
            st = self._partitions[tp] = _Partition()
        return st

    # -- draining -------------------------------------------------------------------------------

    def can_drain(self, tp: TopicPartition, batch: ProducerBatch) -> bool:
        """May ``batch`` (the head of ``tp``'s queue) be sent now?"""
        if not self.has_pid:
            return False
        st = self._partitions.get(tp)
        if st is not None and any(b.in_flight for b in st.sequenced):
            return False  # I2
        if self.bump_needed:
            # I4/I7: only a retry of unknown outcome under its own epoch goes before the bump.
            return (batch.unknown_outcome and batch.has_sequence
                    and batch.producer_epoch == self.producer_epoch)
        if batch.has_sequence and st is not None and st.sequenced and st.sequenced[0] is not batch:
            return False  # I3
        return True

    def bump_blocked(self) -> bool:
        """True while an epoch bump must still wait (I7)."""
        for st in self._partitions.values():
            for b in st.sequenced:
                if b.in_flight or b.unknown_outcome:
                    return True
        return False

    def assign(self, batch: ProducerBatch) -> None:
        """Give a drained batch its sequence (first send in this epoch) and stamp the producer state."""
        if batch.has_sequence and batch.producer_epoch == self.producer_epoch \
                and batch.producer_id == self.producer_id:
            return
        st = self._state(batch.tp)
        count = batch.count()
        seq = st.next_seq
        st.next_seq = (seq + count) & _INT32_MAX
        batch.set_producer_state(self.producer_id, self.producer_epoch, seq, self.transactional)
        st.sequenced.append(batch)

    # -- outcomes -------------------------------------------------------------------------------

    def refused(self, batch: ProducerBatch, error: KafkaError, unknown_pid: bool) -> tuple[str, KafkaError]:
        """The broker refused ``batch`` with UNKNOWN_PRODUCER_ID (``unknown_pid``) or
        OUT_OF_ORDER_SEQUENCE_NUMBER: apply rule I5; returns the decision and the error to fail with."""
        tp = f"{batch.tp.topic}-{batch.tp.partition}"
        st = self._partitions.get(batch.tp)
        if not unknown_pid and batch.producer_epoch == self.producer_epoch and st is not None \
                and st.last_acked >= 0 and batch.base_sequence == (st.last_acked + 1) & _INT32_MAX:
            self.request_bump(error)  # I5b
            return Decision.FAIL, OutOfOrderSequenceNumberError(
                f"{tp}: the broker lost acknowledged records: it refused sequence {batch.base_sequence}, "
                f"the one after the last it acknowledged ({st.last_acked}) to producer "
                f"{self.producer_id}/{self.producer_epoch} ({error})")
        if batch.unknown_outcome:  # I5a
            self.request_bump(error)
            return Decision.FAIL, type(error)(
                f"{tp}: an earlier attempt of this batch (sequence {batch.base_sequence}, "
                f"{batch.count()} records) ended without an answer and the broker now refuses it "
                f"({error}); it may or may not have been written, so it is not sent again")
        self.request_bump(error)  # I5c
        return Decision.RETRY_NEW_EPOCH, error

    def done(self, batch: ProducerBatch, success: bool) -> None:
        """The batch is finished; a sequenced failure leaves a gap that only an epoch bump closes (I6)."""
        st = self._partitions.get(batch.tp)
        if st is None or not batch.has_sequence:
            return
        try:
            st.sequenced.remove(batch)
        except ValueError:
            return
        if batch.producer_epoch != self.producer_epoch or batch.producer_id != self.producer_id:
            return
        if success:
            last = (batch.base_sequence + batch.count() - 1) & _INT32_MAX
            if st.last_acked < 0 or _seq_after(last, st.last_acked):
                st.last_acked = last
        else:
            self.request_bump(OutOfOrderSequenceNumberError(
                f"a batch of {batch.tp.topic}-{batch.tp.partition} with sequence {batch.base_sequence} "
                "failed, leaving a gap"))

    def replace_split(self, batch: ProducerBatch, halves: list[ProducerBatch]) -> None:
        """``batch`` was split: its halves hold its sequence range and take its place in the order."""
        st = self._partitions.get(batch.tp)
        if st is None or not batch.has_sequence:
            return
        try:
            i = st.sequenced.index(batch)
        except ValueError:
            return
        st.sequenced[i:i + 1] = [h for h in halves if h.has_sequence]

    def in_flight_count(self, tp: TopicPartition) -> int:
        st = self._partitions.get(tp)
        return 0 if st is None else sum(1 for b in st.sequenced if b.in_flight)


def _seq_after(a: int, b: int) -> bool:
    """Sequence ``a`` comes after ``b`` (sequences wrap at 2**31)."""
    return ((a - b) & _INT32_MAX) < (1 << 30) and a != b

"""Idempotence: the producer id and epoch, per-partition sequence numbers, and epoch bumps.

The broker remembers, per (producer id, epoch, partition), the last five batches' sequence numbers:
a retried batch that it already wrote is answered as a duplicate instead of being written twice, and
a batch whose sequence does not follow the last one is refused (OUT_OF_ORDER_SEQUENCE_NUMBER). So:

* a batch gets its sequence when it is first drained, and keeps it across retries;
* up to five batches of a partition may be in flight; a batch being *retried* goes alone (the ones
  behind it wait in the queue, already sequenced, in order) -- Java's rule too;
* when a sequence can never be filled -- a sequenced batch failed for good (delivery timeout, fatal
  error), or the broker lost our state (UNKNOWN_PRODUCER_ID, an out-of-order answer for the first
  batch in flight) -- the epoch is bumped (InitProducerId with the current id and epoch, KIP-360;
  a fresh producer id where the broker is older) and every partition starts again at sequence 0.
  The bump waits until nothing is in flight and no retry with an unknown outcome is pending outside
  the broken partitions, so no batch that may already be written is re-sent under the new epoch.
"""

from __future__ import annotations

from ..structs import TopicPartition
from .batch import NO_SEQUENCE, ProducerBatch

__all__ = ["MAX_IN_FLIGHT_PER_PARTITION", "IdempotenceState"]

#: The broker keeps the last five batches per producer and partition for duplicate detection.
MAX_IN_FLIGHT_PER_PARTITION = 5
_INT32_MAX = 0x7FFFFFFF


class _Partition:
    __slots__ = ("last_acked", "next_seq", "sequenced")

    def __init__(self) -> None:
        self.next_seq = 0
        self.last_acked = -1
        #: Batches holding a sequence and not finished, ordered by sequence (in flight or re-queued).
        self.sequenced: list[ProducerBatch] = []


class IdempotenceState:
    """Producer id/epoch and sequence bookkeeping; the Sender consults it on every drain."""

    def __init__(self, transactional: bool = False, max_in_flight: int = MAX_IN_FLIGHT_PER_PARTITION) -> None:
        #: Batches of one partition in flight at once (<= 5, and <= the per-connection limit).
        self.max_in_flight = min(max_in_flight, MAX_IN_FLIGHT_PER_PARTITION)
        self.producer_id = -1
        self.producer_epoch = -1
        self.transactional = transactional
        #: Set when the epoch must be bumped before new batches may go out.
        self.bump_needed = False
        self.bump_reason: BaseException | None = None
        self._partitions: dict[TopicPartition, _Partition] = {}

    @property
    def has_pid(self) -> bool:
        return self.producer_id >= 0

    def set_producer_id(self, producer_id: int, epoch: int) -> None:
        """A new id or epoch: every partition starts again at sequence 0.

        Batches still holding an old sequence are re-queued ones of the partitions that needed the
        reset (see the module docstring); they are re-sequenced when drained again, in queue order.
        """
        changed = (producer_id, epoch) != (self.producer_id, self.producer_epoch)
        self.producer_id = producer_id
        self.producer_epoch = epoch
        self.bump_needed = False
        self.bump_reason = None
        if changed:
            for st in self._partitions.values():
                for batch in st.sequenced:
                    batch.base_sequence = NO_SEQUENCE
                st.sequenced.clear()
                st.next_seq = 0
                st.last_acked = -1

    def request_bump(self, reason: BaseException) -> None:
        if not self.bump_needed:
            self.bump_needed = True
            self.bump_reason = reason

    def _state(self, tp: TopicPartition) -> _Partition:
        st = self._partitions.get(tp)
        if st is None:
            st = self._partitions[tp] = _Partition()
        return st

    # -- draining -------------------------------------------------------------------------------

    def can_drain(self, tp: TopicPartition, batch: ProducerBatch, node: int) -> bool:
        """May ``batch`` (the head of ``tp``'s queue) be sent to ``node`` now?"""
        if self.producer_id < 0:
            return False
        st = self._partitions.get(tp)
        if batch.has_sequence:
            if st is None:
                return True
            if self.bump_needed and not batch.unknown_outcome:
                return False  # certainly not written: it waits for the new epoch and a new sequence
            # A retry goes only when it is the oldest unfinished batch and nothing else is in flight.
            if st.sequenced and st.sequenced[0] is not batch:
                return False
            return not any(b.in_flight for b in st.sequenced)
        if self.bump_needed:
            return False
        if st is None:
            return True
        in_flight = 0
        for b in st.sequenced:
            if not b.in_flight:
                return False  # a sequenced batch waits for its retry: keep order behind it
            if b.node != node:
                # The leader moved while batches are still out to the old one: wait for their answers, so
                # nothing overtakes them even on a broker that does not check sequence numbers.
                return False
            in_flight += 1
        return in_flight < self.max_in_flight

    def bump_blocked(self) -> bool:
        """True while an epoch bump must still wait (batches in flight or retries of unknown outcome)."""
        for st in self._partitions.values():
            for b in st.sequenced:
                if b.in_flight or b.unknown_outcome:
                    return True
        return False

    def assign(self, batch: ProducerBatch) -> None:
        """Give a drained batch its sequence (first send only) and stamp the producer state."""
        if batch.has_sequence and batch.producer_epoch == self.producer_epoch:
            return
        st = self._state(batch.tp)
        count = batch.count()
        seq = st.next_seq
        st.next_seq = (seq + count) & _INT32_MAX if seq + count > _INT32_MAX else seq + count
        batch.set_producer_state(self.producer_id, self.producer_epoch, seq, self.transactional)
        st.sequenced.append(batch)

    # -- outcomes -------------------------------------------------------------------------------

    def is_first_unfinished(self, batch: ProducerBatch) -> bool:
        st = self._partitions.get(batch.tp)
        return st is None or not st.sequenced or st.sequenced[0] is batch

    def expected_sequence(self, batch: ProducerBatch) -> bool:
        """Does ``batch`` follow the last acknowledged sequence of its partition?"""
        st = self._partitions.get(batch.tp)
        if st is None:
            return True
        return batch.base_sequence == (st.last_acked + 1) & _INT32_MAX

    def done(self, batch: ProducerBatch, success: bool) -> None:
        """The batch is finished; a sequenced failure leaves a gap that only an epoch bump closes."""
        st = self._partitions.get(batch.tp)
        if st is None or not batch.has_sequence:
            return
        try:
            st.sequenced.remove(batch)
        except ValueError:
            return
        if success:
            last = (batch.base_sequence + batch.count() - 1) & _INT32_MAX
            if st.last_acked < 0 or _seq_after(last, st.last_acked):
                st.last_acked = last
        elif batch.producer_epoch == self.producer_epoch:
            from ..errors import OutOfOrderSequenceNumberError

            self.request_bump(OutOfOrderSequenceNumberError(
                f"a batch of {batch.tp.topic}-{batch.tp.partition} with sequence {batch.base_sequence} "
                "failed"))

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

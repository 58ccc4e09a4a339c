"""RecordAccumulator: per-partition queues of batches between ``send()`` and the Sender.

``send()`` appends to the newest batch of its partition (a new batch reserves memory from the
:class:`MemoryPool`); the Sender asks :meth:`ready` which leaders have something to send -- a batch
is ready when it is full, has lingered ``linger_ms``, or a flush, a close or a blocked ``send()`` wants
everything out -- and :meth:`drain` takes the head batch of each of those partitions, up to
``max_request_size`` per broker, rotating the start partition so no partition starves.

Ordering: batches leave a partition's queue from the head only, and a retried batch goes back to the
head in sequence order, so a partition's records reach the broker in the order they were sent.

Self-clocking: an open batch that lingered out while its partition's previous batch is in flight waits
for that batch's answer (which wakes the Sender), taking records meanwhile. Once full (see Growth) it
goes at once, as it does for a flush, a close or a blocked ``send()``; other partitions are not held.
Why: each request costs a broker fixed work. With ``linger_ms=0`` at a steady rate, every record would
go as its own request, and a loaded broker answers later, so small requests pile up behind each other.
The rule lowers send-to-ack latency and grows batches at many partitions (docs/performance.md).

Growth: an idempotent producer keeps one batch of a partition in flight (idempotence.py, I2). A full
open batch that cannot go yet (another batch of its partition is ahead of it) takes more records
instead of closing (:meth:`try_grow`: as much again as it holds), up to ``max_batch_bytes``, so a backlog
to one partition goes as a few large batches, one per round trip, rather than many small ones -- what
five batches in flight would give on a far link. Keyless records (uniform sticky) grow a batch by one
``batch_size`` per visit of their partition and then move on, leaving it open to grow on the next visit
(``AppendCore._sticky_next``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from math import inf  # not float("inf"), which parses its string at every call (once per round)

from ..errors import KafkaTimeoutError
from ..structs import TopicPartition
from .append import AppendCore
from .batch import BatchState, ProducerBatch
from .split import settle_parents

__all__ = ["RecordAccumulator"]

#: ``(tp, batch, node) -> bool``: whether the Sender may take this head batch for ``node`` now.
CanDrain = Callable[[TopicPartition, ProducerBatch, int], bool]


class RecordAccumulator(AppendCore):
    """Batches by partition, filled by the send side (:class:`~.append.AppendCore`: partition choice,
    memory, new batches); readiness, draining, retries and expiry for the Sender."""

    # -- the Sender side -------------------------------------------------------------------------

    def ready(self, leader_for: Callable[[TopicPartition], int | None], now: float
              ) -> tuple[set[int], float, set[str]]:
        """Leaders with a sendable batch, seconds until the next batch becomes sendable, and the topics
        whose partitions have data but no known leader (metadata must be refreshed)."""
        ready_nodes: set[int] = set()
        unknown: set[str] = set()
        next_delay = inf
        urgent = self._urgent()
        linger = self.linger
        muted = self.muted
        for tp, dq in self.batches.items():
            if not dq:
                continue
            leader = leader_for(tp)
            if leader is None or leader < 0:
                unknown.add(tp.topic)
                continue
            if leader in ready_nodes or tp in muted:
                continue
            batch = dq[0]
            if batch.in_flight:
                continue
            if batch.attempts and now < batch.retry_at:
                next_delay = min(next_delay, batch.retry_at - now)
                continue
            if urgent or len(dq) > 1 or not batch.is_open or batch.attempts or batch in self.left_full:
                ready_nodes.add(leader)
                continue
            wait = batch.created + linger - now
            if wait > 0:
                if wait < next_delay:  # not min(): per partition and round, and the builtin is a slow call
                    next_delay = wait
            elif not self._waits_for_ahead(tp):
                ready_nodes.add(leader)
        return ready_nodes, next_delay, unknown

    def drain(self, leader_for: Callable[[TopicPartition], int | None], nodes: Iterable[int],
              max_size: int, now: float, can_drain: CanDrain | None = None
              ) -> dict[int, list[ProducerBatch]]:
        """Take head batches of the partitions led by ``nodes``, up to ``max_size`` bytes per node."""
        by_node: dict[int, list[TopicPartition]] = {}
        wanted = set(nodes)
        for tp, dq in self.batches.items():
            if dq:
                leader = leader_for(tp)
                if leader is not None and leader in wanted:
                    by_node.setdefault(leader, []).append(tp)
        out: dict[int, list[ProducerBatch]] = {}
        muted = self.muted
        urgent = self._urgent()
        for node, tps in by_node.items():
            start = self._drain_index.get(node, 0) % len(tps)
            self._drain_index[node] = start + 1
            size = 0
            taken: list[ProducerBatch] = []
            for i in range(len(tps)):
                tp = tps[(start + i) % len(tps)]
                if tp in muted:
                    continue
                dq = self.batches[tp]
                batch = dq[0]
                if batch.in_flight or (batch.attempts and now < batch.retry_at):
                    continue
                if (batch.is_open and not urgent and len(dq) == 1 and self._waits_for_ahead(tp)
                        and batch not in self.left_full):
                    continue
                if can_drain is not None and not can_drain(tp, batch, node):
                    continue
                bsize = batch.size
                if taken and size + bsize > max_size:
                    break
                dq.popleft()
                if batch.is_open:
                    batch.transition_to(BatchState.SEALED)
                self.left_full.discard(batch)
                self.sending[tp] = batch
                size += bsize
                taken.append(batch)
            if taken:
                out[node] = taken
        return out

    def _urgent(self) -> bool:
        """Everything queued goes now, lingering or not: a send() waits for memory, a close or a flush."""
        return self.pool.queued > 0 or self.closed or self.flushes_in_progress > 0

    def _waits_for_ahead(self, tp: TopicPartition) -> bool:
        """Whether ``tp``'s open batch waits for its partition's batch in flight (self-clocking, above)."""
        ahead = self.sending.get(tp)
        return ahead is not None and ahead.in_flight

    def reenqueue(self, batch: ProducerBatch, retry_at: float) -> None:
        """Put a batch that will be retried at ``retry_at`` back at the head of its queue, ordered by
        sequence."""
        batch.transition_to(BatchState.BUILT)
        batch.retry_at = retry_at
        self._insert_head(batch)

    def reenqueue_split(self, batch: ProducerBatch, halves: list[ProducerBatch]) -> None:
        """``batch`` was split: its halves take its place (and its memory reservation) at the head of
        its partition, in order, to go at once."""
        halves[0].reserved = batch.reserved
        batch.reserved = 0
        if self.sending.get(batch.tp) is batch:
            del self.sending[batch.tp]
        self.incomplete.discard(batch)
        self.incomplete.update(halves)
        for half in reversed(halves):
            self._insert_head(half)

    def _insert_head(self, batch: ProducerBatch) -> None:
        if self.sending.get(batch.tp) is batch:
            del self.sending[batch.tp]
        dq = self.batches.get(batch.tp)
        if dq is None:
            dq = self.batches[batch.tp] = deque()
        if batch.has_sequence:
            # Keep sequence order among batches already re-queued (responses may come back out of order).
            i = 0
            for i, other in enumerate(dq):  # noqa: B007
                if not other.has_sequence or other.base_sequence > batch.base_sequence:
                    break
            else:
                i = len(dq)
            dq.insert(i, batch)
        else:
            dq.appendleft(batch)

    def expired(self, now: float) -> list[ProducerBatch]:
        """Queued (not in flight) batches past delivery_timeout_ms; they are removed from the queues."""
        out: list[ProducerBatch] = []
        limit = self.delivery_timeout
        for dq in self.batches.values():
            while dq and not dq[0].in_flight and now - dq[0].created >= limit:
                out.append(dq.popleft())
        return out

    def fail_batch(self, batch: ProducerBatch, error: BaseException) -> None:
        self.complete(batch)
        batch.last_error = error
        batch.result.set_exception(error)
        if batch.parents is not None:
            settle_parents(batch)

    def take_queued(self) -> list[ProducerBatch]:
        """Remove every queued (not in flight) batch from the queues; the caller fails them."""
        taken: list[ProducerBatch] = []
        for dq in self.batches.values():
            while dq:
                batch = dq.popleft()
                if not batch.in_flight:
                    taken.append(batch)
        return taken

    def unsent_batches(self) -> list[ProducerBatch]:
        return [b for dq in self.batches.values() for b in dq]

    def has_unsent(self) -> bool:
        return any(self.batches.values())

    def first_expiry(self) -> float:
        """Earliest creation time among queued batches (for the delivery timeout check)."""
        first = inf
        for dq in self.batches.values():
            if dq and dq[0].created < first:
                first = dq[0].created
        return first

    async def wait_for(self, batches: Iterable[ProducerBatch], timeout: float | None = None) -> None:
        """Wait until each batch has an outcome (not its success: errors stay on the handles)."""
        pending = [b.result.waiter() for b in batches if not b.result.done]
        if not pending:
            return
        _, not_done = await asyncio.wait(pending, timeout=timeout)
        if not_done:
            raise KafkaTimeoutError(f"{len(not_done)} batches still pending after {timeout} s")

    def __repr__(self) -> str:
        queued = sum(len(dq) for dq in self.batches.values())
        return f"<RecordAccumulator queued={queued} incomplete={len(self.incomplete)}>"

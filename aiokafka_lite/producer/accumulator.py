"""RecordAccumulator: per-partition queues of batches between ``send()`` and the Sender.

``send()`` appends to the newest batch of its partition (a new batch reserves memory from the
:class:`MemoryPool`); the Sender asks :meth:`ready` which leaders have something to send -- a batch
is ready when it is full, has lingered ``linger_ms``, or a flush, a close or a blocked ``send()`` wants
everything out -- and :meth:`drain` takes the head batch of each of those partitions, up to
``max_request_size`` per broker, rotating the start partition so no partition starves.

Ordering: batches leave a partition's queue from the head only, and a retried batch goes back to the
head in sequence order, so a partition's records reach the broker in the order they were sent.

Growth: an idempotent producer keeps one batch of a partition in flight (idempotence.py, I2). A full
open batch that cannot go yet (another batch of its partition is ahead of it) takes another
``batch_size`` of records instead of closing (:meth:`try_grow`), up to ``max_batch_bytes``, so a backlog
to one partition goes as a few large batches, one per round trip, rather than many small ones -- what
five batches in flight would give on a far link.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..errors import IllegalArgumentError, KafkaTimeoutError, ProducerClosedError
from ..records import BATCH_OVERHEAD, RECORD_OVERHEAD_MAX, BatchBuilder
from ..structs import TopicPartition
from .batch import ProducerBatch
from .handles import BatchResult
from .memory import MemoryPool
from .split import settle_parents

__all__ = ["RecordAccumulator"]

#: ``(tp, batch, node) -> bool``: whether the Sender may take this head batch for ``node`` now.
CanDrain = Callable[[TopicPartition, ProducerBatch, int], bool]


class RecordAccumulator:
    """Batches by partition; the memory bound; readiness and draining for the Sender."""

    def __init__(self, *, batch_size: int, linger_ms: int, compression: int, pool: MemoryPool,
                 loop: asyncio.AbstractEventLoop, delivery_timeout_ms: int,
                 transactional: bool = False, keep_handles: bool = False, max_batch_bytes: int = 0) -> None:
        self.batch_size = batch_size
        self.linger = linger_ms / 1000
        self.compression = compression
        self.pool = pool
        self.loop = loop
        self.delivery_timeout = delivery_timeout_ms / 1000
        self.transactional = transactional
        self.keep_handles = keep_handles
        self.batches: dict[TopicPartition, deque[ProducerBatch]] = {}
        #: Largest size a batch may grow to while its partition waits for an answer (0: never grow).
        self.max_batch_bytes = max_batch_bytes
        #: The latest batch drained per partition, while it is out (see try_grow).
        self.sending: dict[TopicPartition, ProducerBatch] = {}
        #: Every batch not yet completed (queued or in flight): flush() and close wait on these.
        self.incomplete: set[ProducerBatch] = set()
        self.muted: set[TopicPartition] = set()
        self.flushes_in_progress = 0
        self.closed = False
        self._drain_index: dict[int, int] = {}
        #: Called when a batch fills up (or a new one closes the one before): the Sender should look again.
        self.wakeup: Callable[[], None] = lambda: None
        #: Called with the loop time a new lone batch lingers out: the Sender must look again by then.
        #: (Not a plain wakeup: a burst to many partitions opens a batch on each, and a Sender round per
        #: new batch scans every partition -- quadratic, 64 us of CPU per record with 1,000 partitions.)
        self.wake_by: Callable[[float], None] = lambda when: self.wakeup()

    # -- appending (the send() side) -------------------------------------------------------------
    # One append core for send() and send_many(); the compiled fast path only appends to an open batch
    # with room and hands everything else here.

    def append(self, tp: TopicPartition, timestamp_ms: int, key: bytes | None, value: bytes | None,
               headers: Any, grow: bool = True) -> tuple[ProducerBatch, int] | None:
        """Append one record to ``tp``'s open batch (growing it when allowed, see :meth:`try_grow`);
        ``(batch, offset delta)``, or None when there is no open batch or it is full (then it closes)."""
        batch = self.open_batch(tp)
        if batch is None:
            return None
        builder = batch.builder
        assert builder is not None
        try:
            delta = builder.append(timestamp_ms, key, value, headers)
            if delta is None and grow and self.try_grow(batch):
                delta = builder.append(timestamp_ms, key, value, headers)
        except TypeError as exc:
            raise IllegalArgumentError(f"bad record for {tp.topic!r}: {exc}") from None
        if delta is None:
            batch.is_open = False
            self.wakeup()
            return None
        return batch, delta

    async def append_new(self, tp: TopicPartition, timestamp_ms: int, key: bytes | None,
                         value: bytes | None, headers: Any, nbytes: int, max_block: float
                         ) -> tuple[ProducerBatch, int]:
        """Reserve memory for a new batch (waiting up to ``max_block`` s) and append the record there --
        or to a batch another send() opened meanwhile."""
        batch = await self.reserve_batch(tp, nbytes, max_block)
        builder = batch.builder
        assert builder is not None
        try:
            delta = builder.append(timestamp_ms, key, value, headers)
        except BaseException as exc:
            self.discard_empty(batch)  # a new batch without records must never reach the Sender
            if isinstance(exc, TypeError):
                raise IllegalArgumentError(f"bad record for {tp.topic!r}: {exc}") from None
            raise
        if delta is None:  # a batch opened meanwhile by another send() and already full
            batch.is_open = False
            return await self.append_new(tp, timestamp_ms, key, value, headers, nbytes, max_block)
        return batch, delta

    def append_many(self, batch: ProducerBatch, values: Sequence[Any], keys: Sequence[Any] | None,
                    timestamp_ms: int, headers: Sequence[Any] | None, pos: int, grow: bool) -> int:
        """Append ``values[pos:]`` to ``batch`` until it is full (growing it when allowed); how many went
        in. A full batch closes; a new batch that took none is rolled back."""
        builder = batch.builder
        assert builder is not None
        try:
            added = builder.append_many(values, keys, timestamp_ms, headers, pos)
            while grow and pos + added < len(values) and self.try_grow(batch):
                added += builder.append_many(values, keys, timestamp_ms, headers, pos + added)
        except BaseException as exc:
            self.discard_empty(batch)
            if isinstance(exc, TypeError):
                raise IllegalArgumentError(f"bad record for {batch.tp.topic!r}: {exc}") from None
            raise
        if pos + added < len(values):
            batch.is_open = False  # full
            self.wakeup()
        return added

    async def reserve_batch(self, tp: TopicPartition, nbytes: int, max_block: float) -> ProducerBatch:
        """The open batch of ``tp``, or a new one with memory for a record of ``nbytes`` key+value bytes
        reserved (waiting up to ``max_block`` s for buffer memory)."""
        batch = self.open_batch(tp)
        if batch is not None:
            return batch
        need = max(self.batch_size, nbytes + BATCH_OVERHEAD + RECORD_OVERHEAD_MAX)
        pool = self.pool
        if not pool.try_reserve(need):
            await pool.reserve(need, max_block)
        if self.closed:
            pool.release(need)
            raise ProducerClosedError("the producer is stopped")
        batch = self.open_batch(tp)  # another send() may have opened one while we waited
        if batch is not None:
            pool.release(need)
            return batch
        return self.new_batch(tp, need)

    def new_batch(self, tp: TopicPartition, reserved: int) -> ProducerBatch:
        """Open a new batch for ``tp`` (its memory already reserved) at the tail of the queue."""
        dq = self.batches.get(tp)
        closed_one = False
        if dq is None:
            dq = self.batches[tp] = deque()
        elif dq:
            dq[-1].is_open = False
            closed_one = True
        builder = BatchBuilder(self.compression, max(self.batch_size, reserved),
                               is_transactional=self.transactional)
        batch = ProducerBatch(tp, builder, BatchResult(tp.topic, tp.partition, self.loop), self.loop.time(),
                              reserved)
        if self.keep_handles:
            batch.handles = []
        dq.append(batch)
        self.incomplete.add(batch)
        if closed_one:
            self.wakeup()
        else:
            self.wake_by(batch.created + self.linger)
        return batch

    def discard_empty(self, batch: ProducerBatch) -> None:
        """Undo :meth:`new_batch` for a batch whose first append failed: it must never reach the Sender."""
        dq = self.batches.get(batch.tp)
        if dq and dq[-1] is batch and batch.count() == 0:
            dq.pop()
            self.complete(batch)

    def open_batch(self, tp: TopicPartition) -> ProducerBatch | None:
        """The batch that still takes appends for ``tp``, if any."""
        dq = self.batches.get(tp)
        if dq:
            batch = dq[-1]
            if batch.is_open:
                return batch
        return None

    def has_queued(self, tp: TopicPartition) -> bool:
        return bool(self.batches.get(tp))

    def queue_sizes(self, topic: str, partitions: Iterable[int]) -> list[int]:
        """Batches waiting per partition (the adaptive sticky partitioner's load signal)."""
        get = self.batches.get
        out = []
        for p in partitions:
            dq = get(TopicPartition(topic, p))
            out.append(len(dq) if dq else 0)
        return out

    # -- the Sender side -------------------------------------------------------------------------

    def ready(self, leader_for: Callable[[TopicPartition], int | None], now: float
              ) -> tuple[set[int], float, set[str]]:
        """Leaders with a sendable batch, seconds until the next batch becomes sendable, and the topics
        whose partitions have data but no known leader (metadata must be refreshed)."""
        ready_nodes: set[int] = set()
        unknown: set[str] = set()
        next_delay = float("inf")
        exhausted = self.pool.queued > 0
        urgent = exhausted or self.closed or self.flushes_in_progress > 0
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
            if urgent or len(dq) > 1 or not batch.is_open or batch.attempts:
                ready_nodes.add(leader)
                continue
            wait = batch.created + linger - now
            if wait <= 0:
                ready_nodes.add(leader)
            else:
                next_delay = min(next_delay, wait)
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
                if can_drain is not None and not can_drain(tp, batch, node):
                    continue
                bsize = batch.size
                if taken and size + bsize > max_size:
                    break
                dq.popleft()
                batch.is_open = False
                self.sending[tp] = batch
                size += bsize
                taken.append(batch)
            if taken:
                out[node] = taken
        return out

    def reenqueue(self, batch: ProducerBatch, retry_at: float) -> None:
        """Put a batch that will be retried at ``retry_at`` back at the head of its queue, ordered by
        sequence."""
        batch.in_flight = False
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

    def try_grow(self, batch: ProducerBatch) -> bool:
        """``batch`` (the open one) is full: let it take ``batch_size`` more bytes if it cannot go yet
        anyway (a batch of its partition is ahead of it, queued or in flight), memory allows, and it
        stays within ``max_batch_bytes``."""
        dq = self.batches.get(batch.tp)
        builder = batch.builder
        if not dq or dq[-1] is not batch or builder is None or not batch.is_open:
            return False
        if len(dq) == 1 and batch.tp not in self.sending:
            return False  # nothing ahead of it: it goes now, at its normal size
        step = self.batch_size
        if builder.batch_size + step > self.max_batch_bytes or not self.pool.try_reserve(step):
            return False
        builder.grow(step)
        batch.reserved += step
        return True

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

    def complete(self, batch: ProducerBatch) -> None:
        """The batch is finished (acknowledged or failed): give its memory back."""
        if self.sending.get(batch.tp) is batch:
            del self.sending[batch.tp]
        if batch in self.incomplete:
            self.incomplete.discard(batch)
            self.pool.release(batch.reserved)
            batch.reserved = 0

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
        first = float("inf")
        for dq in self.batches.values():
            if dq:
                first = min(first, dq[0].created)
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

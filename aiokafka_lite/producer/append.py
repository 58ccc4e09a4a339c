"""The send side of the RecordAccumulator: the one append core behind ``send()`` and ``send_many()``.

Everything between a serialized record and its place in a batch happens here, as in Java's
``RecordAccumulator.append``: the partition choice for records sent without one (key hash, KIP-794
sticky switching, custom partitioners, through :class:`PartitionChooser`), registering the partition
in an open transaction, the memory reservation (waiting up to ``max_block`` s), batch creation and
growth. ``send()``'s compiled fast path (``core.SendCore``) only appends to an open batch with room
(for a keyless record, the sticky batch being counted) and hands every other record to
:meth:`AppendCore.append_record`; ``send_many()`` calls :meth:`AppendCore.append_records`. Both place
a record on its partition through :meth:`AppendCore.append_to` (one record) or ``_append_once`` (a
batch's worth), and choose keyless records' partition through one rule, :meth:`AppendCore._sticky_next`,
with one byte count (``PartitionChooser.track``). The producer keeps what comes before (interceptors,
serializers, metadata, size checks); :class:`~.accumulator.RecordAccumulator` adds the Sender's side.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from ..errors import IllegalArgumentError, ProducerClosedError
from ..records import BATCH_OVERHEAD, RECORD_OVERHEAD_MAX, BatchBuilder, StorePool, ValueBuffer
from ..structs import TopicPartition
from .batch import BatchState, ProducerBatch
from .doorbell import Doorbell
from .handles import BatchResult
from .memory import MemoryPool
from .partitioner import PartitionChooser, PartitionerSpec, StickyPartitioner, resolve_partitioner

__all__ = ["FIRST_RESERVE", "AppendCore", "Segment", "TxnGate"]

#: What a new batch reserves of ``buffer_memory`` (or its first record's size, if larger); it takes more,
#: up to ``batch_size``, as it fills (:meth:`AppendCore._extend`). Reserving a whole ``batch_size`` per
#: new batch, as Java does, lets 128 partitions with a lingering record each exhaust the default 32 MiB
#: at 256 KiB batches, and every send then waits for memory (1,000 partitions: 15,000 records/s).
FIRST_RESERVE = 16384

#: What ``send_many`` got from one batch: (its result, first input position, records, first offset delta
#: in the batch, input indices when the records were regrouped by partition).
Segment = tuple[BatchResult, int, int, int, "Sequence[int] | None"]


class TxnGate(Protocol):
    """The open transaction, as the append path sees it (``TransactionManager``)."""

    def check_send(self, tp: TopicPartition) -> None: ...


def _no_guard() -> None:
    return None


class AppendCore:
    """Per-partition batches and the memory bound, as ``send()`` fills them."""

    def __init__(self, *, batch_size: int, linger_ms: int, compression: int, pool: MemoryPool,
                 loop: asyncio.AbstractEventLoop, delivery_timeout_ms: int, transactional: bool = False,
                 keep_handles: bool = False, max_batch_bytes: int = 0,
                 partitioner: PartitionerSpec | None = None, txn: TxnGate | None = None,
                 guard: Callable[[], None] = _no_guard, bell: Doorbell | None = None) -> None:
        self.batch_size = batch_size
        self.linger = linger_ms / 1000
        self.delivery_timeout = delivery_timeout_ms / 1000
        self.compression = compression
        self.pool = pool
        self.loop = loop
        self.transactional = transactional
        self.keep_handles = keep_handles
        self.batches: dict[TopicPartition, deque[ProducerBatch]] = {}
        #: Largest size a batch may grow to while its partition waits for an answer (0: never grow).
        self.max_batch_bytes = max_batch_bytes
        #: The latest batch drained per partition, while it is out (see try_grow).
        self.sending: dict[TopicPartition, ProducerBatch] = {}
        #: Bytes of records the latest batch built per partition held: a new batch's store starts that
        #: large (see BatchBuilder's ``capacity``) instead of doubling up to it again.
        self.last_size: dict[TopicPartition, int] = {}
        #: Large batch stores, reused (a fresh one's pages fault as they are first written: StorePool).
        self.stores = StorePool()
        #: Every batch not yet completed (queued or in flight): flush() and close wait on these.
        self.incomplete: set[ProducerBatch] = set()
        #: Open batches that refused a keyless record and stay open only to grow on the sticky
        #: partition's next visit (_sticky_next): full for now, they go as soon as nothing is ahead.
        self.left_full: set[ProducerBatch] = set()
        self.closed = False
        # The Sender side's (RecordAccumulator): partitions with a batch out (in-flight 1), flush() calls
        # waiting, where each node's drain starts.
        self.muted: set[TopicPartition] = set()
        self.flushes_in_progress = 0
        self._drain_index: dict[int, int] = {}
        self.chooser = PartitionChooser(partitioner or resolve_partitioner("default"),
                                        StickyPartitioner(self.queue_sizes), batch_size)
        self.txn = txn
        #: Raises when the producer may take no more records (it failed or is stopping); asked before
        #: every new batch, since a send may have waited for memory meanwhile.
        self.guard = guard
        #: Rung when a batch fills up (or a new one closes the one before), and by when a new lone batch
        #: lingers out: the Sender sleeps on it.
        self.bell = bell if bell is not None else Doorbell(loop)

    # -- one record ------------------------------------------------------------------------------

    async def append_record(self, info: Any, partition: int | None, timestamp_ms: int, key: bytes | None,
                            value: bytes | None, headers: Any, nbytes: int, max_block: float
                            ) -> tuple[ProducerBatch, int, bool]:
        """Place one record: ``(batch, offset delta, whether it opened a new batch)``. ``info`` is the
        topic's ``TopicInfo``; ``nbytes`` its key and value bytes (the memory a new batch needs)."""
        if partition is None:
            partition, sticky = self.chooser.choose(key, info)
            if sticky:
                return await self._append_keyless(info, timestamp_ms, key, value, headers, nbytes,
                                                  max_block)
        return await self.append_to(info.tps[partition], timestamp_ms, key, value, headers, nbytes,
                                    max_block)

    async def _append_keyless(self, info: Any, timestamp_ms: int, key: bytes | None, value: bytes | None,
                              headers: Any, nbytes: int, max_block: float) -> tuple[ProducerBatch, int, bool]:
        """A keyless record under uniform sticky (KIP-794; the sticky partition is chosen): into its open
        batch if it takes it, else where :meth:`_sticky_next` says."""
        tp = info.tps[info.sticky_partition]
        batch = self.open_batch(tp)
        if batch is not None:
            if self.txn is not None:
                self.txn.check_send(tp)
            self.chooser.track(info, batch)
            got = self._try_put(batch, timestamp_ms, key, value, headers)
            if got is not None:
                return got[0], got[1], False
        tp = self._sticky_next(info, batch, nbytes)
        return await self.append_to(tp, timestamp_ms, key, value, headers, nbytes, max_block, sticky=info)

    def _sticky_next(self, info: Any, refused: ProducerBatch | None, nbytes: int) -> TopicPartition:
        """The sticky partition's batch did not take a keyless record of ``nbytes`` (``refused``, or it
        has no open batch): where the record goes now. Once a batch's worth went to the partition, the
        next one (KIP-794); the refused batch stays open if it still may grow (a batch of its partition
        is out ahead of it), so the next visit adds to it: each partition then sends one batch per round
        trip that holds everything sent to it meanwhile, as keyed records do. Otherwise the same
        partition, whose open batch grows (:meth:`try_grow`) or is followed by a new one."""
        chooser = self.chooser
        if not chooser.switch_due(info, nbytes):
            return info.tps[info.sticky_partition]
        if refused is not None:
            if self.may_grow(refused):
                self.left_full.add(refused)
            else:
                self._full(refused)
        return info.tps[chooser.switch(info)]

    async def append_to(self, tp: TopicPartition, timestamp_ms: int, key: bytes | None, value: bytes | None,
                        headers: Any, nbytes: int, max_block: float, sticky: Any = None
                        ) -> tuple[ProducerBatch, int, bool]:
        """Append one record to ``tp``'s open batch (growing it if it may), or to a new one:
        ``(batch, offset delta, whether it opened a new batch)``. ``sticky``: the topic's info, when the
        record is keyless under uniform sticky (the batch is then counted for KIP-794's switch)."""
        if self.txn is not None:
            self.txn.check_send(tp)
        batch = self.open_batch(tp)
        if batch is not None:
            if sticky is not None:
                self.chooser.track(sticky, batch)
            got = self.put_open(batch, timestamp_ms, key, value, headers, sticky is not None)
            if got is not None:
                return got[0], got[1], False
        self.guard()
        need = self._first_reserve(nbytes)
        if not self.closed and self.pool.try_reserve(need):
            # The common case, without a coroutine: memory is there now.
            batch = self.new_batch(tp, need)
        else:
            batch = await self.reserve_batch(tp, nbytes, max_block)
        if sticky is not None:
            self.chooser.track(sticky, batch)
        got = self._first_put(batch, timestamp_ms, key, value, headers)
        if got is None:  # a batch opened meanwhile by another send() and already full
            self._full(batch)
            return await self.append_to(tp, timestamp_ms, key, value, headers, nbytes, max_block, sticky)
        return got[0], got[1], True

    def put_open(self, batch: ProducerBatch, timestamp_ms: int, key: bytes | None, value: bytes | None,
                 headers: Any, keyless: bool = False, refused: bool = False
                 ) -> tuple[ProducerBatch, int] | None:
        """Append to ``batch`` (its partition's open one), growing it if it may (:meth:`try_grow`):
        ``(batch, delta)``, or None when it takes no more, and then it is closed (a new batch takes the
        record). ``send()``'s fast path calls this, without a coroutine, for a record with a key or a
        partition that its batch refused (``refused``), and hands the record to the slow path on None."""
        # The fast path comes here at every growth step of a batch. A batch that has just refused the
        # record and already takes its whole batch_size (nothing for _extend to add) refuses it again:
        # no second try then; else the first try is _try_put's work without its call.
        builder = batch.builder
        if not (refused and builder is not None and builder.batch_size >= self.batch_size):
            try:
                delta = self._put(batch, timestamp_ms, key, value, headers)
            except TypeError as exc:
                raise IllegalArgumentError(f"bad record for {batch.tp.topic!r}: {exc}") from None
            if delta is not None:
                return batch, delta
        got = None
        if self.try_grow(batch, keyless):
            got = self._try_put(batch, timestamp_ms, key, value, headers)
        if got is None:
            self._full(batch)
        return got

    def _try_put(self, batch: ProducerBatch, timestamp_ms: int, key: bytes | None, value: bytes | None,
                 headers: Any) -> tuple[ProducerBatch, int] | None:
        """Append to an open batch with room (taking more of batch_size as needed): ``(batch, delta)``,
        or None when it is full for now (it stays open)."""
        try:
            delta = self._put(batch, timestamp_ms, key, value, headers)
        except TypeError as exc:
            raise IllegalArgumentError(f"bad record for {batch.tp.topic!r}: {exc}") from None
        return None if delta is None else (batch, delta)

    def _full(self, batch: ProducerBatch) -> None:
        """``batch`` takes no more records: it goes at once."""
        if batch.is_open:
            batch.transition_to(BatchState.SEALED)
            self.bell.ring()

    def _first_put(self, batch: ProducerBatch, timestamp_ms: int, key: bytes | None, value: bytes | None,
                   headers: Any) -> tuple[ProducerBatch, int] | None:
        """:meth:`_put` into a batch that may be new: a new batch left without records is undone."""
        try:
            delta = self._put(batch, timestamp_ms, key, value, headers)
        except BaseException as exc:
            self.discard_empty(batch)  # a new batch without records must never reach the Sender
            if isinstance(exc, TypeError):
                raise IllegalArgumentError(f"bad record for {batch.tp.topic!r}: {exc}") from None
            raise
        if delta is None:
            self.discard_empty(batch)
            return None
        return batch, delta

    def _first_reserve(self, nbytes: int) -> int:
        """What a new batch for a record of ``nbytes`` key+value bytes reserves (see FIRST_RESERVE)."""
        # Conditionals, not min()/max(): the builtins are a slow call, and this runs per batch.
        need = nbytes + BATCH_OVERHEAD + RECORD_OVERHEAD_MAX
        first = self.batch_size if self.batch_size < FIRST_RESERVE else FIRST_RESERVE
        return first if first > need else need

    def _put(self, batch: ProducerBatch, timestamp_ms: int, key: bytes | None, value: bytes | None,
             headers: Any) -> int | None:
        """Append to ``batch``, reserving more of batch_size as needed (:meth:`_extend`); the offset delta,
        or None when it is full."""
        builder = batch.builder
        assert builder is not None
        delta = builder.append(timestamp_ms, key, value, headers)
        while delta is None and self._extend(batch):
            delta = builder.append(timestamp_ms, key, value, headers)
        return delta

    # -- many records of one topic (send_many) ----------------------------------------------------

    async def append_records(self, info: Any, partition: int | None, values: Sequence[Any],
                             keys: Sequence[Any] | None, timestamp_ms: int, headers: Sequence[Any] | None,
                             max_block: float) -> list[Segment]:
        """Place many records, a whole batch at a time: the partition is chosen once per batch (keyless
        records; KIP-794 switches per full batch anyway) or once per key. Returns where they went."""
        out: list[Segment] = []
        chooser = self.chooser
        if partition is not None:
            await self._append_run(out, info.tps[partition], values, keys, timestamp_ms, headers, None,
                                   max_block)
        elif keys is not None and chooser.key_hash is not None:
            for p, idx in chooser.group(info, keys).items():
                sub_h = [headers[i] for i in idx] if headers is not None else None
                await self._append_run(out, info.tps[p], [values[i] for i in idx], [keys[i] for i in idx],
                                       timestamp_ms, sub_h, idx, max_block)
        elif chooser.sticky_null:
            await self._append_sticky(out, info, values, keys, timestamp_ms, headers, max_block)
        else:
            for i in range(len(values)):
                p = chooser.other(keys[i] if keys is not None else None, info)
                await self._append_run(out, info.tps[p], [values[i]], [keys[i]] if keys is not None else None,
                                       timestamp_ms, [headers[i]] if headers is not None else None, [i],
                                       max_block)
        return out

    async def _append_sticky(self, out: list[Segment], info: Any, values: Sequence[Any],
                             keys: Sequence[Any] | None, ts: int, headers: Sequence[Any] | None,
                             max_block: float) -> None:
        """Keyless records to the sticky partition, switching as send() does (:meth:`_sticky_next`)."""
        chooser = self.chooser
        pos = 0
        while pos < len(values):
            tp = info.tps[chooser.choose(None, info)[0]]
            batch = self.open_batch(tp)
            if batch is not None:
                if self.txn is not None:
                    self.txn.check_send(tp)
                chooser.track(info, batch)
                pos += self._append_open(out, batch, values, keys, ts, headers, pos, None, grow=False)
                if pos == len(values):
                    return
            tp = self._sticky_next(info, batch, _size_at(values, keys, pos))
            pos += await self._append_once(out, tp, values, keys, ts, headers, pos, None, max_block,
                                           sticky=info)

    async def _append_run(self, out: list[Segment], tp: TopicPartition, values: Sequence[Any],
                          keys: Sequence[Any] | None, ts: int, headers: Sequence[Any] | None,
                          indices: Sequence[int] | None, max_block: float) -> None:
        pos = 0
        while pos < len(values):
            pos += await self._append_once(out, tp, values, keys, ts, headers, pos, indices, max_block)

    async def _append_once(self, out: list[Segment], tp: TopicPartition, values: Sequence[Any],
                           keys: Sequence[Any] | None, ts: int, headers: Sequence[Any] | None, pos: int,
                           indices: Sequence[int] | None, max_block: float, sticky: Any = None) -> int:
        """Fill the open batch of ``tp`` (or a new one) from ``values[pos:]``, growing it as
        :meth:`append_to` does; how many records went in. ``sticky`` as there."""
        self.guard()
        if self.txn is not None:
            self.txn.check_send(tp)
        batch = await self.reserve_batch(tp, _size_at(values, keys, pos), max_block)
        if sticky is not None:
            self.chooser.track(sticky, batch)
        # A keyless record grows a batch only when it is refused outright, as in append_to: later refusals
        # go back to _append_sticky, which asks whether the switch is due first.
        added = self._append_open(out, batch, values, keys, ts, headers, pos, indices,
                                  grow=True, first_only=sticky is not None)
        # Full: it goes, unless a sticky visit grew it and :meth:`_sticky_next` decides (as for send()).
        if pos + added < len(values) and (sticky is None or added == 0):
            self.discard_empty(batch)
            self._full(batch)
        return added

    def _append_open(self, out: list[Segment], batch: ProducerBatch, values: Sequence[Any],
                     keys: Sequence[Any] | None, ts: int, headers: Sequence[Any] | None, pos: int,
                     indices: Sequence[int] | None, grow: bool, first_only: bool = False) -> int:
        """:meth:`append_many` into ``batch`` (left open), noting the segment in ``out``."""
        builder = batch.builder
        assert builder is not None
        before_count = builder.record_count
        added = self.append_many(batch, values, keys, ts, headers, pos, grow, first_only)
        if added:
            out.append((batch.result, pos, added, before_count, indices))
        return added

    def append_many(self, batch: ProducerBatch, values: Sequence[Any], keys: Sequence[Any] | None,
                    timestamp_ms: int, headers: Sequence[Any] | None, pos: int, grow: bool,
                    first_only: bool = False) -> int:
        """Append ``values[pos:]`` to ``batch`` until it is full (growing it when allowed; ``first_only``:
        only if it took none); how many went in. The batch stays open; a new batch that took none is
        rolled back."""
        builder = batch.builder
        assert builder is not None
        try:
            added = builder.append_many(values, keys, timestamp_ms, headers, pos)
            while pos + added < len(values) and self._extend(batch):
                added += builder.append_many(values, keys, timestamp_ms, headers, pos + added)
            while (grow and pos + added < len(values) and not (first_only and added)
                   and self.try_grow(batch, keyless=first_only)):
                added += builder.append_many(values, keys, timestamp_ms, headers, pos + added)
        except BaseException as exc:
            self.discard_empty(batch)
            if isinstance(exc, TypeError):
                raise IllegalArgumentError(f"bad record for {batch.tp.topic!r}: {exc}") from None
            raise
        return added

    # -- batches -----------------------------------------------------------------------------------

    async def reserve_batch(self, tp: TopicPartition, nbytes: int, max_block: float) -> ProducerBatch:
        """The open batch of ``tp``, or a new one with memory for a record of ``nbytes`` key+value bytes
        reserved (waiting up to ``max_block`` s for buffer memory)."""
        batch = self.open_batch(tp)
        if batch is not None:
            return batch
        need = self._first_reserve(nbytes)
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
            if dq[-1].is_open:
                dq[-1].transition_to(BatchState.SEALED)
            closed_one = True
        # It takes what it reserved, more as it fills (_extend), its buffer growing with it. Its store
        # starts at the size the partition's last batch reached, if buffer_memory has that much to spare
        # now: it holds it from the start, so buffer_memory still bounds what stores take. A last batch
        # that filled most of batch_size means this one fills it too, and one record past the size that
        # one reached would double (and copy) the store: it starts at the whole batch_size then.
        capacity = self.last_size.get(tp, 0)
        if 2 * capacity > self.batch_size:
            capacity = max(capacity, self.batch_size - BATCH_OVERHEAD)
        held = capacity + BATCH_OVERHEAD
        if held <= reserved:
            held = reserved
        elif not self.pool.try_reserve(held - reserved):
            held, capacity = reserved, 0
        builder = BatchBuilder(self.compression, reserved, is_transactional=self.transactional,
                               capacity=capacity, pool=self.stores)
        batch = ProducerBatch(tp, builder, BatchResult(tp.topic, tp.partition, self.loop), self.loop.time(),
                              held)
        if self.keep_handles:
            batch.handles = []
        dq.append(batch)
        self.incomplete.add(batch)
        if closed_one:
            self.bell.ring()
        else:
            self.bell.ring_by(batch.created + self.linger)
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

    def _extend(self, batch: ProducerBatch) -> bool:
        """``batch`` (the open one) is full for what it reserved: reserve more of ``buffer_memory`` (double,
        up to ``batch_size``) if the pool has it now, never waiting; False when it has its ``batch_size``."""
        builder = batch.builder
        if builder is None or not batch.is_open:
            return False
        have = builder.batch_size
        if have >= self.batch_size:
            return False
        step = self.batch_size - have
        return self._reserve_more(batch, step if step < have else have)

    def _reserve_more(self, batch: ProducerBatch, step: int) -> bool:
        """Let ``batch`` take ``step`` more bytes, reserving what it does not hold yet (a store sized
        from its partition's last batch was reserved whole, new_batch)."""
        builder = batch.builder
        assert builder is not None
        short = builder.batch_size + step - batch.reserved
        if short > 0:
            if not self.pool.try_reserve(short):
                return False
            batch.reserved += short  # = max(reserved, the builder's new batch_size)
        builder.grow(step)
        return True

    def may_grow(self, batch: ProducerBatch) -> bool:
        """Whether ``batch`` (the open one, full for now) may take ``batch_size`` more bytes: it cannot go
        yet anyway (a batch of its partition is ahead of it, queued or in flight) and it stays within
        ``max_batch_bytes``."""
        dq = self.batches.get(batch.tp)
        builder = batch.builder
        if not dq or dq[-1] is not batch or builder is None or not batch.is_open:
            return False
        if len(dq) == 1 and batch.tp not in self.sending:
            return False  # nothing ahead of it: it goes now, at its normal size
        return builder.batch_size + self.batch_size <= self.max_batch_bytes

    def try_grow(self, batch: ProducerBatch, keyless: bool = False) -> bool:
        """Let ``batch`` take more bytes if it :meth:`may_grow` and memory allows: ``batch_size`` for
        keyless records (a visit of the sticky partition adds a batch's worth, KIP-794), else
        :meth:`_grow_step`. send()'s fast path appends only within what a batch reserved (its store
        grows by itself) and leaves a refused record to this path: grown one ``batch_size`` per
        refusal, a batch sent a record of ``batch_size`` bytes this way every time, and (its header's
        slack used up) often closed instead, three records a batch."""
        if not self.may_grow(batch):
            return False
        big = 0 if keyless else self._grow_step(batch)
        if not ((big > self.batch_size and self._reserve_more(batch, big))
                or self._reserve_more(batch, self.batch_size)):
            return False
        self.left_full.discard(batch)
        return True

    def _grow_step(self, batch: ProducerBatch) -> int:
        """How much a growing batch of keyed (or partitioned) records takes at once: as much as it
        holds (it doubles, so a batch that grows from ``batch_size`` to ``n`` asks ~log2(n / batch_size)
        times), within ``max_batch_bytes``, and only out of the upper half of ``buffer_memory``: what it
        reserves and does not fill is held until it is built (close_batch), so with memory short a
        batch grows by ``batch_size`` as before and other partitions' new batches still find theirs."""
        builder = batch.builder
        assert builder is not None
        have = builder.batch_size
        pool = self.pool
        spare = pool.available - pool.total // 2
        if batch.reserved > have:
            spare += batch.reserved - have
        # min(have, max_batch_bytes - have, spare), without the builtin's slow call: once per growth step.
        step = self.max_batch_bytes - have
        if have < step:
            step = have
        return spare if spare < step else step

    def close_batch(self, batch: ProducerBatch) -> bytes:
        """Build ``batch`` for sending and give back what it reserved beyond its bytes: from here on it
        holds only those. Kept to its answer, a 16 KiB reservation per one-record batch let 1,000
        partitions' batches in flight hold all of ``buffer_memory`` while they held 2 % of it, and every
        send() waited for acknowledgements (48,000 records/s where 170,000 were possible)."""
        data = batch.close()
        self.last_size[batch.tp] = batch.uncompressed_size - BATCH_OVERHEAD
        extra = batch.reserved - len(data)
        if extra > 0 and batch in self.incomplete:
            batch.reserved -= extra
            self.pool.release(extra)
        return data

    def complete(self, batch: ProducerBatch) -> None:
        """The batch is finished (acknowledged, failed or never used): give its memory back."""
        batch.transition_to(BatchState.DONE)
        if self.sending.get(batch.tp) is batch:
            del self.sending[batch.tp]
        self.left_full.discard(batch)
        if batch in self.incomplete:
            self.incomplete.discard(batch)
            self.pool.release(batch.reserved)
            batch.reserved = 0


def _size_at(values: Sequence[Any], keys: Sequence[Any] | None, pos: int) -> int:
    """Key and value bytes of record ``pos``."""
    key = keys[pos] if keys is not None else None
    nkey = len(key) if key is not None else 0
    if type(values) is ValueBuffer:
        return values.value_size(pos) + nkey
    value = values[pos]
    return (len(value) if value is not None else 0) + nkey

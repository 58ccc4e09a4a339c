# cython: language_level=3, boundscheck=False, wraparound=True, cdivision=True, annotation_typing=False
# cython: warn.unreachable=False
"""The ``send()`` fast path, the base class of :class:`Producer`.

The fast path handles the common record -- bytes key/value, no headers, known topic, partition given
or chosen by key hash or the current sticky partition, an open batch with room -- in one coroutine
that suspends only once per ``YIELD_BYTES`` queued, to let the Sender and the answers in. Anything
else (first use of a topic, serializers, interceptors, headers, transactions, a full batch, a stopped
producer) goes to ``Producer._send_slow`` and from there to the accumulator's append core
(``append.AppendCore.append_record``), which implements the complete behaviour; the fast path must
never decide differently from it (tests/producer/test_send_twins.py).

One source for both forms: setup.py compiles this module with Cython, ``_send.pxd`` making the classes
extension types with C fields and typing the locals of :meth:`SendCore._append_fast`, where the work is
(the coroutine ``send()`` only calls it and yields); run as Python (``AIOKAFKA_LITE_PURE=1``, or not
built) it is the same code.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from typing import Any

from ..structs import TopicPartition
from .handles import RecordFuture

try:
    import cython
except ImportError:  # run as Python where Cython is not installed
    from .. import _nocython as cython

if cython.compiled:
    # The handles' C entry point and the C clock; as Python, the handles under the switch and time_ns.
    from cython.cimports.aiokafka_lite.producer._handles import make_future
    from cython.cimports.posix.time import CLOCK_REALTIME, clock_gettime, timespec
else:
    from .handles import make_future

__all__ = ["RUNNING", "YIELD_BYTES", "BatchHead", "SendCore", "TopicInfo"]

#: ``SendCore._state`` while send() may take records.
RUNNING = 1
#: send() lets other tasks run (the Sender, the answers) once per this many bytes queued: a caller sending
#: in a tight loop would otherwise hold the loop until a batch opens, and lingered batches would wait for it.
#: Smaller drains many partitions' batches sooner but smaller; the trade-off is measured in
#: docs/performance.md ("A tight send loop held the event loop").
YIELD_BYTES = 131072
_RUNNING = RUNNING
_YIELD_BYTES = YIELD_BYTES
_sleep = asyncio.sleep
#: Larger timestamps go to the slow path, which refuses them with IllegalArgumentError.
_TS_MAX = (1 << 63) - 1
_time_ns = time.time_ns


def _now_ms() -> int:
    """Wall-clock milliseconds, as ``time.time_ns() // 1_000_000`` (a C call when compiled)."""
    if cython.compiled:
        ts = cython.declare(timespec)
        clock_gettime(CLOCK_REALTIME, cython.address(ts))
        return ts.tv_sec * 1000 + ts.tv_nsec // 1_000_000
    return _time_ns() // 1_000_000


class BatchHead:
    """What send()'s fast path reads of a batch, the base of :class:`~.batch.ProducerBatch`: its
    builder, its result and whether it takes appends. Compiled, these are C fields, so the fast path
    reads them without three attribute lookups per record; the batch's door (``transition_to``) still
    owns ``is_open``."""

    __slots__ = ("builder", "is_open", "result")


class TopicInfo:
    """What send() needs about a topic, rebuilt after every metadata update, plus its sticky state."""

    __slots__ = ("available", "deques", "num_partitions", "partitions", "sticky_batch", "sticky_mark",
                 "sticky_partition", "sticky_produced", "topic", "tps")

    def __init__(self, topic: str, partitions: Iterable[int], available: Iterable[int]) -> None:
        self.topic = topic
        self.partitions = sorted(partitions)
        self.num_partitions = max(self.partitions) + 1 if self.partitions else 0
        self.available = sorted(available)
        #: Pre-built keys so that send() never constructs a TopicPartition.
        self.tps = [TopicPartition(topic, p) for p in range(self.num_partitions)]
        #: The uniform-sticky partition for keyless records (-1: choose one), the batch they fill there
        #: (the fast path appends to no other) and the byte count (PartitionChooser.track keeps it).
        self.sticky_partition = -1
        self.sticky_produced = 0
        self.sticky_batch: Any = None
        self.sticky_mark = 0
        #: The accumulator's deque per partition, remembered on first use (it never replaces one).
        self.deques: list[Any] = [None] * self.num_partitions


class SendCore:
    """Holds the state the fast path reads; :class:`Producer` fills it in and adds everything else."""

    _state: int
    _plain: bool
    _topics: dict[str, Any]
    _batches: dict[TopicPartition, Any]
    _key_hash: Any
    _sticky_null: bool
    _txn: Any
    _size_fast_limit: int
    _put_open: Any
    _unyielded: int

    def __init__(self) -> None:
        self._state = 0
        self._plain = True
        self._topics = {}
        self._batches = {}
        self._key_hash = None
        self._sticky_null = True
        self._txn = None
        self._size_fast_limit = 0
        #: ``AppendCore.put_open`` (None: a refused record takes the slow path).
        self._put_open = None
        #: Bytes queued since send() last let other tasks run (see YIELD_BYTES).
        self._unyielded = 0

    async def _send_slow(self, topic: str, value: Any, key: Any, partition: int | None,
                         timestamp_ms: int | None,
                         headers: Any) -> RecordFuture:
        raise NotImplementedError

    async def send(self, topic: str, value: Any = None, key: Any = None, partition: int | None = None,
                   timestamp_ms: int | None = None, headers: Sequence[tuple[str, bytes | None]] | None = None
                   ) -> RecordFuture:
        """Queue one record; returns a future for its :class:`RecordMetadata`.

        Waits only for the topic's metadata (first use) and for buffer memory, each up to max_block_ms;
        raises :class:`KafkaTimeoutError` then. A record too large for max_request_size (or
        buffer_memory) raises :class:`RecordTooLargeError` at once.
        """
        fut = self._append_fast(topic, value, key, partition, timestamp_ms, headers)
        if fut is None:
            return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
        if self._unyielded >= _YIELD_BYTES:
            self._unyielded = 0
            await _sleep(0)
        return fut

    def _append_fast(self, topic: str, value: Any, key: Any, partition: Any, timestamp_ms: Any,
                     headers: Any) -> RecordFuture | None:
        """Append the record to its partition's open batch if the fast path may (see the module's
        docstring) and return its future; None hands it to the slow path, nothing done."""
        if self._state != _RUNNING or not self._plain or headers is not None:
            return None
        n = _plain_size(key, value)
        info = self._topics.get(topic)
        if n < 0 or info is None or n > self._size_fast_limit:
            return None
        batch = self._fast_batch(info, key, partition)
        if batch is None:
            return None
        ts = _fast_timestamp(timestamp_ms)
        if ts < 0:
            return None
        builder = batch.builder
        if builder is None:  # never while the batch is open; compiled, a None builder must not be called
            return None
        if cython.compiled:  # the open batch is not built: its C append, the timestamp as a C integer
            delta = builder._append(ts, key, value, None)
        else:
            delta = builder.append(ts, key, value, None)
        if delta is None:
            # Past what the batch reserved: the append core grows it if it may (a keyed record or one
            # given a partition; a keyless one's refusal is KIP-794's to judge, on the slow path).
            if self._put_open is None or (partition is None and key is None):
                return None
            got = self._put_open(batch, ts, key, value, None, False, True)
            if got is None:
                return None
            delta = got[1]
        self._unyielded += n
        return make_future(batch.result, delta, ts)

    def _fast_batch(self, info: TopicInfo, key: Any, partition: Any) -> Any:
        """The batch the record goes in: the key hash's, the one given or the sticky partition's, if it
        is open (for the sticky partition: the batch being counted); else None (the slow path)."""
        if partition is None:
            if key is not None and self._key_hash is not None:
                return self._open_batch(info, self._key_hash(key, info.num_partitions))
            if self._sticky_null:
                batch = self._open_batch(info, info.sticky_partition)
                return batch if batch is info.sticky_batch else None
            return None
        if type(partition) is int and 0 <= partition < info.num_partitions:
            return self._open_batch(info, partition)
        return None

    def _open_batch(self, info: TopicInfo, p: int) -> Any:
        """The partition's open last batch, if a record may go in it now (else None: the slow path)."""
        if p < 0 or p >= len(info.tps):
            return None
        tp = info.tps[p]
        txn = self._txn
        if txn is not None:  # transactional: only partitions already registered in the open transaction
            registered = txn.sendable
            if registered is None or tp not in registered:
                return None
        dq = info.deques[p]
        if dq is None:
            # The accumulator makes one deque per partition and keeps it: remember it here, which saves
            # hashing the TopicPartition on every record.
            dq = self._batches.get(tp)
            if dq is None:
                return None
            info.deques[p] = dq
        if not dq:
            return None
        batch = dq[-1]
        return batch if batch.is_open else None


def _plain_size(key: Any, value: Any) -> int:
    """Bytes of a bytes key and value (None counts 0); -1 for anything else (the slow path serializes)."""
    n = 0
    if value is not None:
        if type(value) is not bytes:
            return -1
        n = len(value)
    if key is not None:
        if type(key) is not bytes:
            return -1
        n += len(key)
    return n


def _fast_timestamp(timestamp_ms: Any) -> int:
    """The record's timestamp (now, or the one given); -1 when the slow path must check it."""
    if timestamp_ms is None:
        return _now_ms()
    if type(timestamp_ms) is int and 0 <= timestamp_ms <= _TS_MAX:
        return timestamp_ms
    return -1

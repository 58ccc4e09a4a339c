# cython: language_level=3, boundscheck=False, wraparound=True
"""Compiled twin of ``_send_py.py``: the ``send()`` fast path (see that module's docstring)."""

from cpython.bytes cimport PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE

from asyncio import sleep as _sleep

from ..structs import TopicPartition
from ._handles cimport BatchResult, RecordFuture, make_future


cdef extern from "<time.h>" nogil:
    ctypedef long time_t
    cdef struct timespec:
        time_t tv_sec
        long tv_nsec
    int clock_gettime(int clk_id, timespec *tp)
    int CLOCK_REALTIME


RUNNING = 1
YIELD_BYTES = 131072
cdef Py_ssize_t _YIELD_BYTES = YIELD_BYTES


cdef inline long long _now_ms() noexcept:
    cdef timespec ts
    clock_gettime(CLOCK_REALTIME, &ts)
    return <long long>ts.tv_sec * 1000 + ts.tv_nsec // 1000000


cdef class TopicInfo:
    """What send() needs about a topic, rebuilt after every metadata update, plus its sticky state."""

    cdef public str topic
    cdef public list partitions
    cdef public Py_ssize_t num_partitions
    cdef public list available
    cdef public list tps
    cdef public Py_ssize_t sticky_partition
    cdef public long long sticky_produced
    cdef public object sticky_batch
    cdef public long long sticky_mark
    cdef public list deques

    def __init__(self, str topic, partitions, available):
        self.topic = topic
        self.partitions = sorted(partitions)
        self.num_partitions = max(self.partitions) + 1 if self.partitions else 0
        self.available = sorted(available)
        self.tps = [TopicPartition(topic, p) for p in range(self.num_partitions)]
        self.sticky_partition = -1
        self.sticky_produced = 0
        self.sticky_batch = None
        self.sticky_mark = 0
        self.deques = [None] * self.num_partitions


cdef class SendCore:
    """Holds the state the fast path reads; :class:`Producer` fills it in and adds everything else."""

    cdef public int _state
    cdef public bint _plain
    cdef public dict _topics
    cdef public dict _batches
    cdef public object _key_hash
    cdef public bint _sticky_null
    cdef public object _txn
    cdef public Py_ssize_t _size_fast_limit
    cdef public Py_ssize_t _unyielded

    def __init__(self):
        self._state = 0
        self._plain = True
        self._topics = {}
        self._batches = {}
        self._key_hash = None
        self._sticky_null = True
        self._txn = None
        self._size_fast_limit = 0
        self._unyielded = 0

    async def _send_slow(self, topic, value, key, partition, timestamp_ms, headers):
        raise NotImplementedError

    async def send(self, topic, value=None, key=None, partition=None, timestamp_ms=None, headers=None):
        """Queue one record; returns a future for its :class:`RecordMetadata`.

        Waits only for the topic's metadata (first use) and for buffer memory, each up to max_block_ms;
        raises :class:`KafkaTimeoutError` then. A record too large for max_request_size (or
        buffer_memory) raises :class:`RecordTooLargeError` at once.
        """
        cdef Py_ssize_t n = 0, p
        cdef long long ts
        cdef bint sticky = False
        cdef PyObject *found
        cdef TopicInfo info
        if self._state != 1 or not self._plain or headers is not None:
            return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
        if value is not None:
            if not PyBytes_CheckExact(value):
                return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
            n = PyBytes_GET_SIZE(value)
        if key is not None:
            if not PyBytes_CheckExact(key):
                return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
            n += PyBytes_GET_SIZE(key)
        found = PyDict_GetItem(self._topics, topic)
        if found == NULL or n > self._size_fast_limit:
            return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
        info = <TopicInfo>found
        if partition is None:
            if key is not None and self._key_hash is not None:
                p = self._key_hash(key, info.num_partitions)
            elif self._sticky_null:
                p = info.sticky_partition
                if p < 0:
                    return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
                sticky = True
            else:
                return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
        elif type(partition) is int and 0 <= partition < info.num_partitions:
            p = partition
        else:
            return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
        if p < 0 or p >= PyList_GET_SIZE(info.tps):
            return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
        if timestamp_ms is None:
            ts = _now_ms()
        elif type(timestamp_ms) is int and timestamp_ms >= 0:
            ts = timestamp_ms
        else:
            return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
        tp = <object>PyList_GET_ITEM(info.tps, p)
        if self._txn is not None:  # transactional: only partitions already registered in the open transaction
            registered = self._txn.sendable
            if registered is None or tp not in registered:
                return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
        dq = <object>PyList_GET_ITEM(info.deques, p)
        if dq is None:
            # The accumulator makes one deque per partition and keeps it: remember it here, which saves
            # hashing the TopicPartition on every record.
            found = PyDict_GetItem(self._batches, tp)
            if found == NULL:
                return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
            dq = <object>found
            info.deques[p] = dq
        if not dq:
            return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
        batch = dq[-1]
        if not batch.is_open or (sticky and batch is not info.sticky_batch):
            return await self._send_slow(topic, value, key, partition, timestamp_ms, headers)
        delta = batch.builder.append(ts, key, value, None)
        if delta is None:
            return await self._send_slow(topic, value, key, partition, ts, headers)
        fut = make_future(<BatchResult>batch.result, <long long>delta, ts)
        self._unyielded += n
        if self._unyielded >= _YIELD_BYTES:
            self._unyielded = 0
            await _sleep(0)
        return fut

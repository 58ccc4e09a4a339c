# Augments _send.py when Cython compiles it: its classes become extension types with these C fields and
# the fast path's locals C types (Cython's pure-Python mode).

cimport cython

from aiokafka_lite.producer._handles cimport BatchResult
from aiokafka_lite.records._core cimport BatchBuilder


cdef class BatchHead:
    cdef public object builder
    cdef public bint is_open
    cdef public object result


cdef class TopicInfo:
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


cdef class SendCore:
    cdef public int _state
    cdef public bint _plain
    cdef public dict _topics
    cdef public dict _batches
    cdef public object _key_hash
    cdef public bint _sticky_null
    cdef public object _txn
    cdef public Py_ssize_t _size_fast_limit
    cdef public object _put_open
    cdef public Py_ssize_t _unyielded

    @cython.locals(n=Py_ssize_t, ts=cython.longlong, info=TopicInfo, builder=BatchBuilder, batch=BatchHead)
    cdef object _append_fast(self, object topic, object value, object key, object partition,
                             object timestamp_ms, object headers)
    cdef object _fast_batch(self, TopicInfo info, object key, object partition)
    @cython.locals(batch=BatchHead)
    cdef object _open_batch(self, TopicInfo info, Py_ssize_t p)


cdef int _RUNNING
cdef Py_ssize_t _YIELD_BYTES


cdef long long _now_ms() noexcept
@cython.locals(n=Py_ssize_t)
cdef Py_ssize_t _plain_size(object key, object value) noexcept
cdef long long _fast_timestamp(object timestamp_ms) except? -2

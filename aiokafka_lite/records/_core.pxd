# The records core's C-level interface: the batch builder and its store pool, so that the send fast path
# (producer/_send.py, compiled) calls BatchBuilder.append without a Python method call.

from libc.stdint cimport int16_t, int32_t, int64_t

ctypedef unsigned char uchar


cdef class StorePool:
    cdef list _free  # idle stores, each at the full size it was allocated with
    cdef Py_ssize_t _free_bytes
    cdef list _out  # (batch, its allocated size) for batches built in a pooled store
    cdef Py_ssize_t _max_idle
    cdef Py_ssize_t _max_out
    cdef object _take(self, Py_ssize_t records)
    cdef void _give(self, object store)
    cdef void _built(self, object batch, Py_ssize_t allocated)
    cdef void _reclaim(self)


cdef class BatchBuilder:
    # The batch is built inside one bytes object that only this builder holds until build() hands it
    # out: the records start BATCH_OVERHEAD bytes in (``_buf``), so an uncompressed batch gets its
    # header and CRC written in place, with no copy of its records (they are megabytes for large values).
    cdef uchar *_buf
    cdef object _store
    cdef Py_ssize_t _len
    cdef Py_ssize_t _cap
    cdef Py_ssize_t _batch_size
    cdef int _codec
    cdef object _level
    cdef int _attrs
    cdef int64_t _base_offset
    cdef int32_t _ple
    cdef int64_t _pid
    cdef int16_t _epoch
    cdef int32_t _seq
    cdef int32_t _count
    cdef int64_t _first_ts
    cdef int64_t _max_ts
    cdef object _built
    cdef StorePool _pool  # where a store of POOL_MIN or more goes back (its allocation is exactly _cap)
    cdef int _resize(self, Py_ssize_t records_len) except -1
    cdef int _grow(self, Py_ssize_t need) except -1
    cdef object _append(self, int64_t ts, object key, object value, object headers)
    cdef Py_ssize_t _append_buffer(self, object vb, list keys, int64_t ts, Py_ssize_t start) except -1
    cpdef object append(self, object timestamp_ms, object key, object value, object headers=*)

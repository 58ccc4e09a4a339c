# Augments _handles.py when Cython compiles it: its classes become extension types with these C fields,
# and the compiled send path (_send.pyx) cimports them to call make_future at C speed.

cimport cython


cdef class BatchResult:
    cdef public str topic
    cdef public int partition
    cdef public object loop
    cdef public long long base_offset
    cdef public long long log_append_time
    cdef public object error
    cdef public bint done
    cdef list _waiters
    cdef list _callbacks
    cdef public list parts
    cdef _finish(self)
    @cython.locals(b=BatchResult, part=BatchResult, first=cython.longlong)
    cpdef tuple locate(self, long long index)


cdef class _DoneIter:
    cdef public object value


@cython.freelist(1024)
cdef class RecordFuture:
    cdef public BatchResult batch
    cdef public long long index
    cdef public long long timestamp
    cdef object _cancelled
    @cython.locals(b=BatchResult, index=cython.longlong, lat=cython.longlong)
    cpdef result(self)


@cython.locals(f=RecordFuture)
cpdef RecordFuture make_future(BatchResult batch, long long index, long long timestamp)

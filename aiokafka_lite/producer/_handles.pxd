# Declarations of the compiled handles, so that the compiled send path calls them at C speed.

cdef class BatchResult:
    cdef public str topic
    cdef public int partition
    cdef public object loop
    cdef public long long base_offset
    cdef public long long log_append_time
    cdef public object error
    cdef public bint done
    cdef object _fut
    cdef list _callbacks
    cdef public list parts
    cdef _finish(self)
    cpdef tuple locate(self, long long index)


cdef class RecordFuture:
    cdef public BatchResult batch
    cdef public long long index
    cdef public long long timestamp


cpdef RecordFuture make_future(BatchResult batch, long long index, long long timestamp)

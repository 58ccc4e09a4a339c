# Included by _core.pyx: batch stores reused, as Java's BufferPool reuses batch_size buffers.

cdef extern from *:
    """
    /* A bytes object nobody else holds gets a new logical size within its allocation (never above
       what it was allocated with): the trailing NUL and the hash cache are kept right. */
    static void alk_bytes_set_size(PyObject *b, Py_ssize_t n) {
        Py_SET_SIZE(b, n);
        PyBytes_AS_STRING(b)[n] = '\\0';
    #if defined(__GNUC__)
    #pragma GCC diagnostic push
    #pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    #endif
        ((PyBytesObject *)b)->ob_shash = -1;
    #if defined(__GNUC__)
    #pragma GCC diagnostic pop
    #endif
    }
    """
    void alk_bytes_set_size(object b, Py_ssize_t n)
    Py_ssize_t alk_refcnt "Py_REFCNT" (PyObject *o)
    PyObject *PyTuple_GET_ITEM(object t, Py_ssize_t i)


cdef enum:
    POOL_MIN = 32768  # smaller stores come from malloc's warm free lists; pooling them gains nothing


cdef class StorePool:
    """Large batch stores, reused once nothing holds them.

    A fresh large allocation reaches the process as untouched pages, and each first touch is a page
    fault: with 16 KiB values they were a fifth of the producer's CPU (perf), more than the copies.
    Java's BufferPool keeps batch_size buffers for its GC's sake; this keeps stores of any size from
    POOL_MIN bytes of records up. A store built into an uncompressed batch *is* the batch, so it comes
    back only when the batch's last reference is gone: the pool keeps the batches it was handed (up to
    ``max_out``) and takes back those it alone holds (refcount 1). A compressed batch's store comes
    back at once. Idle stores hold at most ``max_idle`` bytes.
    """

    # Its fields and C methods are declared in _core.pxd.

    def __init__(self, Py_ssize_t max_idle=8 << 20, Py_ssize_t max_out=64):
        if max_idle < 0 or max_out < 0:
            raise IllegalArgumentError("StorePool sizes must be >= 0")
        self._free = []
        self._free_bytes = 0
        self._out = []
        self._max_idle = max_idle
        self._max_out = max_out

    @property
    def idle(self):
        """Bytes of idle stores ready for reuse (after taking back what nobody holds any more)."""
        self._reclaim()
        return self._free_bytes

    cdef object _take(self, Py_ssize_t records):
        """A store for at least ``records`` bytes of records that only the caller holds: the smallest
        idle one that fits (and is not over twice that), else a new one."""
        cdef Py_ssize_t i, best = -1, n, best_n = 0
        if self._out:
            self._reclaim()
        for i in range(len(self._free)):
            n = PyBytes_GET_SIZE(self._free[i])
            if BATCH_OVERHEAD + records <= n <= 2 * (BATCH_OVERHEAD + records) and (best < 0 or n < best_n):
                best, best_n = i, n
        if best < 0:
            return PyBytes_FromStringAndSize(NULL, BATCH_OVERHEAD + records)
        self._free_bytes -= best_n
        return self._free.pop(best)

    cdef void _give(self, object store):
        """A store nobody else will use (a compressed batch's records), at its allocated size."""
        cdef Py_ssize_t n = PyBytes_GET_SIZE(store)
        if self._free_bytes + n <= self._max_idle:
            self._free.append(store)
            self._free_bytes += n

    cdef void _built(self, object batch, Py_ssize_t allocated):
        """A store handed out as a finished batch (its size cut to the batch's): it comes back once the
        pool alone holds it."""
        if len(self._out) < self._max_out:
            self._out.append((batch, allocated))

    cdef void _reclaim(self):
        cdef list out = self._out
        cdef list keep
        cdef Py_ssize_t i, n, first = -1
        cdef tuple entry
        cdef PyObject *b
        # Runs on every take: while every batch handed out is still held (in flight), it only looks,
        # with no list built.
        for i in range(PyList_GET_SIZE(out)):
            if alk_refcnt(PyTuple_GET_ITEM(<tuple>PyList_GET_ITEM(out, i), 0)) == 1:
                first = i
                break
        if first < 0:
            return
        keep = out[:first]
        for i in range(first, PyList_GET_SIZE(out)):
            entry = <tuple>PyList_GET_ITEM(out, i)
            b = PyTuple_GET_ITEM(entry, 0)  # borrowed: the tuple's is the only reference counted here
            if alk_refcnt(b) > 1:
                keep.append(entry)
                continue
            n = entry[1]
            if self._free_bytes + n <= self._max_idle:  # nothing else can see it: safe to write into again
                alk_bytes_set_size(<object>b, n)
                self._free.append(<object>b)
                self._free_bytes += n
        self._out = keep  # the old list goes, and with it the batches neither kept nor reused

# Included by _core.pyx: the v2 batch builder (the produce hot path) and producer-state patching.

cdef inline Py_ssize_t _put_record(BatchBuilder self, int64_t ts, const uchar *kp, Py_ssize_t klen, const uchar *vp,
                                   Py_ssize_t vlen, list hdrs, Py_ssize_t nh, Py_ssize_t hsize) except -2:
    """Write one record (``klen``/``vlen`` -1: null; ``hdrs`` encoded, ``hsize`` their bytes): its
    offset delta, or -1 when the batch is full."""
    cdef Py_ssize_t body, total, i
    cdef int64_t delta
    cdef uchar *w
    cdef bytes hk
    cdef object hv
    delta = 0 if self._count == 0 else <int64_t>(<uint64_t>ts - <uint64_t>self._first_ts)
    body = (1 + alk_varint_size(delta) + alk_varint_size(self._count)
            + (alk_varint_size(klen) + (klen if klen > 0 else 0))
            + (alk_varint_size(vlen) + (vlen if vlen > 0 else 0))
            + alk_varint_size(nh) + hsize)
    total = alk_varint_size(body) + body
    if self._count > 0 and BATCH_OVERHEAD + self._len + total > self._batch_size:
        return -1
    if self._len + total > self._cap:
        self._grow(total)
    w = self._buf + self._len
    w = alk_put_varint(w, body)
    w[0] = 0
    w += 1
    w = alk_put_varint(w, delta)
    w = alk_put_varint(w, self._count)
    w = alk_put_varint(w, klen)
    if klen > 0:
        memcpy(w, kp, klen)
        w += klen
    w = alk_put_varint(w, vlen)
    if vlen > 0:
        memcpy(w, vp, vlen)
        w += vlen
    w = alk_put_varint(w, nh)
    for i in range(nh):
        hk, hv = hdrs[i]
        w = alk_put_varint(w, len(hk))
        memcpy(w, PyBytes_AS_STRING(hk), len(hk))
        w += len(hk)
        if hv is None:
            w = alk_put_varint(w, -1)
        else:
            w = alk_put_varint(w, len(<bytes>hv))
            memcpy(w, PyBytes_AS_STRING(hv), len(<bytes>hv))
            w += len(<bytes>hv)
    self._len += total
    if self._count == 0:
        self._first_ts = ts
        self._max_ts = ts
    elif ts > self._max_ts:
        self._max_ts = ts
    self._count += 1
    return self._count - 1


cdef inline Py_ssize_t _append_record(BatchBuilder self, int64_t ts, object key, object value,
                                      object headers) except -2:
    """Append one record (key, value and headers as Python objects): its offset delta, or -1 when the
    batch is full."""
    cdef const uchar *kp = NULL
    cdef const uchar *vp = NULL
    cdef Py_ssize_t klen = -1, vlen = -1, hsize = 0, i, nh = 0
    cdef list hdrs = None
    cdef bytes hk
    cdef object hv
    if key is not None:
        if not PyBytes_CheckExact(key):
            key = to_bytes(key, "key")
        kp = <const uchar *>PyBytes_AS_STRING(key)
        klen = PyBytes_GET_SIZE(key)
    if value is not None:
        if not PyBytes_CheckExact(value):
            value = to_bytes(value, "value")
        vp = <const uchar *>PyBytes_AS_STRING(value)
        vlen = PyBytes_GET_SIZE(value)
    if headers:
        hdrs = encode_headers(headers)
        nh = len(hdrs)
        for i in range(nh):
            hk, hv = hdrs[i]
            hsize += alk_varint_size(len(hk)) + len(hk)
            if hv is None:
                hsize += 1
            else:
                hsize += alk_varint_size(len(hv)) + len(<bytes>hv)
    return _put_record(self, ts, kp, klen, vp, vlen, hdrs, nh, hsize)


cdef class BatchBuilder:
    """Accumulates records into one v2 record batch; :meth:`build` compresses and checksums it.

    ``append`` refuses a record (returns None) once the batch would exceed ``batch_size`` bytes of
    uncompressed records plus header, except for the first record, which always fits.
    """

    # Its fields and C methods are declared in _core.pxd (the send fast path calls ``append`` at C level).

    def __cinit__(self):
        self._buf = NULL
        self._store = None

    def __init__(self, int compression=0, Py_ssize_t batch_size=16384, *, compression_level=None,
                 bint is_transactional=False, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                 partition_leader_epoch=-1, base_offset=0, int timestamp_type=0, bint is_control=False,
                 Py_ssize_t capacity=0, StorePool pool=None):
        if compression < 0 or compression > 4:
            raise IllegalArgumentError(f"unknown compression codec {compression}")
        if (base_offset != 0 or partition_leader_epoch != -1 or producer_id != -1 or producer_epoch != -1
                or base_sequence != -1):
            # A producer's every new batch has the defaults, which fit: skip the Python-level call then.
            check_batch_fields(base_offset, partition_leader_epoch, producer_id, producer_epoch, base_sequence)
        self._codec = compression
        self._level = compression_level
        self._batch_size = batch_size
        self._attrs = compression
        if timestamp_type == 1:
            self._attrs |= ATTR_LOG_APPEND
        if is_transactional:
            self._attrs |= ATTR_TRANSACTIONAL
        if is_control:
            self._attrs |= ATTR_CONTROL
        self._base_offset = base_offset
        self._ple = partition_leader_epoch
        self._pid = producer_id
        self._epoch = producer_epoch
        self._seq = base_sequence
        self._count = 0
        self._first_ts = -1
        self._max_ts = -1
        self._built = None
        self._len = 0
        # Start small and double as records come (_grow): a store's first page is touched, so a fixed
        # batch_size-sized start cost every open one-record batch a page (10,000 partitions: ~40 MB).
        # ``capacity`` (the size its partition's last batch reached) skips the doubling, whose copies
        # were a quarter of the memmove in the 16 KiB producer (perf).
        # With a ``pool``, a store of POOL_MIN or more comes from it (no fresh pages) and goes back to it.
        self._cap = min(max(batch_size, 256), _FIRST_CAP)
        if capacity > self._cap:
            self._cap = capacity
        self._pool = pool
        if pool is not None and self._cap >= POOL_MIN:
            self._store = pool._take(self._cap)
            self._cap = PyBytes_GET_SIZE(self._store) - BATCH_OVERHEAD
        else:
            self._store = PyBytes_FromStringAndSize(NULL, BATCH_OVERHEAD + self._cap)
        self._buf = <uchar *>PyBytes_AS_STRING(self._store) + BATCH_OVERHEAD

    @property
    def record_count(self):
        return self._count

    @property
    def size(self):
        """Bytes of the batch so far, before compression."""
        return BATCH_OVERHEAD + self._len

    @property
    def batch_size(self):
        return self._batch_size

    def grow(self, Py_ssize_t extra):
        """Let the batch take ``extra`` more bytes of records (its buffer grows as needed anyway)."""
        self._batch_size += extra

    @property
    def compression(self):
        return self._codec

    @property
    def first_timestamp(self):
        return self._first_ts

    @property
    def max_timestamp(self):
        return self._max_ts

    @property
    def is_built(self):
        return self._built is not None

    def set_producer_state(self, producer_id, producer_epoch, base_sequence):
        """Set the idempotence fields before :meth:`build` (see also :func:`patch_producer_state`)."""
        if self._built is not None:
            raise IllegalStateError("the batch is already built")
        check_batch_fields(0, 0, producer_id, producer_epoch, base_sequence)
        self._pid = producer_id
        self._epoch = producer_epoch
        self._seq = base_sequence

    cdef int _resize(self, Py_ssize_t records_len) except -1:
        """Resize the store to hold ``records_len`` bytes of records (it may move)."""
        cdef PyObject *tmp = <PyObject *>self._store
        Py_INCREF(self._store)
        self._store = None  # now ``tmp`` holds the only reference, as _PyBytes_Resize requires
        _PyBytes_Resize(&tmp, BATCH_OVERHEAD + records_len)  # on failure it frees and raises
        self._store = <object>tmp
        Py_DECREF(self._store)
        self._buf = <uchar *>PyBytes_AS_STRING(self._store) + BATCH_OVERHEAD
        return 0

    cdef int _grow(self, Py_ssize_t need) except -1:
        cdef Py_ssize_t cap = self._cap * 2
        if cap < self._len + need:
            cap = self._len + need
        self._resize(cap)
        self._cap = cap
        return 0

    cdef object _append(self, int64_t ts, object key, object value, object headers):
        cdef Py_ssize_t delta = _append_record(self, ts, key, value, headers)
        if delta < 0:
            return None
        return delta

    cpdef object append(self, object timestamp_ms, object key, object value, object headers=None):
        """Add a record; returns its offset delta, or None when the batch is full."""
        if self._built is not None:
            raise IllegalStateError("cannot append to a built batch")
        return self._append(_timestamp(timestamp_ms), key, value, headers)

    def append_many(self, values, keys=None, timestamps=None, headers=None, Py_ssize_t start=0):
        """Append ``values[start:]`` (with matching keys, timestamps, headers) until the batch is full.

        ``timestamps`` is one timestamp for all records, None (now), or a sequence. Returns how many
        records were appended (the first always fits in an empty batch).
        """
        cdef Py_ssize_t i, n = len(values)
        cdef Py_ssize_t done = 0
        cdef int64_t ts = 0
        cdef bint single = timestamps is None or isinstance(timestamps, int)
        cdef bint fast = type(values) is list and (keys is None or type(keys) is list) and headers is None
        if self._built is not None:
            raise IllegalStateError("cannot append to a built batch")
        if single:
            ts = _timestamp(timestamps)
        if (type(values) is ValueBuffer and single and headers is None
                and (keys is None or type(keys) is list)):
            return self._append_buffer(values, keys, ts, start)
        for i in range(start, n):
            if not single:
                ts = _timestamp(timestamps[i])
            if fast:
                if _append_record(self, ts, None if keys is None else <object>PyList_GET_ITEM(keys, i),
                                  <object>PyList_GET_ITEM(values, i), None) < 0:
                    break
            elif _append_record(self, ts, None if keys is None else keys[i], values[i],
                                None if headers is None else headers[i]) < 0:
                break
            done += 1
        return done

    cdef Py_ssize_t _append_buffer(self, object vb, list keys, int64_t ts, Py_ssize_t start) except -1:
        """``append_many`` of a ValueBuffer's values from ``start``: each copied once, from the buffer
        into the batch."""
        cdef _Values v
        cdef Py_ssize_t i, s, e, done = 0, klen, vlen
        cdef const uchar *kp
        cdef object key
        try:
            _values_open(&v, vb)
            if keys is not None and PyList_GET_SIZE(keys) < v.n:
                raise IllegalArgumentError(f"{PyList_GET_SIZE(keys)} keys for {v.n} values")
            for i in range(start, v.n):
                _value_span(&v, i, &s, &e)
                vlen = -1 if _value_null(&v, i) else e - s
                kp = NULL
                klen = -1
                if keys is not None:
                    key = <object>PyList_GET_ITEM(keys, i)
                    if key is not None:
                        if not PyBytes_CheckExact(key):
                            key = to_bytes(key, "key")
                        kp = <const uchar *>PyBytes_AS_STRING(key)
                        klen = PyBytes_GET_SIZE(key)
                if _put_record(self, ts, kp, klen, <const uchar *>v.data.buf + s, vlen, None, 0, 0) < 0:
                    break
                done += 1
        finally:
            _values_close(&v)
        return done

    def build(self):
        """The finished batch: header, (compressed) records and CRC. Later appends are refused."""
        cdef object payload
        cdef const uchar *pp
        cdef Py_ssize_t plen
        cdef uchar *o
        if self._built is not None:
            return self._built
        if self._count == 0:
            raise IllegalStateError("cannot build a batch without records")
        if self._codec:
            payload = compress(self._codec, PyMemoryView_FromMemory(<char *>self._buf, self._len, PyBUF_READ),
                               self._level)
            pp = <const uchar *>PyBytes_AS_STRING(payload)
            plen = PyBytes_GET_SIZE(payload)
            out = PyBytes_FromStringAndSize(NULL, BATCH_OVERHEAD + plen)
            memcpy(<uchar *>PyBytes_AS_STRING(out) + BATCH_OVERHEAD, pp, plen)
            if self._pool is not None and self._cap >= POOL_MIN:
                self._pool._give(self._store)
        else:
            plen = self._len
            if self._pool is not None and self._cap >= POOL_MIN and plen * 2 >= self._cap:
                # Keeps its allocation, for reuse; a batch filling less than half of it gives the rest
                # back instead (it is held until answered, and buffer_memory counts only its bytes).
                alk_bytes_set_size(self._store, BATCH_OVERHEAD + plen)
                self._pool._built(self._store, BATCH_OVERHEAD + self._cap)
            elif self._cap != plen:
                self._resize(plen)  # shrinking: realloc gives the tail back, mostly in place
            out = self._store
        self._store = None
        self._pool = None
        o = <uchar *>PyBytes_AS_STRING(out)
        alk_put64(o, <uint64_t>self._base_offset)
        alk_put32(o + 8, <uint32_t>(BATCH_OVERHEAD - 12 + plen))
        alk_put32(o + 12, <uint32_t>self._ple)
        o[16] = 2
        alk_put16(o + 21, <uint16_t>self._attrs)
        alk_put32(o + 23, <uint32_t>(self._count - 1))
        alk_put64(o + 27, <uint64_t>self._first_ts)
        alk_put64(o + 35, <uint64_t>self._max_ts)
        alk_put64(o + 43, <uint64_t>self._pid)
        alk_put16(o + 51, <uint16_t>self._epoch)
        alk_put32(o + 53, <uint32_t>self._seq)
        alk_put32(o + 57, <uint32_t>self._count)
        alk_put32(o + 17, _crc32c(o + 21, BATCH_OVERHEAD - 21 + plen))
        self._built = out
        self._buf = NULL
        self._len = self._cap = 0
        return out


def patch_producer_state(batch, producer_id, producer_epoch, base_sequence, is_transactional=None):
    """Copy of a built v2 batch with new producer id, epoch and base sequence (and transactional bit).

    The Sender assigns these at drain time, after the batch was built; only the header and the CRC
    change, the records are not re-encoded.
    """
    cdef Py_buffer view
    cdef uchar *o
    cdef uint16_t attrs
    check_batch_fields(0, 0, producer_id, producer_epoch, base_sequence)
    PyObject_GetBuffer(batch, &view, PyBUF_SIMPLE)
    try:
        if view.len < BATCH_OVERHEAD or (<const uchar *>view.buf)[16] != 2:
            raise IllegalArgumentError("not a v2 record batch")
        out = PyBytes_FromStringAndSize(<const char *>view.buf, view.len)
    finally:
        PyBuffer_Release(&view)
    o = <uchar *>PyBytes_AS_STRING(out)
    alk_put64(o + 43, <uint64_t><int64_t>producer_id)
    alk_put16(o + 51, <uint16_t><int16_t>producer_epoch)
    alk_put32(o + 53, <uint32_t><int32_t>base_sequence)
    if is_transactional is not None:
        attrs = alk_be16(o + 21)
        if is_transactional:
            attrs |= ATTR_TRANSACTIONAL
        else:
            attrs &= ~ATTR_TRANSACTIONAL
        alk_put16(o + 21, attrs)
    alk_put32(o + 17, _crc32c(o + 21, PyBytes_GET_SIZE(out) - 21))
    return out

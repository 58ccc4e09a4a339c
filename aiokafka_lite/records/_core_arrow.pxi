# Arrow decode of the compiled core (included by _core.pyx): records go straight from the batch
# bytes into Arrow's columnar buffers (validity bitmaps, int32 offsets, data) held in C memory, which
# pyarrow then wraps without copying. No Python object is made per record (legacy v0/v1 message
# sets, decoded by shared Python code, are the exception).

cdef struct Buf:
    uchar *p
    Py_ssize_t n
    Py_ssize_t cap


cdef int _buf_init(Buf *b, Py_ssize_t cap) except -1:
    b.p = <uchar *>malloc(cap)
    if b.p == NULL:
        raise MemoryError()
    b.n = 0
    b.cap = cap
    return 0


cdef int _buf_grow(Buf *b, Py_ssize_t need) except -1:
    cdef Py_ssize_t cap = b.cap * 2
    cdef uchar *q
    if cap < b.n + need:
        cap = b.n + need
    q = <uchar *>realloc(b.p, cap)
    if q == NULL:
        raise MemoryError()
    b.p = q
    b.cap = cap
    return 0


cdef inline int _reserve(Buf *b, Py_ssize_t need) except -1:
    if b.n + need > b.cap:
        return _buf_grow(b, need)
    return 0


cdef inline void _put_i32(Buf *b, int32_t v) noexcept:
    (<int32_t *>(b.p + b.n))[0] = v
    b.n += 4


cdef int _grow_bitmap(Buf *b, Py_ssize_t bits) except -1:
    """Make room for ``bits`` validity bits (new bytes zeroed: null until set)."""
    cdef Py_ssize_t need = (bits + 7) // 8 - b.n
    if need > 0:
        _reserve(b, need)
        memset(b.p + b.n, 0, need)
        b.n += need
    return 0


cdef inline int _check_2g(Py_ssize_t n) except -1:
    if n > INT32_MAX:
        raise KafkaError("decoded keys or values exceed 2 GiB, too much for one Arrow batch")
    return 0


cdef class _Mem:
    """Owns a malloc'd block that a pyarrow Buffer points into; freed when pyarrow lets go."""

    cdef void *p

    def __dealloc__(self):
        free(self.p)


cdef object _arrow_buffer(object pa, Buf *b):
    cdef _Mem mem = _Mem()
    mem.p = b.p
    b.p = NULL
    return pa.foreign_buffer(<uintptr_t>mem.p, b.n, mem)


cdef enum:
    N_BUFS = 15


cdef class _ArrowSink:
    cdef Buf bufs[N_BUFS]
    cdef Buf *key_valid
    cdef Buf *key_off
    cdef Buf *key_data
    cdef Buf *val_valid
    cdef Buf *val_off
    cdef Buf *val_data
    cdef Buf *offs
    cdef Buf *ts
    cdef Buf *tstype
    cdef Buf *hdr_off
    cdef Buf *hk_off
    cdef Buf *hk_data
    cdef Buf *hv_valid
    cdef Buf *hv_off
    cdef Buf *hv_data
    cdef Py_ssize_t n, nh, key_nulls, val_nulls, hv_nulls

    def __cinit__(self):
        cdef int i
        for i in range(N_BUFS):
            self.bufs[i].p = NULL
        for i in range(N_BUFS):
            _buf_init(&self.bufs[i], 256)
        self.key_valid = &self.bufs[0]
        self.key_off = &self.bufs[1]
        self.key_data = &self.bufs[2]
        self.val_valid = &self.bufs[3]
        self.val_off = &self.bufs[4]
        self.val_data = &self.bufs[5]
        self.offs = &self.bufs[6]
        self.ts = &self.bufs[7]
        self.tstype = &self.bufs[8]
        self.hdr_off = &self.bufs[9]
        self.hk_off = &self.bufs[10]
        self.hk_data = &self.bufs[11]
        self.hv_valid = &self.bufs[12]
        self.hv_off = &self.bufs[13]
        self.hv_data = &self.bufs[14]
        _put_i32(self.key_off, 0)
        _put_i32(self.val_off, 0)
        _put_i32(self.hdr_off, 0)
        _put_i32(self.hk_off, 0)
        _put_i32(self.hv_off, 0)
        self.n = self.nh = self.key_nulls = self.val_nulls = self.hv_nulls = 0

    def __dealloc__(self):
        cdef int i
        for i in range(N_BUFS):
            free(self.bufs[i].p)

    cdef int reserve(self, Py_ssize_t count) except -1:
        """Room for ``count`` more records in the fixed-width columns."""
        _grow_bitmap(self.key_valid, self.n + count)
        _grow_bitmap(self.val_valid, self.n + count)
        _reserve(self.key_off, 4 * count)
        _reserve(self.val_off, 4 * count)
        _reserve(self.hdr_off, 4 * count)
        _reserve(self.offs, 8 * count)
        _reserve(self.ts, 8 * count)
        _reserve(self.tstype, 4 * count)
        return 0

    cdef inline int _binary(self, Buf *valid, Buf *off, Buf *data, const uchar *src, Py_ssize_t length,
                            Py_ssize_t i) except -1:
        if length >= 0:
            valid.p[i >> 3] |= <uchar>(1 << (i & 7))
            if data.n + length > data.cap:
                _buf_grow(data, length)
            memcpy(data.p + data.n, src, length)
            data.n += length
            _check_2g(data.n)
        _put_i32(off, <int32_t>data.n)
        return 0

    cdef int _header(self, const uchar *k, Py_ssize_t klen, const uchar *v, Py_ssize_t vlen) except -1:
        _reserve(self.hk_off, 4)
        _reserve(self.hv_off, 4)
        _grow_bitmap(self.hv_valid, self.nh + 1)
        _reserve(self.hk_data, klen)
        memcpy(self.hk_data.p + self.hk_data.n, k, klen)
        self.hk_data.n += klen
        _check_2g(self.hk_data.n)
        _put_i32(self.hk_off, <int32_t>self.hk_data.n)
        if vlen < 0:
            self.hv_nulls += 1
        self._binary(self.hv_valid, self.hv_off, self.hv_data, v, vlen, self.nh)
        self.nh += 1
        return 0

    cdef int add(self, const uchar *p, RecView *r, int64_t off, int64_t ts, int32_t ts_type) except -1:
        """Append one v2 record (room reserved by :meth:`reserve`)."""
        cdef Py_ssize_t i = self.n, pos, h
        cdef int64_t klen = 0
        if r.key_len < 0:
            self.key_nulls += 1
        self._binary(self.key_valid, self.key_off, self.key_data, p + r.key_pos, r.key_len, i)
        if r.val_len < 0:
            self.val_nulls += 1
        self._binary(self.val_valid, self.val_off, self.val_data, p + r.val_pos, r.val_len, i)
        (<int64_t *>(self.offs.p + self.offs.n))[0] = off
        self.offs.n += 8
        (<int64_t *>(self.ts.p + self.ts.n))[0] = ts
        self.ts.n += 8
        _put_i32(self.tstype, ts_type)
        if r.hdr_count:
            pos = r.hdr_pos
            for h in range(r.hdr_count):
                alk_read_varint(p, r.end, &pos, &klen)
                self._header_at(p, r.end, &pos, klen)
        _put_i32(self.hdr_off, <int32_t>self.nh)
        self.n += 1
        return 0

    cdef int _header_at(self, const uchar *p, Py_ssize_t end, Py_ssize_t *pos, int64_t klen) except -1:
        cdef const uchar *k = p + pos[0]
        cdef int64_t vlen = 0
        cdef bytes fixed
        pos[0] += <Py_ssize_t>klen
        alk_read_varint(p, end, pos, &vlen)
        if alk_utf8_valid(k, <Py_ssize_t>klen):
            self._header(k, <Py_ssize_t>klen, p + pos[0], <Py_ssize_t>vlen)
        else:  # Arrow strings must be UTF-8: the key as the lenient decode gives it (U+FFFD)
            fixed = PyUnicode_DecodeUTF8(<const char *>k, <Py_ssize_t>klen, "replace").encode("utf-8")
            self._header(<const uchar *>fixed, len(fixed), p + pos[0], <Py_ssize_t>vlen)
        if vlen > 0:
            pos[0] += <Py_ssize_t>vlen
        return 0

    cdef int add_record(self, object rec) except -1:
        """Append a decoded Record (the legacy path)."""
        cdef bytes key = rec.key, value = rec.value
        cdef RecView r
        cdef const uchar *empty = <const uchar *>""
        self.reserve(1)
        i = self.n
        if key is None:
            self.key_nulls += 1
            self._binary(self.key_valid, self.key_off, self.key_data, empty, -1, i)
        else:
            self._binary(self.key_valid, self.key_off, self.key_data, <const uchar *>PyBytes_AS_STRING(key),
                         PyBytes_GET_SIZE(key), i)
        if value is None:
            self.val_nulls += 1
            self._binary(self.val_valid, self.val_off, self.val_data, empty, -1, i)
        else:
            self._binary(self.val_valid, self.val_off, self.val_data,
                         <const uchar *>PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value), i)
        (<int64_t *>(self.offs.p + self.offs.n))[0] = <int64_t>rec.offset
        self.offs.n += 8
        (<int64_t *>(self.ts.p + self.ts.n))[0] = <int64_t>rec.timestamp
        self.ts.n += 8
        _put_i32(self.tstype, <int32_t>rec.timestamp_type)
        _put_i32(self.hdr_off, <int32_t>self.nh)
        self.n += 1
        return 0

    cdef object finish(self, object topic, object partition):
        import pyarrow as pa

        cdef bytes tb = topic.encode("utf-8")
        cdef Py_ssize_t tl = len(tb), n = self.n, i
        cdef Buf t_off, t_data, part
        cdef int32_t pv = partition
        schema = arrow_schema()
        t_off.p = t_data.p = part.p = NULL
        try:
            _buf_init(&t_off, 4 * (n + 1))
            _buf_init(&t_data, tl * n + 1)
            _buf_init(&part, 4 * n + 4)
            _check_2g(tl * n)
            for i in range(n + 1):
                (<int32_t *>t_off.p)[i] = <int32_t>(i * tl)
            for i in range(n):
                memcpy(t_data.p + i * tl, PyBytes_AS_STRING(tb), tl)
                (<int32_t *>part.p)[i] = pv
            t_off.n = 4 * (n + 1)
            t_data.n = tl * n
            part.n = 4 * n
            keys = pa.Array.from_buffers(
                pa.binary(), n, [_arrow_buffer(pa, self.key_valid) if self.key_nulls else None,
                                 _arrow_buffer(pa, self.key_off), _arrow_buffer(pa, self.key_data)],
                null_count=self.key_nulls)
            values = pa.Array.from_buffers(
                pa.binary(), n, [_arrow_buffer(pa, self.val_valid) if self.val_nulls else None,
                                 _arrow_buffer(pa, self.val_off), _arrow_buffer(pa, self.val_data)],
                null_count=self.val_nulls)
            topics = pa.Array.from_buffers(pa.string(), n, [None, _arrow_buffer(pa, &t_off),
                                                            _arrow_buffer(pa, &t_data)], null_count=0)
            partitions = pa.Array.from_buffers(pa.int32(), n, [None, _arrow_buffer(pa, &part)], null_count=0)
            offsets = pa.Array.from_buffers(pa.int64(), n, [None, _arrow_buffer(pa, self.offs)], null_count=0)
            timestamps = pa.Array.from_buffers(schema.field("timestamp").type, n,
                                               [None, _arrow_buffer(pa, self.ts)], null_count=0)
            ts_types = pa.Array.from_buffers(pa.int32(), n, [None, _arrow_buffer(pa, self.tstype)], null_count=0)
            hkeys = pa.Array.from_buffers(pa.string(), self.nh, [None, _arrow_buffer(pa, self.hk_off),
                                                                 _arrow_buffer(pa, self.hk_data)], null_count=0)
            hvalues = pa.Array.from_buffers(
                pa.binary(), self.nh, [_arrow_buffer(pa, self.hv_valid) if self.hv_nulls else None,
                                       _arrow_buffer(pa, self.hv_off), _arrow_buffer(pa, self.hv_data)],
                null_count=self.hv_nulls)
            list_type = schema.field("headers").type
            structs = pa.Array.from_buffers(list_type.value_type, self.nh, [None], null_count=0,
                                            children=[hkeys, hvalues])
            headers = pa.Array.from_buffers(list_type, n, [None, _arrow_buffer(pa, self.hdr_off)], null_count=0,
                                            children=[structs])
        finally:
            free(t_off.p)
            free(t_data.p)
            free(part.p)
        return pa.RecordBatch.from_arrays(
            [keys, values, topics, partitions, offsets, timestamps, ts_types, headers], schema=schema)


def decode_arrow(data, topic, partition, *, bint check_crcs=True, bint strict=False, bint skip_control=True,
                 start_offset=-1, end_offset=-1, aborted=None):
    """Like :func:`decode_records`, into one ``pyarrow.RecordBatch`` with :func:`arrow_schema`."""
    check_topic_partition(topic, partition)
    cdef _Walker w = _walker(data, check_crcs, strict, skip_control, start_offset, end_offset, aborted)
    cdef _ArrowSink sink = _ArrowSink()
    cdef RecView r
    cdef Py_ssize_t pos, i
    cdef int kind
    cdef bint log_append, stop
    cdef int64_t off
    cdef int32_t ts_type
    cdef const uchar *p
    while True:
        kind = w.next()
        if kind == 0:
            break
        stop = False
        if kind == 2:
            for rec in w.legacy.records:
                if rec.offset < w.start:
                    continue
                if w.stop_at >= 0 and rec.offset >= w.stop_at:
                    stop = True
                    break
                sink.add_record(rec)
        else:
            _check_count(w)
            sink.reserve(w.h.count)
            log_append = (w.h.attrs & ATTR_LOG_APPEND) != 0
            ts_type = 1 if log_append else 0
            p = w.payload
            pos = 0
            for i in range(w.h.count):
                _parse_record(p, w.plen, pos, &r)
                pos = r.end
                if stop:
                    continue
                off = _wrap_add(w.h.base_offset, r.offset_delta)
                if off < w.start:
                    continue
                if w.stop_at >= 0 and off >= w.stop_at:
                    stop = True  # the rest of the batch is still parsed, hence validated
                    continue
                sink.add(p, &r, off, w.h.max_ts if log_append else _wrap_add(w.h.first_ts, r.ts_delta), ts_type)
            _check_leftover(w, pos)
        if stop:
            w.stop()
            break
        w.consume()
    return DecodedArrow(sink.finish(topic, partition), w.next_offset, w.leader_epoch, w.truncated)

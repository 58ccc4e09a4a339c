# Readers of the compiled core (included by _core.pyx): the batch walk with its filters, record
# parsing, read_batches and decode_records. Mirrors _pyread.py step for step.

cdef int64_t INT64_MIN_ = -9223372036854775807 - 1


cdef inline int64_t _wrap_add(int64_t a, int64_t b) noexcept:
    return <int64_t>(<uint64_t>a + <uint64_t>b)


cdef struct RecView:
    int64_t ts_delta
    int64_t offset_delta
    Py_ssize_t key_pos
    Py_ssize_t key_len
    Py_ssize_t val_pos
    Py_ssize_t val_len
    Py_ssize_t hdr_pos
    Py_ssize_t hdr_count
    Py_ssize_t end


cdef struct BatchHdr:
    int64_t base_offset
    int32_t ple
    uint32_t crc
    int16_t attrs
    int32_t last_offset_delta
    int64_t first_ts
    int64_t max_ts
    int64_t pid
    int16_t epoch
    int32_t seq
    int32_t count


cdef int _parse_record(const uchar *p, Py_ssize_t end, Py_ssize_t pos, RecView *r) except -1:
    """Parse and fully validate the record at ``pos`` (headers included) into ``r``."""
    cdef int64_t v
    cdef Py_ssize_t rend, h
    _rv32(p, end, &pos, &v, 0)  # record length
    if v < 0 or v > end - pos:
        raise CorruptRecordError(f"record length {v} runs past the end of the batch")
    rend = pos + <Py_ssize_t>v
    if pos >= rend:
        raise CorruptRecordError("record is empty")
    pos += 1  # attributes: unused
    _rv(p, rend, &pos, &r.ts_delta)
    _rv32(p, rend, &pos, &r.offset_delta, 1)  # offset delta
    _rv32(p, rend, &pos, &v, 2)  # key length
    if v == -1:
        r.key_len = -1
    elif v < -1 or v > rend - pos:
        raise CorruptRecordError(f"key length {v} runs past the end of the record")
    else:
        r.key_pos = pos
        r.key_len = <Py_ssize_t>v
        pos += r.key_len
    _rv32(p, rend, &pos, &v, 3)  # value length
    if v == -1:
        r.val_len = -1
    elif v < -1 or v > rend - pos:
        raise CorruptRecordError(f"value length {v} runs past the end of the record")
    else:
        r.val_pos = pos
        r.val_len = <Py_ssize_t>v
        pos += r.val_len
    _rv32(p, rend, &pos, &v, 4)  # header count
    if v < 0:
        raise CorruptRecordError(f"negative header count {v}")
    r.hdr_count = <Py_ssize_t>v
    r.hdr_pos = pos
    for h in range(r.hdr_count):
        _rv32(p, rend, &pos, &v, 5)  # header key length
        if v < 0 or v > rend - pos:
            raise CorruptRecordError(f"header key length {v} runs past the end of the record")
        # A header key that is not UTF-8 (another client wrote it) is decoded leniently (U+FFFD), as the
        # Java client does: the record is delivered, never failed as corrupt.
        pos += <Py_ssize_t>v
        _rv32(p, rend, &pos, &v, 6)  # header value length
        if v < -1 or v > rend - pos:
            raise CorruptRecordError(f"header value length {v} runs past the end of the record")
        if v > 0:
            pos += <Py_ssize_t>v
    if pos != rend:
        raise CorruptRecordError(f"record has {rend - pos} stray bytes after its headers")
    r.end = rend
    return 0


cdef tuple _headers(const uchar *p, RecView *r):
    """The record's headers as a tuple of (str, bytes | None); ``r`` was validated by _parse_record.

    The tuples are untracked by the garbage collector: they hold only atomic objects, and tracking
    millions of them makes the collector, not decoding, the consumer's main cost.
    """
    cdef list out = []
    cdef Py_ssize_t pos = r.hdr_pos, h
    cdef int64_t v = 0
    cdef object key, value, pair
    for h in range(r.hdr_count):
        alk_read_varint(p, r.end, &pos, &v)
        key = PyUnicode_DecodeUTF8(<const char *>(p + pos), <Py_ssize_t>v, "replace")
        pos += <Py_ssize_t>v
        alk_read_varint(p, r.end, &pos, &v)
        if v < 0:
            value = None
        else:
            value = PyBytes_FromStringAndSize(<const char *>(p + pos), <Py_ssize_t>v)
            pos += <Py_ssize_t>v
        pair = (key, value)
        PyObject_GC_UnTrack(pair)
        out.append(pair)
    result = tuple(out)
    PyObject_GC_UnTrack(result)
    return result


cdef class _Walker:
    """One pass over fetched record data: frames batches, checks them, applies the batch-level filters
    (end offset, read_committed, control batches, batches wholly below the start offset) and hands
    the caller each batch whose records it must visit."""

    cdef Py_buffer view
    cdef bint has_view
    cdef object mv
    cdef const uchar *p
    cdef Py_ssize_t n
    cdef Py_ssize_t pos
    cdef Py_ssize_t end
    cdef bint check_crcs
    cdef bint strict
    cdef bint filtering
    cdef bint skip_control
    cdef int64_t start
    cdef int64_t stop_at
    cdef list pending
    cdef Py_ssize_t pending_i
    cdef set aborted_pids
    cdef int64_t next_offset
    cdef int32_t leader_epoch
    cdef bint truncated
    cdef bint done
    cdef BatchHdr h
    cdef int64_t batch_next
    cdef object payload_obj
    cdef const uchar *payload
    cdef Py_ssize_t plen
    cdef object legacy
    cdef int64_t legacy_next

    def __cinit__(self, data):
        self.has_view = False
        PyObject_GetBuffer(data, &self.view, PyBUF_SIMPLE)
        self.has_view = True
        self.p = <const uchar *>self.view.buf
        self.n = self.view.len
        self.pos = 0
        self.mv = None
        self.pending = None
        self.legacy = None
        self.payload_obj = None
        self.truncated = False
        self.done = False
        self.leader_epoch = -1

    def __dealloc__(self):
        if self.has_view:
            PyBuffer_Release(&self.view)

    cdef setup(self, bint check_crcs, bint strict, bint filtering, bint skip_control, int64_t start,
               int64_t stop_at, object aborted):
        self.check_crcs = check_crcs
        self.strict = strict
        self.filtering = filtering
        self.skip_control = skip_control
        self.start = start
        self.stop_at = stop_at
        self.next_offset = start
        if aborted is not None:
            self.pending = sorted(aborted, key=_first_offset)
            self.pending_i = 0
            self.aborted_pids = set()

    cdef object _view(self):
        # Raw bytes of ``data`` for slicing into codecs and the legacy reader; it never outlives
        # the walker, which holds the buffer.
        if self.mv is None:
            self.mv = PyMemoryView_FromMemory(<char *>self.p, self.n, PyBUF_READ)
        return self.mv

    cdef int _frame(self) except -1:
        """Magic (0-2) of the batch at ``pos``, setting ``end``; 3 if the data ends inside it."""
        cdef Py_ssize_t rem = self.n - self.pos
        cdef int64_t length
        cdef int magic
        cdef str why
        if rem < 12:
            why = f"{rem} bytes left, a batch needs at least 12"
        else:
            length = <int32_t>alk_be32(self.p + self.pos + 8)
            if length < 14:
                raise CorruptRecordError(f"batch length {length} at byte {self.pos} is impossible")
            if rem < 17:
                why = f"{rem} bytes left, the batch header is incomplete"
            else:
                magic = self.p[self.pos + 16]
                if magic > 2:
                    raise CorruptRecordError(f"unknown magic byte {magic} at byte {self.pos}")
                if length < (14 if magic == 0 else 22 if magic == 1 else 49):
                    raise CorruptRecordError(
                        f"batch length {length} at byte {self.pos} is below the minimum for magic {magic}")
                if rem >= 12 + length:
                    self.end = self.pos + 12 + <Py_ssize_t>length
                    return magic
                why = f"{12 + length} bytes declared, {rem} available"
        if self.strict:
            raise CorruptRecordError(f"truncated batch at byte {self.pos}: {why}")
        return 3

    cdef int _header(self) except -1:
        cdef const uchar *q = self.p + self.pos
        cdef BatchHdr *h = &self.h
        cdef uint32_t actual
        h.base_offset = <int64_t>alk_be64(q)
        h.ple = <int32_t>alk_be32(q + 12)
        h.crc = alk_be32(q + 17)
        h.attrs = <int16_t>alk_be16(q + 21)
        h.last_offset_delta = <int32_t>alk_be32(q + 23)
        h.first_ts = <int64_t>alk_be64(q + 27)
        h.max_ts = <int64_t>alk_be64(q + 35)
        h.pid = <int64_t>alk_be64(q + 43)
        h.epoch = <int16_t>alk_be16(q + 51)
        h.seq = <int32_t>alk_be32(q + 53)
        h.count = <int32_t>alk_be32(q + 57)
        if self.check_crcs:
            actual = _crc32c(q + 21, self.end - self.pos - 21)
            if actual != h.crc:
                raise CorruptRecordError(
                    f"batch at offset {h.base_offset}: CRC mismatch (stored {h.crc:#010x}, computed {actual:#010x})")
        if h.count < 0:
            raise CorruptRecordError(f"batch at offset {h.base_offset}: negative record count {h.count}")
        if h.attrs & 7:
            check_codec(h.attrs & 7)
        self.batch_next = _wrap_add(_wrap_add(h.base_offset, h.last_offset_delta), 1)
        return 0

    cdef int _load_payload(self) except -1:
        cdef int codec = self.h.attrs & 7
        if self.payload_obj is not None:
            return 0
        if codec:
            self.payload_obj = decompress(codec, self._view()[self.pos + BATCH_OVERHEAD:self.end])
            self.payload = <const uchar *>PyBytes_AS_STRING(self.payload_obj)
            self.plen = PyBytes_GET_SIZE(self.payload_obj)
        else:
            self.payload_obj = True
            self.payload = self.p + self.pos + BATCH_OVERHEAD
            self.plen = self.end - self.pos - BATCH_OVERHEAD
        return 0

    cdef bint _first_key_is_abort(self) except -1:
        cdef RecView r
        self._load_payload()
        if self.h.count <= 0:
            return False
        _parse_record(self.payload, self.plen, 0, &r)
        if r.key_len < 0:
            return False
        key = PyBytes_FromStringAndSize(<const char *>(self.payload + r.key_pos), r.key_len)
        return parse_control_key(key)[1] == 0

    cdef int next(self) except -1:
        """Advance to the next batch whose records the caller visits: 1 (v2, payload loaded),
        2 (legacy, ``self.legacy`` set) or 0 when done."""
        cdef int magic
        cdef bint skip, is_control
        cdef Py_ssize_t npending
        while not self.done and self.pos < self.n:
            self.payload_obj = None
            self.legacy = None
            magic = self._frame()
            if magic == 3:
                self.truncated = True
                self.done = True
                return 0
            if magic < 2:
                self.legacy = read_legacy(self._view(), self.pos, self.end, self.check_crcs)
                recs = self.legacy.records
                self.legacy_next = _wrap_add(recs[len(recs) - 1].offset, 1)
                if self.filtering and self.stop_at >= 0 and self.legacy.base_offset >= self.stop_at:
                    self.stop()
                    return 0
                return 2
            self._header()
            if not self.filtering:
                self._load_payload()
                return 1
            if self.stop_at >= 0 and self.h.base_offset >= self.stop_at:
                self.stop()
                return 0
            is_control = (self.h.attrs & ATTR_CONTROL) != 0
            skip = False
            if self.pending is not None and self.h.pid >= 0:
                npending = len(self.pending)
                while self.pending_i < npending and self.pending[self.pending_i][1] < self.batch_next:
                    self.aborted_pids.add(self.pending[self.pending_i][0])
                    self.pending_i += 1
                if is_control:
                    if self._first_key_is_abort():
                        self.aborted_pids.discard(self.h.pid)
                elif self.h.attrs & ATTR_TRANSACTIONAL and self.h.pid in self.aborted_pids:
                    skip = True
            if (is_control and self.skip_control) or self.batch_next <= self.start:
                skip = True
            if skip:
                self.consume()
                continue
            self._load_payload()
            return 1
        return 0

    cdef void consume(self) noexcept:
        """The current batch is done with: move past it."""
        cdef int64_t nxt
        if self.legacy is not None:
            nxt = self.legacy_next
            self.leader_epoch = -1
        else:
            nxt = self.batch_next
            self.leader_epoch = self.h.ple
        if nxt > self.next_offset:
            self.next_offset = nxt
        self.pos = self.end
        self.payload_obj = None
        self.legacy = None

    cdef void stop(self) noexcept:
        """A record at or past the end offset was reached: everything below it was delivered."""
        if self.stop_at > self.next_offset:
            self.next_offset = self.stop_at
        self.done = True
        self.payload_obj = None
        self.legacy = None


def _first_offset(entry):
    return entry[1]


cdef inline object _new_tuple(object tp, Py_ssize_t n):
    return alk_tuple_alloc(tp, n)


cdef inline void _set(object t, Py_ssize_t i, object v) noexcept:
    Py_INCREF(v)
    PyTuple_SET_ITEM(t, i, v)


cdef object _make_record(int64_t offset, int64_t ts, object ts_type, object key, object value, tuple headers):
    cdef object t
    if not ALK_FAST_TUPLE:
        return Record(offset, ts, ts_type, key, value, headers)
    o = PyLong_FromLongLong(offset)
    tso = PyLong_FromLongLong(ts)
    t = _new_tuple(Record, 6)
    _set(t, 0, o)
    _set(t, 1, tso)
    _set(t, 2, ts_type)
    _set(t, 3, key)
    _set(t, 4, value)
    _set(t, 5, headers)
    PyObject_GC_UnTrack(t)
    return t


cdef object _make_consumer_record(object topic, object partition, object offset, object ts, object ts_type,
                                  object key, object value, object headers, object epoch):
    cdef object t
    ksize = -1 if key is None else PyBytes_GET_SIZE(key)
    vsize = -1 if value is None else PyBytes_GET_SIZE(value)
    if not ALK_FAST_TUPLE:
        return ConsumerRecord(topic, partition, offset, ts, ts_type, key, value, headers, ksize, vsize, epoch)
    t = _new_tuple(ConsumerRecord, 12)
    _set(t, 0, topic)
    _set(t, 1, partition)
    _set(t, 2, offset)
    _set(t, 3, ts)
    _set(t, 4, ts_type)
    _set(t, 5, key)
    _set(t, 6, value)
    _set(t, 7, headers)
    _set(t, 8, ksize)
    _set(t, 9, vsize)
    _set(t, 10, epoch)
    _set(t, 11, None)  # delivery_count: share consumers only
    PyObject_GC_UnTrack(t)  # holds only atomic objects and untracked tuples: no cycle possible
    return t


cdef int _check_count(_Walker w) except -1:
    if w.h.count > w.plen // MIN_RECORD:
        raise CorruptRecordError(f"record count {w.h.count} is impossible in {w.plen} bytes")
    return 0


cdef int _check_leftover(_Walker w, Py_ssize_t pos) except -1:
    if pos != w.plen:
        raise CorruptRecordError(f"{w.plen - pos} bytes left over after the batch's {w.h.count} records")
    return 0


cdef inline object _field(const uchar *p, Py_ssize_t at, Py_ssize_t n):
    if n < 0:
        return None
    return PyBytes_FromStringAndSize(<const char *>(p + at), n)


def read_batches(data, *, bint check_crcs=True, bint strict=False):
    """Every batch in ``data`` with all its records (control records included), unfiltered."""
    cdef _Walker w = _Walker(data)
    cdef RecView r
    cdef Py_ssize_t pos, i
    cdef list out = [], recs
    cdef int kind
    cdef bint log_append
    cdef object ts_type
    w.setup(check_crcs, strict, False, False, -1, -1, None)
    while True:
        kind = w.next()
        if kind == 0:
            break
        if kind == 2:
            out.append(w.legacy)
            w.consume()
            continue
        _check_count(w)
        log_append = (w.h.attrs & ATTR_LOG_APPEND) != 0
        ts_type = 1 if log_append else 0
        recs = []
        pos = 0
        for i in range(w.h.count):
            _parse_record(w.payload, w.plen, pos, &r)
            pos = r.end
            recs.append(_make_record(
                _wrap_add(w.h.base_offset, r.offset_delta),
                w.h.max_ts if log_append else _wrap_add(w.h.first_ts, r.ts_delta), ts_type,
                _field(w.payload, r.key_pos, r.key_len), _field(w.payload, r.val_pos, r.val_len),
                _headers(w.payload, &r) if r.hdr_count else ()))
        _check_leftover(w, pos)
        out.append(Batch(w.h.base_offset, w.h.ple, 2, w.h.crc, w.h.attrs, w.h.last_offset_delta, w.h.first_ts,
                         w.h.max_ts, w.h.pid, w.h.epoch, w.h.seq, recs, w.end - w.pos))
        w.consume()
    return out


cdef _Walker _walker(data, bint check_crcs, bint strict, bint skip_control, object start_offset,
                     object end_offset, object aborted):
    cdef _Walker w = _Walker(data)
    w.setup(check_crcs, strict, True, skip_control, start_offset, end_offset, aborted)
    return w


def decode_records(data, topic, partition, *, bint check_crcs=True, bint strict=False, bint skip_control=True,
                   start_offset=-1, end_offset=-1, aborted=None):
    """ConsumerRecords of a fetched partition's record data, filtered as the Java consumer does.

    ``start_offset`` drops records below it (a compressed batch starts before the fetch offset);
    ``end_offset`` (if >= 0) stops at the first record at or past it; ``aborted`` (the fetch
    response's aborted transactions, ``[(producer_id, first_offset)]``) turns on read_committed:
    records of aborted transactions are dropped up to their ABORT marker.
    """
    check_topic_partition(topic, partition)
    cdef _Walker w = _walker(data, check_crcs, strict, skip_control, start_offset, end_offset, aborted)
    cdef RecView r
    cdef Py_ssize_t pos, i
    cdef list out = []
    cdef int kind
    cdef bint log_append, stop
    cdef int64_t off, ts, last_ts = 0
    cdef object ts_type, epoch, ts_obj = None
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
                out.append(_make_consumer_record(
                    topic, partition, rec.offset, rec.timestamp, rec.timestamp_type, rec.key, rec.value,
                    rec.headers, -1))
        else:
            _check_count(w)
            log_append = (w.h.attrs & ATTR_LOG_APPEND) != 0
            ts_type = 1 if log_append else 0
            epoch = w.h.ple
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
                ts = w.h.max_ts if log_append else _wrap_add(w.h.first_ts, r.ts_delta)
                if ts != last_ts or ts_obj is None:
                    ts_obj = PyLong_FromLongLong(ts)
                    last_ts = ts
                out.append(_make_consumer_record(
                    topic, partition, PyLong_FromLongLong(off), ts_obj,
                    ts_type, _field(p, r.key_pos, r.key_len), _field(p, r.val_pos, r.val_len),
                    _headers(p, &r) if r.hdr_count else (), epoch))
            _check_leftover(w, pos)
        if stop:
            w.stop()
            break
        w.consume()
    return DecodedRecords(out, w.next_offset, w.leader_epoch, w.truncated)

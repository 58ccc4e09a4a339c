# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled hot path of the records layer: varints, the v2 batch builder and every reader.

The pure-Python twin (``_pyimpl.py``) has the same API and must give the same bytes and results;
shared, non-hot pieces (codecs, legacy message sets, result types) are plain Python modules that both
use. The readers are split over ``_core_read.pxi`` (batch walk, records, ConsumerRecords) and
``_core_arrow.pxi`` (Arrow columns built in C buffers).
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_FromLongLong
from cpython.ref cimport PyObject, Py_DECREF, Py_INCREF
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

cdef extern from "Python.h":
    # Resizes a bytes object nobody else holds yet (refcount 1), as CPython's own builders do.
    int _PyBytes_Resize(PyObject **obj, Py_ssize_t newsize) except -1

import operator
import time

from ..errors import CorruptRecordError, IllegalArgumentError, IllegalStateError, KafkaError
from ..structs import ConsumerRecord
from ._codecs import check_codec, compress, decompress
from ._crc import crc32c as _py_crc32c, extend_address
from ._legacy import read_legacy
from ._types import (
    Batch,
    DecodedArrow,
    DecodedRecords,
    Record,
    arrow_schema,
    check_batch_fields,
    check_topic_partition,
    encode_headers,
    parse_control_key,
    to_bytes,
)

ctypedef unsigned char uchar

cdef extern from "Python.h":
    object PyMemoryView_FromMemory(char *mem, Py_ssize_t size, int flags)
    int PyBUF_READ
    void PyTuple_SET_ITEM(object p, Py_ssize_t pos, object o)
    void PyObject_GC_UnTrack(object o)

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>

    static inline uint16_t alk_be16(const unsigned char *p) { return (uint16_t)(((uint16_t)p[0] << 8) | p[1]); }
    static inline uint32_t alk_be32(const unsigned char *p) {
        return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
    }
    static inline uint64_t alk_be64(const unsigned char *p) {
        return ((uint64_t)alk_be32(p) << 32) | (uint64_t)alk_be32(p + 4);
    }
    static inline void alk_put16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)(v >> 8); p[1] = (unsigned char)v; }
    static inline void alk_put32(unsigned char *p, uint32_t v) {
        p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16); p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v;
    }
    static inline void alk_put64(unsigned char *p, uint64_t v) { alk_put32(p, (uint32_t)(v >> 32)); alk_put32(p + 4, (uint32_t)v); }

    static inline uint64_t alk_zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
    static inline int alk_varint_size(int64_t v) {
        uint64_t u = alk_zz(v); int n = 1;
        while (u >= 0x80) { u >>= 7; n++; }
        return n;
    }
    static inline unsigned char *alk_put_varint(unsigned char *p, int64_t v) {
        uint64_t u = alk_zz(v);
        while (u >= 0x80) { *p++ = (unsigned char)((u & 0x7f) | 0x80); u >>= 7; }
        *p++ = (unsigned char)u;
        return p;
    }
    /* 0: ok; 1: runs past end; 2: more than 64 bits. Kafka's zigzag varint/varlong. */
    static inline int alk_read_varint(const unsigned char *p, Py_ssize_t end, Py_ssize_t *pos, int64_t *out) {
        Py_ssize_t i = *pos;
        uint64_t u = 0;
        int shift = 0, k;
        if (i < end && p[i] < 0x80) {
            u = p[i];
            *out = (int64_t)((u >> 1) ^ (0 - (u & 1)));
            *pos = i + 1;
            return 0;
        }
        for (k = 0; k < 10; k++) {
            unsigned char b;
            if (i >= end) return 1;
            b = p[i++];
            if (k == 9 && b > 1) return 2;
            u |= (uint64_t)(b & 0x7f) << shift;
            if (!(b & 0x80)) {
                *out = (int64_t)((u >> 1) ^ (0 - (u & 1)));
                *pos = i;
                return 0;
            }
            shift += 7;
        }
        return 2;
    }
    /* Well-formed UTF-8 exactly as Python's strict decoder accepts it. */
    static int alk_utf8_valid(const unsigned char *s, Py_ssize_t n) {
        Py_ssize_t i = 0;
        while (i < n) {
            unsigned char c = s[i], c1;
            if (c < 0x80) { i++; continue; }
            if (c >= 0xC2 && c <= 0xDF) {
                if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return 0;
                i += 2; continue;
            }
            if (c >= 0xE0 && c <= 0xEF) {
                if (i + 2 >= n) return 0;
                c1 = s[i + 1];
                if (c == 0xE0) { if (c1 < 0xA0 || c1 > 0xBF) return 0; }
                else if (c == 0xED) { if (c1 < 0x80 || c1 > 0x9F) return 0; }
                else if ((c1 & 0xC0) != 0x80) return 0;
                if ((s[i + 2] & 0xC0) != 0x80) return 0;
                i += 3; continue;
            }
            if (c >= 0xF0 && c <= 0xF4) {
                if (i + 3 >= n) return 0;
                c1 = s[i + 1];
                if (c == 0xF0) { if (c1 < 0x90 || c1 > 0xBF) return 0; }
                else if (c == 0xF4) { if (c1 < 0x80 || c1 > 0x8F) return 0; }
                else if ((c1 & 0xC0) != 0x80) return 0;
                if ((s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80) return 0;
                i += 4; continue;
            }
            return 0;
        }
        return 1;
    }

    typedef uint32_t (*alk_crc_fn)(uint32_t, const uint8_t *, size_t);
    static alk_crc_fn alk_crc_extend = NULL;
    static void alk_set_crc(uintptr_t addr) { alk_crc_extend = (alk_crc_fn)addr; }
    static int alk_has_crc(void) { return alk_crc_extend != NULL; }
    static uint32_t alk_crc(const unsigned char *p, Py_ssize_t n) { return alk_crc_extend(0, p, (size_t)n); }

    /* A tuple subclass instance (ConsumerRecord, Record) with its items still to be set: what
       tuple.__new__ does for subclasses, minus the intermediate tuple. 3.14 caches tuple hashes,
       so newer versions take the constructor path instead. */
    #if PY_VERSION_HEX < 0x030E0000
    #define ALK_FAST_TUPLE 1
    static PyObject *alk_tuple_alloc(PyObject *tp, Py_ssize_t n) {
        return ((PyTypeObject *)tp)->tp_alloc((PyTypeObject *)tp, n);
    }
    #else
    #define ALK_FAST_TUPLE 0
    static PyObject *alk_tuple_alloc(PyObject *tp, Py_ssize_t n) { (void)tp; (void)n; return NULL; }
    #endif
    """
    uint16_t alk_be16(const uchar *p) nogil
    uint32_t alk_be32(const uchar *p) nogil
    uint64_t alk_be64(const uchar *p) nogil
    void alk_put16(uchar *p, uint16_t v) nogil
    void alk_put32(uchar *p, uint32_t v) nogil
    void alk_put64(uchar *p, uint64_t v) nogil
    int alk_varint_size(int64_t v) nogil
    uchar *alk_put_varint(uchar *p, int64_t v) nogil
    int alk_read_varint(const uchar *p, Py_ssize_t end, Py_ssize_t *pos, int64_t *out) nogil
    int alk_utf8_valid(const uchar *s, Py_ssize_t n) nogil
    void alk_set_crc(uintptr_t addr)
    int alk_has_crc()
    uint32_t alk_crc(const uchar *p, Py_ssize_t n) nogil
    bint ALK_FAST_TUPLE
    object alk_tuple_alloc(object tp, Py_ssize_t n)

alk_set_crc(<uintptr_t>extend_address())

cdef enum:
    BATCH_OVERHEAD = 61
    ATTR_LOG_APPEND = 0x08
    ATTR_TRANSACTIONAL = 0x10
    ATTR_CONTROL = 0x20
    MIN_RECORD = 7
    _FIRST_CAP = 1024  # a new builder's store holds this many bytes of records, then doubles
cdef int64_t INT32_MIN = -2147483648
cdef int64_t INT32_MAX = 2147483647
cdef int64_t INT64_MAX = 9223372036854775807


cdef uint32_t _crc32c(const uchar *p, Py_ssize_t n) except? 0xFFFFFFFF:
    if alk_has_crc():
        return alk_crc(p, n)
    return <uint32_t>_py_crc32c(PyBytes_FromStringAndSize(<const char *>p, n))


# ---------------------------------------------------------------- varints

cdef int _varint_error(int rc) except -1:
    if rc == 1:
        raise CorruptRecordError("varint runs past the end of the record")
    raise CorruptRecordError("varint overflows 64 bits")


_FIELDS = ("record length", "offset delta", "key length", "value length", "header count",
           "header key length", "header value length")


cdef int _range_error(int what, int64_t value) except -1:
    raise CorruptRecordError(f"{_FIELDS[what]} {value} does not fit in 32 bits")


cdef inline int _rv(const uchar *p, Py_ssize_t end, Py_ssize_t *pos, int64_t *out) except -1:
    cdef int rc = alk_read_varint(p, end, pos, out)
    if rc:
        return _varint_error(rc)
    return 0


cdef inline int _rv32(const uchar *p, Py_ssize_t end, Py_ssize_t *pos, int64_t *out, int what) except -1:
    """A varint that must fit in 32 bits; ``what`` indexes _FIELDS for the error message."""
    cdef int rc = alk_read_varint(p, end, pos, out)
    if rc:
        return _varint_error(rc)
    if out[0] < INT32_MIN or out[0] > INT32_MAX:
        return _range_error(what, out[0])
    return 0


cdef int64_t _int64_arg(object value) except? -1:
    try:
        return <int64_t>value
    except OverflowError:
        raise IllegalArgumentError(f"varint value {value} does not fit in 64 bits") from None


def size_of_varint(value):
    """Bytes taken by the zigzag varint encoding of a signed 64-bit ``value``."""
    return alk_varint_size(_int64_arg(value))


def encode_varint(value):
    """Zigzag varint (Kafka's varint/varlong) encoding of a signed 64-bit ``value``."""
    cdef uchar tmp[10]
    cdef uchar *end = alk_put_varint(tmp, _int64_arg(value))
    return PyBytes_FromStringAndSize(<char *>tmp, end - tmp)


def decode_varint(data, Py_ssize_t pos=0):
    """Decode the zigzag varint at ``data[pos:]``; returns ``(value, position after it)``."""
    cdef Py_buffer view
    cdef int64_t out = 0
    cdef int rc
    if pos < 0:
        raise IllegalArgumentError(f"negative position {pos}")
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        rc = alk_read_varint(<const uchar *>view.buf, view.len, &pos, &out)
    finally:
        PyBuffer_Release(&view)
    if rc == 1:
        raise CorruptRecordError("varint runs past the end of the data")
    if rc == 2:
        raise CorruptRecordError("varint overflows 64 bits")
    return out, pos


# ---------------------------------------------------------------- builder

cdef int64_t _timestamp(object ts) except? -1:
    cdef int64_t v
    if ts is None:
        return time.time_ns() // 1000000
    if type(ts) is not int:
        ts = operator.index(ts)
    try:
        v = <int64_t>ts
    except OverflowError:
        raise IllegalArgumentError(f"timestamp_ms {ts} is out of range") from None
    if v < 0:
        raise IllegalArgumentError(f"timestamp_ms {ts} is out of range")
    return v


include "_core_pool.pxi"


cdef class BatchBuilder:
    """Accumulates records into one v2 record batch; :meth:`build` compresses and checksums it.

    ``append`` refuses a record (returns None) once the batch would exceed ``batch_size`` bytes of
    uncompressed records plus header, except for the first record, which always fits.
    """

    cdef uchar *_buf
    # The batch is built inside one bytes object that only this builder holds until build() hands it
    # out: the records start BATCH_OVERHEAD bytes in (``_buf``), so an uncompressed batch gets its
    # header and CRC written in place, with no copy of its records (they are megabytes for large values).
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

    def __cinit__(self):
        self._buf = NULL
        self._store = None

    def __init__(self, int compression=0, Py_ssize_t batch_size=16384, *, compression_level=None,
                 bint is_transactional=False, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                 partition_leader_epoch=-1, base_offset=0, int timestamp_type=0, bint is_control=False,
                 Py_ssize_t capacity=0, StorePool pool=None):
        if compression < 0 or compression > 4:
            raise IllegalArgumentError(f"unknown compression codec {compression}")
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
        cdef const uchar *kp = NULL
        cdef const uchar *vp = NULL
        cdef Py_ssize_t klen = -1, vlen = -1, hsize = 0, body, total, i, nh = 0
        cdef int64_t delta
        cdef uchar *w
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
        delta = 0 if self._count == 0 else <int64_t>(<uint64_t>ts - <uint64_t>self._first_ts)
        body = (1 + alk_varint_size(delta) + alk_varint_size(self._count)
                + (alk_varint_size(klen) + (klen if klen > 0 else 0))
                + (alk_varint_size(vlen) + (vlen if vlen > 0 else 0))
                + alk_varint_size(nh) + hsize)
        total = alk_varint_size(body) + body
        if self._count > 0 and BATCH_OVERHEAD + self._len + total > self._batch_size:
            return None
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
        for i in range(start, n):
            if not single:
                ts = _timestamp(timestamps[i])
            if fast:
                if self._append(ts, None if keys is None else <object>PyList_GET_ITEM(keys, i),
                                <object>PyList_GET_ITEM(values, i), None) is None:
                    break
            elif self._append(ts, None if keys is None else keys[i], values[i],
                              None if headers is None else headers[i]) is None:
                break
            done += 1
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


include "_core_read.pxi"
include "_core_arrow.pxi"

# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled hot path of the records layer: varints, the v2 batch builder and every reader.

The pure-Python twin (``_pyimpl.py``) has the same API and must give the same bytes and results;
shared, non-hot pieces (codecs, legacy message sets, result types) are plain Python modules that both
use. The builder is in ``_core_build.pxi`` (its reused stores in ``_core_pool.pxi``), the readers in
``_core_read.pxi`` (batch walk, records, ConsumerRecords) and ``_core_arrow.pxi`` (Arrow columns built
in C buffers).
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytearray cimport PyByteArray_FromStringAndSize
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
from .value_buffer import ValueBuffer
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


def longest_plain(items):
    """The longest of ``items`` when each is bytes or None (None counts 0), else -1: ``send_many``'s
    check of its values and keys, one pass in C instead of two in Python."""
    cdef Py_ssize_t longest = 0, n
    if type(items) is ValueBuffer:
        return _buffer_longest(items)
    for x in items:
        if x is None:
            continue
        if not PyBytes_CheckExact(x):
            return -1
        n = PyBytes_GET_SIZE(x)
        if n > longest:
            longest = n
    return longest


cdef struct _Values:
    # A ValueBuffer's buffers, held while C reads its values (_values_open, _values_close).
    Py_buffer data
    Py_buffer offs
    Py_buffer valid
    bint has_data
    bint has_offs
    bint has_valid
    bint wide
    Py_ssize_t n
    Py_ssize_t vbit


cdef int _values_open(_Values *v, object vb) except -1:
    """Hold ``vb``'s buffers for reading (release with _values_close, also when this raises).

    ValueBuffer checked their shapes when it was made and its parts are read-only; checked again here
    is only what keeps C's reads inside the buffers actually held: offsets of 4- or 8-byte items, as
    many as ``len(offsets)`` says, and a validity bitmap covering the values. Each offset pair is
    checked against the data where it is read (_value_span): the buffers' contents may change."""
    cdef object offsets, validity
    cdef Py_ssize_t w
    v.has_data = v.has_offs = v.has_valid = False
    offsets, validity = vb.offsets, vb.validity
    PyObject_GetBuffer(vb.data, &v.data, PyBUF_SIMPLE)
    v.has_data = True
    PyObject_GetBuffer(offsets, &v.offs, PyBUF_SIMPLE)
    v.has_offs = True
    w = v.offs.itemsize
    if (w != 4 and w != 8) or v.offs.len < w or v.offs.len != len(offsets) * w:
        raise IllegalArgumentError(
            f"ValueBuffer offsets must be int32 or int64 items, at least one: {v.offs.len} bytes of {w}")
    v.wide = w == 8
    v.n = v.offs.len // w - 1
    v.vbit = vb.validity_offset
    if validity is not None:
        PyObject_GetBuffer(validity, &v.valid, PyBUF_SIMPLE)
        v.has_valid = True  # its own flag: a zero-length buffer may have a NULL address
        if v.vbit < 0 or v.valid.len * 8 - v.vbit < v.n:
            raise IllegalArgumentError("ValueBuffer validity bitmap is shorter than its values")
    return 0


cdef void _values_close(_Values *v) noexcept:
    if v.has_valid:
        PyBuffer_Release(&v.valid)
    if v.has_offs:
        PyBuffer_Release(&v.offs)
    if v.has_data:
        PyBuffer_Release(&v.data)


cdef inline int _value_span(const _Values *v, Py_ssize_t i, Py_ssize_t *s, Py_ssize_t *e) except -1:
    """Where value ``i`` lies in the data, its offsets checked against it (ValueBuffer._span's twin)."""
    if v.wide:
        s[0] = <Py_ssize_t>(<const int64_t *>v.offs.buf)[i]
        e[0] = <Py_ssize_t>(<const int64_t *>v.offs.buf)[i + 1]
    else:
        s[0] = (<const int32_t *>v.offs.buf)[i]
        e[0] = (<const int32_t *>v.offs.buf)[i + 1]
    if s[0] < 0 or e[0] < s[0] or e[0] > v.data.len:
        raise IllegalArgumentError(f"ValueBuffer value {i}: offsets {s[0]}..{e[0]} outside 0..{v.data.len}")
    return 0


cdef inline bint _value_null(const _Values *v, Py_ssize_t i) noexcept:
    cdef Py_ssize_t bit
    if not v.has_valid:
        return False
    bit = v.vbit + i
    return not ((<const uchar *>v.valid.buf)[bit >> 3] >> (bit & 7)) & 1


cdef Py_ssize_t _buffer_longest(object vb) except -1:
    """A ValueBuffer's longest value, every offset checked against its data: one pass in C."""
    cdef _Values v
    cdef Py_ssize_t i, s, e, longest = 0
    try:
        _values_open(&v, vb)
        for i in range(v.n):
            _value_span(&v, i, &s, &e)
            if e - s > longest and not _value_null(&v, i):
                longest = e - s
    finally:
        _values_close(&v)
    return longest


def recv_buffer(Py_ssize_t size):
    """A ``bytearray`` of ``size`` bytes for a socket to fill, its memory not zeroed first: a reader
    hands out only what was received into it (net/framing.py)."""
    if size < 0:
        raise IllegalArgumentError(f"negative buffer size {size}")
    return PyByteArray_FromStringAndSize(NULL, size)


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
include "_core_build.pxi"
include "_core_read.pxi"
include "_core_arrow.pxi"

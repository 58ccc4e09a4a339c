# Augments _hash.py when Cython compiles it: the hash loops become C functions over the key's bytes with
# 32-bit unsigned arithmetic (Cython's pure-Python mode).

cimport cython
from libc.stdint cimport int64_t, uint32_t

cdef uint32_t _M, _MASK, _MURMUR2_SEED, _FNV_BASIS, _INT32_SIGN
cdef int64_t _INT32_WRAP

@cython.locals(m=uint32_t, h=uint32_t, k=uint32_t, i=Py_ssize_t, base=Py_ssize_t, tail=Py_ssize_t)
cdef uint32_t _murmur2(const unsigned char* data, Py_ssize_t length) noexcept

@cython.locals(h=uint32_t, i=Py_ssize_t)
cdef uint32_t _fnv1a(const unsigned char* data, Py_ssize_t length) noexcept

cdef int64_t _signed(uint32_t h) noexcept

cdef bytes _key(object data, Py_ssize_t num_partitions)

@cython.locals(key=bytes)
cpdef murmur2(data)

@cython.locals(key=bytes)
cpdef Py_ssize_t murmur2_partition(data, Py_ssize_t num_partitions) except? -1

@cython.locals(key=bytes)
cpdef fnv1a(data)

cpdef Py_ssize_t fnv1a_partition(data, Py_ssize_t num_partitions) except? -1

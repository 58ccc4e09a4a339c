"""CRC-32C (Castagnoli) for v2 batches, through google-crc32c's hardware-accelerated library.

google-crc32c's Python functions only take ``bytes`` (its ``y#`` argument format refuses memoryviews),
which would force a copy of every batch. The compiled core therefore calls the library's C function
``crc32c_extend`` directly: :func:`extend_address` finds it next to the extension module that already
loaded it. The pure-Python twin (and the core, when the address cannot be found) uses :func:`crc32c`.
"""

from __future__ import annotations

import ctypes

import google_crc32c

_CHECK = b"123456789"
_CHECK_CRC = 0xE3069283  # the CRC-32C check value of "123456789"


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C of ``data`` (copies unless it is ``bytes``)."""
    if type(data) is not bytes:
        data = bytes(data)
    return int(google_crc32c.value(data))


def extend_address() -> int:
    """Address of ``uint32_t crc32c_extend(uint32_t, const uint8_t*, size_t)``, or 0 if unavailable.

    dlsym on the extension's handle also searches the libraries it depends on, so this works wherever
    the wheel put libcrc32c. The function is checked against the standard check value before use.
    """
    if getattr(google_crc32c, "implementation", "") != "c":
        return 0
    try:
        from google_crc32c import _crc32c

        lib = ctypes.CDLL(_crc32c.__file__)
        fn = lib.crc32c_extend
    except (ImportError, OSError, AttributeError):
        return 0
    fn.restype = ctypes.c_uint32
    fn.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]
    if fn(0, _CHECK, len(_CHECK)) != _CHECK_CRC:
        return 0
    return int(ctypes.cast(fn, ctypes.c_void_p).value or 0)

"""Helpers for the records tests: both implementations, and crafting batches by hand."""

from __future__ import annotations

import struct
from types import ModuleType

import google_crc32c

from aiokafka_lite.records import _core, _pyimpl

IMPLS: dict[str, ModuleType] = {"cython": _core, "python": _pyimpl}


def fix_crc(batch: bytearray) -> bytes:
    """Recompute a hand-edited v2 batch's CRC (it covers everything after the CRC field)."""
    struct.pack_into(">I", batch, 17, google_crc32c.value(bytes(batch[21:])))
    return bytes(batch)


def build(impl: ModuleType, records: list[tuple], codec: int = 0, **kwargs: object) -> bytes:
    """One batch of ``(timestamp, key, value, headers)`` records built by ``impl``."""
    b = impl.BatchBuilder(codec, 1 << 30, **kwargs)
    for ts, key, value, headers in records:
        assert b.append(ts, key, value, headers) is not None
    return b.build()

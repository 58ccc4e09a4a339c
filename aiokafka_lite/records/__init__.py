"""Kafka record batches, sans-I/O: build (v2) and read (v2, legacy v0/v1), to objects or to Arrow.

The hot path is the compiled core (``_core.pyx``); ``_pyimpl`` is its pure-Python twin with the same
API and byte-identical output. The core is used unless ``AIOKAFKA_LITE_PURE=1`` is set or the extension
is not built; :data:`IMPLEMENTATION` says which one is active ("cython" or "python").

Producer side::

    b = BatchBuilder(CODEC_LZ4, batch_size=16384)
    delta = b.append(timestamp_ms, key, value, headers)   # None: full, start a new batch
    data = b.build()
    data = patch_producer_state(data, producer_id, epoch, base_sequence)   # at drain time

Consumer side::

    res = decode_records(fetched_bytes, topic, partition, start_offset=pos, aborted=txns)
    res.records, res.next_offset       # decode_arrow(...) gives a pyarrow.RecordBatch instead
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._native import PURE
from ._codecs import MAX_DECOMPRESSED_SIZE, compress
from ._types import (
    BATCH_OVERHEAD,
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    CONTROL_ABORT,
    CONTROL_COMMIT,
    LOG_OVERHEAD,
    RECORD_OVERHEAD_MAX,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_TYPE_NONE,
    Batch,
    DecodedArrow,
    DecodedRecords,
    Record,
    arrow_schema,
    codec_from_name,
    control_key,
    control_value,
    parse_control_key,
    parse_control_value,
)
from .value_buffer import ValueBuffer, as_value_buffer

if TYPE_CHECKING:
    from ._pyimpl import (
        BatchBuilder,
        StorePool,
        decode_arrow,
        decode_records,
        decode_varint,
        encode_varint,
        longest_plain,
        patch_producer_state,
        read_batches,
        recv_buffer,
        size_of_varint,
    )

    IMPLEMENTATION: str
else:
    _impl = None
    if not PURE:  # the package's one compiled/pure switch
        try:
            from . import _core as _impl
        except ImportError:
            _impl = None
    if _impl is None:
        from . import _pyimpl as _impl

        IMPLEMENTATION = "python"
    else:
        IMPLEMENTATION = "cython"
    BatchBuilder = _impl.BatchBuilder
    StorePool = _impl.StorePool
    decode_arrow = _impl.decode_arrow
    decode_records = _impl.decode_records
    decode_varint = _impl.decode_varint
    encode_varint = _impl.encode_varint
    longest_plain = _impl.longest_plain
    patch_producer_state = _impl.patch_producer_state
    read_batches = _impl.read_batches
    recv_buffer = _impl.recv_buffer
    size_of_varint = _impl.size_of_varint


def estimate_record_size(key: bytes | None, value: bytes | None,
                         headers: list[tuple[str, bytes | None]] | None = None) -> int:
    """Upper bound of the bytes one record takes in a batch (for buffer accounting and size limits)."""
    size = RECORD_OVERHEAD_MAX + (len(key) if key is not None else 0)
    size += len(value) if value is not None else 0
    if headers:
        for hkey, hvalue in headers:
            size += 10 + len(hkey.encode("utf-8")) + (len(hvalue) if hvalue is not None else 0)
    return size


def build_control_batch(control_type: int, *, producer_id: int, producer_epoch: int, base_offset: int = 0,
                        timestamp_ms: int | None = None, coordinator_epoch: int = 0,
                        partition_leader_epoch: int = -1) -> bytes:
    """An end-transaction marker batch (CONTROL_COMMIT or CONTROL_ABORT), as a coordinator writes it."""
    b = BatchBuilder(CODEC_NONE, 1 << 20, is_transactional=True, is_control=True, producer_id=producer_id,
                     producer_epoch=producer_epoch, base_offset=base_offset,
                     partition_leader_epoch=partition_leader_epoch)
    b.append(timestamp_ms, control_key(control_type), control_value(coordinator_epoch))
    return b.build()


__all__ = [
    "BATCH_OVERHEAD",
    "CODEC_GZIP",
    "CODEC_LZ4",
    "CODEC_NONE",
    "CODEC_SNAPPY",
    "CODEC_ZSTD",
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "IMPLEMENTATION",
    "LOG_OVERHEAD",
    "MAX_DECOMPRESSED_SIZE",
    "RECORD_OVERHEAD_MAX",
    "TIMESTAMP_CREATE_TIME",
    "TIMESTAMP_LOG_APPEND_TIME",
    "TIMESTAMP_TYPE_NONE",
    "Batch",
    "BatchBuilder",
    "DecodedArrow",
    "DecodedRecords",
    "Record",
    "StorePool",
    "ValueBuffer",
    "arrow_schema",
    "as_value_buffer",
    "build_control_batch",
    "codec_from_name",
    "compress",
    "control_key",
    "control_value",
    "decode_arrow",
    "decode_records",
    "decode_varint",
    "encode_varint",
    "estimate_record_size",
    "longest_plain",
    "parse_control_key",
    "parse_control_value",
    "patch_producer_state",
    "read_batches",
    "recv_buffer",
    "size_of_varint",
]

"""Constants and plain value types shared by the compiled core and its pure-Python twin.

Both implementations return these exact classes, so their results compare equal with ``==``.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import CorruptRecordError, IllegalArgumentError
from ..structs import ConsumerRecord

if TYPE_CHECKING:
    import pyarrow

CODEC_NONE = 0
CODEC_GZIP = 1
CODEC_SNAPPY = 2
CODEC_LZ4 = 3
CODEC_ZSTD = 4
CODEC_MASK = 0x07
CODEC_NAMES = {CODEC_NONE: "none", CODEC_GZIP: "gzip", CODEC_SNAPPY: "snappy", CODEC_LZ4: "lz4",
               CODEC_ZSTD: "zstd"}

TIMESTAMP_TYPE_NONE = -1  # legacy v0 messages carry no timestamp
TIMESTAMP_CREATE_TIME = 0
TIMESTAMP_LOG_APPEND_TIME = 1

ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20

CONTROL_ABORT = 0
CONTROL_COMMIT = 1

#: Bytes of a v2 batch header; a batch is this plus its (possibly compressed) records.
BATCH_OVERHEAD = 61
#: Offset and length fields that precede every batch and legacy message.
LOG_OVERHEAD = 12
#: Smallest value of the batch length field for magic 0, 1 and 2.
MIN_LENGTH = (14, 22, 49)
#: Upper bound of one record's framing (length, attributes, timestamp and offset deltas, key,
#: value and header count varints) on top of its key, value and header bytes.
RECORD_OVERHEAD_MAX = 5 + 1 + 10 + 5 + 5 + 5 + 5


def wrap64(value: int) -> int:
    """``value`` wrapped to a signed 64-bit integer, as the compiled core's arithmetic does."""
    return ((value + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)


def codec_from_name(name: str | None) -> int:
    """Map a ``compression_type`` setting (None, "none", "gzip", "snappy", "lz4", "zstd") to its codec id."""
    if name is None:
        return CODEC_NONE
    for codec, codec_name in CODEC_NAMES.items():
        if name == codec_name:
            return codec
    raise IllegalArgumentError(f"unknown compression type {name!r}")


class Record(NamedTuple):
    """One decoded record; ``headers`` is a tuple of ``(str, bytes | None)`` (as in ConsumerRecord)."""

    offset: int
    timestamp: int
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


class Batch(NamedTuple):
    """One decoded batch (a v2 record batch, or one top-level legacy v0/v1 message)."""

    base_offset: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    first_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: list[Record]
    size_in_bytes: int

    @property
    def compression(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def timestamp_type(self) -> int:
        if self.magic == 0:
            return TIMESTAMP_TYPE_NONE
        return 1 if self.attributes & ATTR_TIMESTAMP_TYPE else 0

    @property
    def is_transactional(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & ATTR_CONTROL)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def control_type(self) -> int:
        """CONTROL_ABORT or CONTROL_COMMIT for a control batch (from its first record), else -1."""
        if not self.is_control or not self.records:
            return -1
        key = self.records[0].key
        return parse_control_key(key if key is not None else b"")[1]


class DecodedRecords(NamedTuple):
    """What :func:`decode_records` returns.

    ``next_offset`` is the offset to fetch next: the end of the last batch consumed (skipped control and
    aborted batches count as consumed), never below ``start_offset``. ``leader_epoch`` is that batch's
    partition leader epoch (-1 if none). ``truncated`` says the data ended inside a batch (fetch mode).
    """

    records: list[ConsumerRecord]
    next_offset: int
    leader_epoch: int
    truncated: bool


class DecodedArrow(NamedTuple):
    """What :func:`decode_arrow` returns; the fields mean what they mean in :class:`DecodedRecords`."""

    batch: pyarrow.RecordBatch
    next_offset: int
    leader_epoch: int
    truncated: bool


def to_bytes(obj: Any, what: str) -> bytes:
    """A key, value or header value as bytes (any contiguous buffer; str and int are refused)."""
    if isinstance(obj, (str, int)):
        raise TypeError(f"{what} must be bytes-like or None, not {type(obj).__name__}")
    return memoryview(obj).cast("B").tobytes()


def encode_headers(headers: Any) -> list[tuple[bytes, bytes | None]]:
    """Headers as ``(utf-8 key, value bytes or None)`` pairs, checking their types."""
    out: list[tuple[bytes, bytes | None]] = []
    for hkey, hvalue in headers:
        if not isinstance(hkey, str):
            raise TypeError(f"header key must be str, not {type(hkey).__name__}")
        if hvalue is not None and type(hvalue) is not bytes:
            hvalue = to_bytes(hvalue, "header value")
        out.append((hkey.encode("utf-8"), hvalue))
    return out


_I16, _I32, _I64 = 1 << 15, 1 << 31, 1 << 63


def check_batch_fields(base_offset: int, partition_leader_epoch: int, producer_id: int, producer_epoch: int,
                       base_sequence: int) -> None:
    """Raise IllegalArgumentError unless each field fits its width in the batch header."""
    if (-_I64 <= base_offset < _I64 and -_I32 <= partition_leader_epoch < _I32 and -_I64 <= producer_id < _I64
            and -_I16 <= producer_epoch < _I16 and -_I32 <= base_sequence < _I32):
        return  # every new batch comes here: the common case builds no tuples
    for name, value, bits in (("base_offset", base_offset, 64),
                              ("partition_leader_epoch", partition_leader_epoch, 32),
                              ("producer_id", producer_id, 64), ("producer_epoch", producer_epoch, 16),
                              ("base_sequence", base_sequence, 32)):
        if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
            raise IllegalArgumentError(f"{name} {value} does not fit in {bits} bits")


def check_topic_partition(topic: Any, partition: Any) -> None:
    """Decoders put these into every record: insist on a str and an int32 up front."""
    if type(topic) is not str:
        raise TypeError(f"topic must be str, not {type(topic).__name__}")
    if type(partition) is not int or not -(1 << 31) <= partition < 1 << 31:
        raise TypeError(f"partition must be an int32, not {partition!r}")


_CONTROL = struct.Struct(">hh")


def parse_control_key(key: bytes) -> tuple[int, int]:
    """``(version, type)`` of a control record's key; type is CONTROL_ABORT, CONTROL_COMMIT or other."""
    if len(key) < 4:
        raise CorruptRecordError(f"control record key has {len(key)} bytes, needs 4")
    version, ctype = _CONTROL.unpack_from(key)
    if version < 0:
        raise CorruptRecordError(f"control record key has negative version {version}")
    return version, ctype


def parse_control_value(value: bytes) -> tuple[int, int]:
    """``(version, coordinator_epoch)`` of an end-transaction marker's value."""
    if len(value) < 6:
        raise CorruptRecordError(f"end-transaction marker value has {len(value)} bytes, needs 6")
    version, epoch = struct.unpack_from(">hi", value)
    return version, epoch


def control_key(control_type: int, version: int = 0) -> bytes:
    """The key of a control record (an end-transaction marker when type is ABORT or COMMIT)."""
    return _CONTROL.pack(version, control_type)


def control_value(coordinator_epoch: int, version: int = 0) -> bytes:
    """The value of an end-transaction marker: version and the transaction coordinator's epoch."""
    return struct.pack(">hi", version, coordinator_epoch)


_SCHEMA: Any = None


def arrow_schema() -> pyarrow.Schema:
    """The schema of :func:`decode_arrow`'s batches (Spark's Kafka source columns).

    ``timestamp`` is ``timestamp[ms, tz=UTC]``: Kafka timestamps are epoch milliseconds, and a zoned type
    maps onto Spark's TimestampType. Legacy v0 records, which have no timestamp, carry -1 there and
    ``timestampType`` -1.
    """
    global _SCHEMA
    if _SCHEMA is None:
        import pyarrow as pa

        header = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
        _SCHEMA = pa.schema([
            pa.field("key", pa.binary()),
            pa.field("value", pa.binary()),
            pa.field("topic", pa.string()),
            pa.field("partition", pa.int32()),
            pa.field("offset", pa.int64()),
            pa.field("timestamp", pa.timestamp("ms", tz="UTC")),
            pa.field("timestampType", pa.int32()),
            pa.field("headers", pa.list_(header)),
        ])
    return _SCHEMA

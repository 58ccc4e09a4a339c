"""Codecs: Java's framings, decompression bombs and garbage all end as CorruptRecordError."""

from __future__ import annotations

import struct
import zlib
from types import ModuleType

import cramjam
import lz4.frame
import pytest
import zstandard
from _records_helpers import build, fix_crc

from aiokafka_lite.errors import CorruptRecordError
from aiokafka_lite.records import _codecs


def _xerial(payload: bytes, block: int = 1000) -> bytes:
    """The xerial snappy framing the Java client writes."""
    out = bytearray(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1))
    for i in range(0, len(payload), block):
        chunk = bytes(cramjam.snappy.compress_raw(payload[i:i + block]))
        out += struct.pack(">i", len(chunk)) + chunk
    return bytes(out)


def _swap_payload(batch: bytes, codec: int, payload: bytes) -> bytes:
    """``batch`` with its records replaced by ``payload`` (already compressed) under ``codec``."""
    data = bytearray(batch[:61]) + payload
    struct.pack_into(">i", data, 8, len(data) - 12)
    struct.pack_into(">h", data, 21, codec)
    return fix_crc(data)


RECS = [(1000 + i, b"k%d" % i, b"value %d " % i * 40, [("h", b"%d" % i)]) for i in range(200)]


def _raw_records(impl: ModuleType) -> bytes:
    return build(impl, RECS)[61:]


@pytest.mark.parametrize("framing", ["xerial", "raw"])
def test_snappy_framings(impl: ModuleType, framing: str) -> None:
    raw = _raw_records(impl)
    payload = _xerial(raw) if framing == "xerial" else bytes(cramjam.snappy.compress_raw(raw))
    data = _swap_payload(build(impl, RECS), 2, payload)
    assert [r.value for r in impl.decode_records(data, "t", 0).records] == [r[2] for r in RECS]


def test_lz4_and_zstd_variants(impl: ModuleType) -> None:
    raw = _raw_records(impl)
    variants = [
        (3, lz4.frame.compress(raw, block_linked=True, content_checksum=True, store_size=True)),
        (4, zstandard.ZstdCompressor(write_content_size=False).compress(raw)),
        (1, zlib.compress(raw)),  # zlib-wrapped deflate is accepted as well as gzip
        (1, zlib.compress(raw[:100], wbits=31) + zlib.compress(raw[100:], wbits=31)),  # two gzip members
    ]
    for codec, payload in variants:
        data = _swap_payload(build(impl, RECS), codec, payload)
        assert len(impl.decode_records(data, "t", 0).records) == len(RECS)


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_decompression_bomb(impl: ModuleType, codec: int, monkeypatch: pytest.MonkeyPatch) -> None:
    data = build(impl, [(1, None, b"\x00" * 3_000_000, None)], codec)
    assert len(data) < 200_000
    monkeypatch.setattr(_codecs, "MAX_DECOMPRESSED_SIZE", 1_000_000)
    with pytest.raises(CorruptRecordError, match="over the limit"):
        impl.decode_records(data, "t", 0)
    with pytest.raises(CorruptRecordError, match="over the limit"):
        impl.read_batches(data)


def test_bomb_variants(impl: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    big = b"\x00" * 3_000_000
    template = build(impl, [(1, None, b"x", None)])
    monkeypatch.setattr(_codecs, "MAX_DECOMPRESSED_SIZE", 1_000_000)
    for codec, payload, message in [
        (2, _xerial(big, 64 * 1024), "over the limit"),
        (4, zstandard.ZstdCompressor(write_content_size=False).compress(big), "zstd"),
        (3, lz4.frame.compress(big, store_size=False), "over the limit"),
    ]:
        with pytest.raises(CorruptRecordError, match=message):
            impl.decode_records(_swap_payload(template, codec, payload), "t", 0)


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_garbage_and_truncated_compressed_data(impl: ModuleType, codec: int) -> None:
    good = build(impl, RECS, codec)
    payload = good[61:]
    bad = [b"", b"\x00", b"garbage" * 10, payload[: len(payload) // 2], payload[:-1],
           bytes(b ^ 0x55 for b in payload)]
    if codec == 2:
        bad.append(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", 1 << 30) + b"xx")
        bad.append(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + b"\x00\x00")
    for payload in bad:
        data = _swap_payload(good, codec, payload)
        for reader in (lambda d: impl.decode_records(d, "t", 0), impl.read_batches,
                       lambda d: impl.decode_arrow(d, "t", 0)):
            with pytest.raises(CorruptRecordError):
                reader(data)


def test_legacy_lz4_broken_header_checksum() -> None:
    """Kafka 0.8/0.9 wrote a wrong lz4 header checksum (magic 0): read anyway, in every block mode."""
    raw = b"legacy lz4 payload " * 5000
    modes = ({"block_linked": False}, {"block_linked": True}, {"block_checksum": True, "store_size": True})
    for kwargs in modes:
        frame = bytearray(lz4.frame.compress(raw, **kwargs))  # type: ignore[arg-type]
        hc = 6 + (8 if frame[4] & 0x08 else 0)
        frame[hc] ^= 0xFF
        assert _codecs.decompress(3, bytes(frame), magic=0) == raw
        with pytest.raises(CorruptRecordError):
            _codecs.decompress(3, bytes(frame), magic=1)
    magic = b"\x04\x22\x4d\x18"
    for bad in (b"", magic, magic + b"\x00\x40\x00", magic + b"\x40\x40\x00" + b"\xff" * 8):
        with pytest.raises(CorruptRecordError):
            _codecs.decompress(3, bad, magic=0)

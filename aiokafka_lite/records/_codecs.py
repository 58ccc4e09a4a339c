"""Compression codecs for record batches, with a cap on decompressed size.

Every decoding failure of the underlying libraries (zlib, cramjam, lz4, zstandard) becomes a
:class:`CorruptRecordError` naming the codec, and output is capped (:data:`MAX_DECOMPRESSED_SIZE`) so a
small hostile batch cannot expand into gigabytes (a decompression bomb) before anything is checked.
"""

from __future__ import annotations

import struct
import threading
import zlib
from typing import Any

import cramjam
import lz4.block
import lz4.frame
import zstandard

from ..errors import CorruptRecordError, IllegalArgumentError
from ._types import CODEC_GZIP, CODEC_LZ4, CODEC_NAMES, CODEC_NONE, CODEC_SNAPPY, CODEC_ZSTD

#: Largest decompressed size accepted for one batch (or legacy wrapper message). Kafka puts no bound on
#: it, so this only stops bombs: legitimate batches are far smaller. Tests may lower it.
MAX_DECOMPRESSED_SIZE = 256 * 1024 * 1024

DEFAULT_LEVELS = {CODEC_GZIP: 6, CODEC_LZ4: 0, CODEC_ZSTD: 3}

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = 16
_LZ4_MAGIC = 0x184D2204
_local = threading.local()  # zstandard contexts are not thread-safe: one per thread


def _zstd_compressor(level: int) -> Any:
    cache = getattr(_local, "zc", None)
    if cache is None:
        cache = _local.zc = {}
    cctx = cache.get(level)
    if cctx is None:
        cctx = cache[level] = zstandard.ZstdCompressor(level=level)
    return cctx


def _zstd_decompressor() -> Any:
    dctx = getattr(_local, "zd", None)
    if dctx is None:
        dctx = _local.zd = zstandard.ZstdDecompressor()
    return dctx


def compress(codec: int, data: Any, level: int | None = None) -> bytes:
    """Compress a batch's records the way the Java client does (lz4: KIP-57 frame, independent blocks)."""
    if level is None:
        level = DEFAULT_LEVELS.get(codec, 0)
    if codec == CODEC_GZIP:
        c = zlib.compressobj(level, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    if codec == CODEC_SNAPPY:
        return bytes(cramjam.snappy.compress_raw(data))
    if codec == CODEC_LZ4:
        return bytes(lz4.frame.compress(
            data, compression_level=level, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
            content_checksum=False, store_size=False))
    if codec == CODEC_ZSTD:
        return bytes(_zstd_compressor(level).compress(data))
    raise IllegalArgumentError(f"unknown compression codec {codec}")


def check_codec(codec: int) -> None:
    """Raise CorruptRecordError unless ``codec`` is one Kafka defines."""
    if codec not in CODEC_NAMES or codec == CODEC_NONE:
        raise CorruptRecordError(f"unknown compression codec {codec}")


def _too_big(name: str, size: int) -> CorruptRecordError:
    return CorruptRecordError(
        f"{name} data decompresses to {size} bytes or more, over the limit of {MAX_DECOMPRESSED_SIZE}")


def decompress(codec: int, data: Any, magic: int = 2) -> bytes:
    """Decompress a batch's records (``magic`` 0 selects the pre-KIP-57 lz4 framing)."""
    check_codec(codec)
    name = CODEC_NAMES[codec]
    try:
        if codec == CODEC_GZIP:
            return _gunzip(data)
        if codec == CODEC_SNAPPY:
            return _unsnappy(data)
        if codec == CODEC_LZ4:
            return _unlz4_legacy(memoryview(data)) if magic == 0 else _unlz4(data)
        return _unzstd(data)
    except CorruptRecordError:
        raise
    except (zlib.error, cramjam.DecompressionError, lz4.block.LZ4BlockError, zstandard.ZstdError,
            RuntimeError, ValueError, struct.error) as exc:
        raise CorruptRecordError(f"bad {name} data: {exc}") from None


def _gunzip(data: Any) -> bytes:
    limit = MAX_DECOMPRESSED_SIZE
    out: list[bytes] = []
    size = 0
    rest: Any = data
    while True:
        d = zlib.decompressobj(47)  # 32 + 15: accept gzip or zlib headers
        chunk = d.decompress(rest, limit - size + 1)
        size += len(chunk)
        if size > limit:
            raise _too_big("gzip", size)
        out.append(chunk)
        if not d.eof:
            raise CorruptRecordError("bad gzip data: truncated stream")
        rest = d.unused_data
        if not rest:  # another gzip member may follow (concatenated streams are valid gzip)
            return b"".join(out)


def _snappy_block(block: Any, budget: int) -> bytes:
    size = cramjam.snappy.decompress_raw_len(block)
    if size > budget:
        raise _too_big("snappy", MAX_DECOMPRESSED_SIZE - budget + size)
    return bytes(cramjam.snappy.decompress_raw(block))


def _unsnappy(data: Any) -> bytes:
    view = memoryview(data)
    if len(view) < _XERIAL_HEADER or view[:8] != _XERIAL_MAGIC:
        return _snappy_block(view, MAX_DECOMPRESSED_SIZE)
    # xerial framing (what the Java client writes): header, then [int32 length][raw snappy block]...
    out: list[bytes] = []
    budget = MAX_DECOMPRESSED_SIZE
    pos = _XERIAL_HEADER
    end = len(view)
    while pos < end:
        if end - pos < 4:
            raise CorruptRecordError("bad snappy data: truncated xerial block length")
        (size,) = struct.unpack_from(">i", view, pos)
        pos += 4
        if size < 0 or size > end - pos:
            raise CorruptRecordError(f"bad snappy data: xerial block of {size} bytes runs past the end")
        block = _snappy_block(view[pos:pos + size], budget)
        budget -= len(block)
        out.append(block)
        pos += size
    return b"".join(out)


def _unlz4(data: Any) -> bytes:
    d = lz4.frame.LZ4FrameDecompressor()
    out = d.decompress(data, max_length=MAX_DECOMPRESSED_SIZE + 1)
    if len(out) > MAX_DECOMPRESSED_SIZE:
        raise _too_big("lz4", len(out))
    if not d.eof:
        raise CorruptRecordError("bad lz4 data: truncated frame")
    return bytes(out)


def _unlz4_legacy(view: memoryview) -> bytes:
    """Kafka 0.8-0.9 (magic 0) wrote lz4 frames with a wrong header checksum: parse them by hand."""
    end = len(view)
    if end < 7 or struct.unpack_from("<I", view, 0)[0] != _LZ4_MAGIC:
        raise CorruptRecordError("bad lz4 data: no frame magic")
    flg, bd = view[4], view[5]
    if flg >> 6 != 1:
        raise CorruptRecordError(f"bad lz4 data: frame version {flg >> 6}")
    block_max = 1 << (8 + 2 * ((bd >> 4) & 7))
    if block_max < 1 << 16:
        raise CorruptRecordError("bad lz4 data: invalid block size")
    pos = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0) + 1  # + content size, dict id, HC
    block_checksum = 4 if flg & 0x10 else 0
    linked = not flg & 0x20
    out = bytearray()
    while True:
        if end - pos < 4:
            raise CorruptRecordError("bad lz4 data: truncated frame")
        (size,) = struct.unpack_from("<I", view, pos)
        pos += 4
        if size == 0:
            return bytes(out)
        raw = size & 0x80000000
        size &= 0x7FFFFFFF
        if size > block_max or size + block_checksum > end - pos:
            raise CorruptRecordError(f"bad lz4 data: block of {size} bytes runs past the end")
        block = view[pos:pos + size]
        pos += size + block_checksum
        if raw:
            out += block
        elif linked:
            out += lz4.block.decompress(block, uncompressed_size=block_max, dict=bytes(out[-65536:]))
        else:
            out += lz4.block.decompress(block, uncompressed_size=block_max)
        if len(out) > MAX_DECOMPRESSED_SIZE:
            raise _too_big("lz4", len(out))


def _unzstd(data: Any) -> bytes:
    declared = zstandard.frame_content_size(data)
    if declared > MAX_DECOMPRESSED_SIZE:
        raise _too_big("zstd", declared)
    dctx = _zstd_decompressor()
    if declared >= 0:
        return bytes(dctx.decompress(data))
    # no content size in the frame header (zstd-jni streams): output is bounded by max_output_size
    return bytes(dctx.decompress(data, max_output_size=MAX_DECOMPRESSED_SIZE))

"""Kafka frames to and from a byte stream (the framing halves of net/connection.py).

A Kafka frame is a 4-byte big-endian size and that many bytes. :class:`FrameReader` keeps the bytes of an
unfinished frame between ``feed()`` calls and hands each complete frame to a callback as a memoryview
into the received bytes (no copy when a frame arrives whole). It knows nothing of sockets or asyncio, so
its cases (frames split anywhere, many per chunk, bad sizes) are tested on bytes alone.

On the way out a frame is one buffer, or a list of parts (a Produce request whose record batches were
left out of line, protocol/scatter.py): :func:`write_frames` hands the transport the small parts of
several frames joined (one system call) and each record batch as it is (no copy).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from ..protocol import encode_request, encode_request_scattered
from ..protocol.scatter import SCATTER_MIN

__all__ = ["Frame", "FrameReader", "FrameSizeError", "encode_frame", "frame_size", "write_frames"]

_PRODUCE_KEY = 0

Buffer = bytes | bytearray | memoryview
#: A request frame: one buffer, or its parts in order.
Frame = bytes | bytearray | list[Buffer]


class _Writable(Protocol):
    def write(self, data: Buffer) -> None: ...


def encode_frame(request: Any, version: int, corr: int, client_id: str | None) -> Frame:
    """The request's frame; a Produce request's in parts, its record batches not copied."""
    if request.API_KEY == _PRODUCE_KEY:
        return encode_request_scattered(request, version, corr, client_id)
    return encode_request(request, version, corr, client_id)


def frame_size(frame: Frame) -> int:
    return sum(len(p) for p in frame) if isinstance(frame, list) else len(frame)


def write_frames(transport: _Writable, frames: Iterable[Frame]) -> None:
    """Write frames in order: small parts joined into one write, record batches each on their own."""
    small: list[Buffer] = []
    for frame in frames:
        for part in (frame if isinstance(frame, list) else (frame,)):
            if len(part) >= SCATTER_MIN:
                if small:
                    transport.write(small[0] if len(small) == 1 else b"".join(small))
                    small = []
                transport.write(part)
            else:
                small.append(part)
    if small:
        transport.write(small[0] if len(small) == 1 else b"".join(small))

_unpack_int32 = struct.Struct(">i").unpack_from


class FrameSizeError(ValueError):
    """A frame announced a size below 4 bytes or above the reader's limit: the stream is not Kafka's."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame size {size} outside 4..{limit}")
        self.size = size
        self.limit = limit


class FrameReader:
    """Feeds complete frames to ``on_frame``; ``stop()`` (e.g. from inside ``on_frame``) ends the feed."""

    __slots__ = ("_have", "_limit", "_parts", "_stopped", "_want")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._parts: list[bytes] = []
        self._have = 0
        self._want = 4
        self._stopped = False

    @property
    def pending(self) -> int:
        """Bytes of an unfinished frame held back (0 between frames)."""
        return self._have

    def stop(self) -> None:
        """No more frames: the rest of the current chunk and every later one are dropped."""
        self._stopped = True
        self._parts = []
        self._have = 0

    def feed(self, data: bytes, on_frame: Callable[[memoryview], object]) -> None:
        """Take ``data`` and call ``on_frame`` with each frame it completes (the payload, without the size).

        Raises :class:`FrameSizeError` for an impossible size; the reader is stopped then.
        """
        if self._stopped:
            return
        if self._parts:
            self._parts.append(data)
            self._have += len(data)
            if self._have < self._want:
                return
            data = b"".join(self._parts)
            self._parts = []
        n = len(data)
        pos = 0
        want = 4
        view: memoryview | None = None
        limit = self._limit
        while n - pos >= 4:
            size = _unpack_int32(data, pos)[0]
            if size < 4 or size > limit:
                self.stop()
                raise FrameSizeError(size, limit)
            end = pos + 4 + size
            if end > n:
                want = 4 + size
                break
            if view is None:
                view = memoryview(data)
            on_frame(view[pos + 4 : end])
            if self._stopped:
                return
            pos = end
        if pos < n:
            self._parts = [data[pos:] if pos else data]
            self._have = n - pos
            self._want = want
        else:
            self._have = 0

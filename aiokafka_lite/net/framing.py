"""Kafka frames to and from a byte stream (the framing halves of net/connection.py).

A Kafka frame is a 4-byte big-endian size and that many bytes. :class:`FrameReader` owns the buffer the
socket reads into and hands each complete frame to a callback as a read-only view of it (no copy, also
when a frame spans many reads). It knows nothing of sockets or asyncio, so its cases (frames split
anywhere, many per read, bad sizes, buffers renewed mid-frame) are tested on bytes alone.

On the way out a frame is one buffer, or a list of parts (a Produce request whose record batches were
left out of line, protocol/scatter.py): :func:`write_frames` hands the transport the small parts of
several frames joined (one system call) and each record batch as it is (no copy).
"""

from __future__ import annotations

import collections
import struct
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from ..protocol import encode_request, encode_request_scattered
from ..protocol.scatter import SCATTER_MIN
from ..records import recv_buffer

__all__ = [
    "Frame", "FrameReader", "FrameSizeError", "FrameWriter", "encode_frame", "frame_size", "write_frames",
]

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


def _parts(frames: Iterable[Frame]) -> Iterator[Buffer]:
    """The frames' parts in order: small ones joined (one system call), record batches as they are."""
    small: list[Buffer] = []
    for frame in frames:
        for part in (frame if isinstance(frame, list) else (frame,)):
            if len(part) >= SCATTER_MIN:
                if small:
                    yield small[0] if len(small) == 1 else b"".join(small)
                    small = []
                yield part
            else:
                small.append(part)
    if small:
        yield small[0] if len(small) == 1 else b"".join(small)


def write_frames(transport: _Writable, frames: Iterable[Frame]) -> None:
    """Write frames in order: small parts joined into one write, record batches each on their own."""
    for part in _parts(frames):
        transport.write(part)


class FrameWriter:
    """Frames into a transport, handed over only while it holds nothing unsent.

    asyncio's selector transport (Python 3.11) keeps unsent bytes in a bytearray: every byte written
    while the socket is full is copied in, copied again as the bytearray grows and again as it shrinks
    (perf: a sixth of the producer's CPU with 16 KiB values). Parts written meanwhile wait here as they
    are and go on when the transport has drained. :meth:`attach` sets the transport's high-water mark
    to 1 byte, so its ``pause_writing``/``resume_writing`` (:meth:`pause`, :meth:`resume`) say
    "holds bytes" and "holds none". Large parts go as memoryviews, so that the transport's
    send-now-and-keep-the-rest slices them without a copy.

    Sans-I/O like :class:`FrameReader`: it knows the transport's ``write``, ``get_write_buffer_size``
    and ``set_write_buffer_limits`` only.
    """

    #: Unsent bytes (here and in the transport) above which a writer should wait (:attr:`over`) ...
    HIGH = 64 * 1024
    #: ... and at or below which :meth:`resume` says waiters may go on (asyncio's defaults).
    LOW = 16 * 1024

    def __init__(self) -> None:
        self._transport: Any = None
        self._waiting: collections.deque[Buffer] = collections.deque()
        self._waiting_bytes = 0
        self._busy = False

    def attach(self, transport: Any) -> None:
        self._transport = transport
        # high=1, not 0: TLS transports pause at size >= high, so 0 would pause them with nothing held
        # and never resume. (A selector transport holding exactly one byte stays unpaused: harmless.)
        transport.set_write_buffer_limits(high=1, low=0)

    def detach(self) -> None:
        """The connection closed: what waits is dropped (its requests fail with the connection)."""
        self._transport = None
        self._waiting.clear()
        self._waiting_bytes = 0

    @property
    def unsent(self) -> int:
        """Bytes written to us and not yet taken by the socket."""
        held = self._transport.get_write_buffer_size() if self._busy and self._transport is not None else 0
        return self._waiting_bytes + held

    @property
    def over(self) -> bool:
        """More than :attr:`HIGH` bytes unsent: the broker reads slower than we write."""
        return self._busy and self.unsent > self.HIGH

    def write(self, frames: Iterable[Frame]) -> None:
        waiting = self._waiting
        for part in _parts(frames):
            if waiting or self._busy:
                waiting.append(part)
                self._waiting_bytes += len(part)
            elif self._transport is not None:
                self._hand(part)

    def pause(self) -> None:
        self._busy = True

    def resume(self) -> bool:
        """The transport drained: hand it what waits until it holds bytes again. True when at most
        :attr:`LOW` bytes are left unsent."""
        self._busy = False
        waiting = self._waiting
        while waiting and not self._busy and self._transport is not None:
            part = waiting.popleft()
            self._waiting_bytes -= len(part)
            self._hand(part)
        return self.unsent <= self.LOW

    def _hand(self, part: Buffer) -> None:
        # A record batch as a view: a partial send keeps the rest without slicing a copy of it.
        self._transport.write(memoryview(part) if len(part) >= SCATTER_MIN else part)


_unpack_int32 = struct.Struct(">i").unpack_from


class FrameSizeError(ValueError):
    """A frame announced a size below 4 bytes or above the reader's limit: the stream is not Kafka's."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame size {size} outside 4..{limit}")
        self.size = size
        self.limit = limit


#: A fresh receive buffer's size, more when one frame needs more (a large frame gets a buffer of its own
#: size once its first bytes are in). Every connection holds one, so it is kept small.
CHUNK = 64 * 1024
#: With less room than this left and no frame begun, the next read goes to a fresh buffer.
MIN_ROOM = 4 * 1024
_SCRATCH = bytearray(4096)  # where a stopped reader lets the socket write what it will drop


class FrameReader:
    """Frames out of a byte stream, read in place: the socket writes into the reader's buffer
    (:meth:`get_buffer`, :meth:`buffer_updated`, asyncio's BufferedProtocol calls) and ``on_frame`` gets
    each complete frame as a read-only view of that buffer.

    A buffer is filled front to back and never written twice: when the next frame does not fit, a fresh
    one is taken and the frame's first bytes move there. So a frame handed out never changes, and
    decoders may keep views of it (a Fetch answer's record data is not copied; protocol/_codec.py).
    :meth:`feed` takes bytes that were already read (tests, other transports); ``stop()`` (e.g. from
    inside ``on_frame``) ends the stream.
    """

    __slots__ = ("_buf", "_chunk", "_end", "_limit", "_rview", "_start", "_stopped", "_want", "_wview")

    def __init__(self, limit: int, chunk: int = CHUNK) -> None:
        self._limit = limit
        self._chunk = chunk
        self._buf = bytearray()
        self._wview = memoryview(self._buf)
        self._rview = self._wview.toreadonly()
        self._start = 0  # where the unfinished frame begins in _buf
        self._end = 0  # where the next bytes go
        self._want = 4  # bytes from _start that complete it (4 until its size is known)
        self._stopped = False

    @property
    def pending(self) -> int:
        """Bytes of an unfinished frame held back (0 between frames)."""
        return self._end - self._start

    def stop(self) -> None:
        """No more frames: what is held and everything read later are dropped."""
        self._stopped = True
        self._renew(0)

    def _renew(self, size: int) -> None:
        """A fresh buffer of ``size`` bytes, holding the unfinished frame's bytes at its start."""
        have = 0 if self._stopped else self._end - self._start
        # Not zeroed (compiled): the socket fills it, and only bytes received are handed out.
        buf = recv_buffer(size if size > have else have)
        if have:
            buf[:have] = self._wview[self._start:self._end]
        self._buf, self._start, self._end = buf, 0, have
        self._wview = memoryview(buf)
        self._rview = self._wview.toreadonly()

    def get_buffer(self) -> memoryview:
        """Where the socket writes next: the rest of this buffer if the unfinished frame fits in it (and,
        before a frame's size is known, at least MIN_ROOM is left), else a fresh one."""
        if self._stopped:
            return memoryview(_SCRATCH)
        if self._start + self._want > len(self._buf) or (
                self._want == 4 and len(self._buf) - self._end < MIN_ROOM):
            self._renew(max(self._chunk, self._want))
        return self._wview[self._end:]

    def buffer_updated(self, nbytes: int, on_frame: Callable[[memoryview], object]) -> None:
        """``nbytes`` were written where :meth:`get_buffer` said: call ``on_frame`` with each frame they
        complete (the payload, without the size). Raises :class:`FrameSizeError` for an impossible size;
        the reader is stopped then."""
        if self._stopped:
            return
        self._end += nbytes
        view, pos, end, limit = self._rview, self._start, self._end, self._limit
        want = 4
        while end - pos >= 4:
            size = _unpack_int32(view, pos)[0]
            if size < 4 or size > limit:
                self.stop()
                raise FrameSizeError(size, limit)
            frame_end = pos + 4 + size
            if frame_end > end:
                want = 4 + size
                break
            on_frame(view[pos + 4:frame_end])
            if self._stopped:
                return
            pos = frame_end
        self._start, self._want = pos, want

    def feed(self, data: Buffer, on_frame: Callable[[memoryview], object]) -> None:
        """Take bytes already read: as if the socket had written them (same frames, same errors)."""
        src = memoryview(data)
        while len(src) and not self._stopped:
            dst = self.get_buffer()
            n = min(len(dst), len(src))
            dst[:n] = src[:n]
            src = src[n:]
            self.buffer_updated(n, on_frame)

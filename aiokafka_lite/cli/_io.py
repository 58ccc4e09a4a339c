"""Line input for ``produce`` and escapes in command-line separators and formats."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator
from typing import BinaryIO

_ESCAPES = {"\\t": "\t", "\\n": "\n", "\\r": "\r", "\\0": "\0", "\\\\": "\\"}


def unescape(text: str) -> str:
    r"""Turn ``\t``, ``\n``, ``\r``, ``\0`` and ``\\`` typed in a shell into the characters they name."""
    out = []
    i = 0
    while i < len(text):
        pair = text[i:i + 2]
        if pair in _ESCAPES:
            out.append(_ESCAPES[pair])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


class _ChunkReader:
    """Reads ``stream`` in a daemon thread into a bounded queue of the loop: chunks, then None at the end
    (or the exception that ended the reading, so the consumer of the lines sees it)."""

    def __init__(self, stream: BinaryIO, chunk_size: int) -> None:
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue(maxsize=8)
        self.read = getattr(stream, "read1", stream.read)
        self.chunk_size = chunk_size
        self.abandoned = threading.Event()  # the reader of the lines went away (error, Ctrl-C)

    def put(self, item: bytes | BaseException | None) -> bool:
        try:
            fut = asyncio.run_coroutine_threadsafe(self.queue.put(item), self.loop)
        except RuntimeError:  # the loop is closed
            return False
        while not self.abandoned.is_set():
            try:
                fut.result(timeout=0.2)
                return True
            except concurrent.futures.TimeoutError:
                continue
            except (concurrent.futures.CancelledError, RuntimeError):
                return False
        fut.cancel()
        return False

    def run(self) -> None:
        try:
            while True:
                chunk = self.read(self.chunk_size)
                if not chunk:
                    break
                if not self.put(chunk):
                    return
        except BaseException as exc:  # reported to the consumer of the lines, not lost
            self.put(exc)
            return
        self.put(None)


async def read_lines(stream: BinaryIO, *, chunk_size: int = 1 << 16,
                     delimiter: bytes = b"\n") -> AsyncIterator[bytes]:
    """Lines of ``stream`` (without their ``\n`` or ``\r\n``), read by a daemon thread.

    Another ``delimiter`` (``produce -D``) splits there instead, and a ``\r`` before it is kept.

    A daemon thread rather than the loop's executor: a blocking read of a terminal must not keep the
    process alive after Ctrl-C. The queue is bounded so a fast file cannot outrun the producer.
    """
    chunks = _ChunkReader(stream, chunk_size)
    queue, abandoned = chunks.queue, chunks.abandoned
    threading.Thread(target=chunks.run, name="aiokafka-lite-stdin", daemon=True).start()
    pending = b""
    crlf = delimiter == b"\n"
    try:
        while True:
            item = await queue.get()
            if item is None:
                break
            if isinstance(item, BaseException):
                raise item
            parts = (pending + item).split(delimiter)
            pending = parts.pop()
            for line in parts:
                yield line[:-1] if crlf and line.endswith(b"\r") else line
        if pending:
            yield pending[:-1] if crlf and pending.endswith(b"\r") else pending
    finally:
        abandoned.set()

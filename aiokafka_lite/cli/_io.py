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


async def read_lines(stream: BinaryIO, *, chunk_size: int = 1 << 16,
                     delimiter: bytes = b"\n") -> AsyncIterator[bytes]:
    """Lines of ``stream`` (without their ``\n`` or ``\r\n``), read by a daemon thread.

    Another ``delimiter`` (``produce -D``) splits there instead, and a ``\r`` before it is kept.

    A daemon thread rather than the loop's executor: a blocking read of a terminal must not keep the
    process alive after Ctrl-C. The queue is bounded so a fast file cannot outrun the producer.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue(maxsize=8)
    read = getattr(stream, "read1", stream.read)
    abandoned = threading.Event()  # the reader of the lines went away (error, Ctrl-C)

    def put(item: bytes | BaseException | None) -> bool:
        try:
            fut = asyncio.run_coroutine_threadsafe(queue.put(item), loop)
        except RuntimeError:  # the loop is closed
            return False
        while not abandoned.is_set():
            try:
                fut.result(timeout=0.2)
                return True
            except concurrent.futures.TimeoutError:
                continue
            except (concurrent.futures.CancelledError, RuntimeError):
                return False
        fut.cancel()
        return False

    def reader() -> None:
        try:
            while True:
                chunk = read(chunk_size)
                if not chunk:
                    break
                if not put(chunk):
                    return
        except BaseException as exc:  # reported to the consumer of the lines, not lost
            put(exc)
            return
        put(None)

    threading.Thread(target=reader, name="aiokafka-lite-stdin", daemon=True).start()
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

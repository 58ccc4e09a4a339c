"""The producer's memory bound (Java's BufferPool, as byte accounting).

A new batch reserves a first share of ``buffer_memory`` (``append.FIRST_RESERVE``, or its first record's
size) and more as it fills; once built for sending it keeps only its bytes' worth
(``AppendCore.close_batch``), and gives that back when the broker answered (or the batch failed). When
the pool is empty, ``send()`` waits in FIFO order, up to ``max_block_ms``.

Each release hands memory to the *first* waiter that fits and wakes only that one (and the next ones
only while memory is left): waking every waiter on every freed batch -- what a shared
``asyncio.Condition.notify_all`` does -- makes a thousand blocked senders spin for every batch the
broker acknowledges (aiokafka issue 528).
"""

from __future__ import annotations

import asyncio
from collections import deque

from ..errors import KafkaTimeoutError, RecordTooLargeError

__all__ = ["MemoryPool"]


class _Expired(Exception):
    """Internal: a waiter's max_block_ms ran out."""


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_exception(_Expired())


class _Waiter:
    __slots__ = ("fut", "nbytes")

    def __init__(self, nbytes: int, fut: asyncio.Future[None]) -> None:
        self.nbytes = nbytes
        self.fut = fut


class MemoryPool:
    """``total`` bytes, reserved per batch; ``reserve`` waits FIFO when exhausted."""

    __slots__ = ("_closed_error", "_waiters", "available", "total", "wait_seconds")

    def __init__(self, total: int) -> None:
        self.total = total
        self.available = total
        self._waiters: deque[_Waiter] = deque()
        self._closed_error: BaseException | None = None
        #: Seconds senders spent waiting for memory, summed (bufferpool-wait-ratio); slow path only.
        self.wait_seconds = 0.0

    @property
    def queued(self) -> int:
        """How many senders are waiting; a non-zero count makes every batch ready (drain to free memory)."""
        return len(self._waiters)

    @property
    def used(self) -> int:
        return self.total - self.available

    def try_reserve(self, nbytes: int) -> bool:
        """Take ``nbytes`` now if possible without jumping the queue."""
        if not self._waiters and self.available >= nbytes:
            self.available -= nbytes
            return True
        return False

    async def reserve(self, nbytes: int, timeout_s: float) -> None:
        """Take ``nbytes``, waiting at most ``timeout_s`` (0: fail at once) for other batches to complete."""
        if nbytes > self.total:
            raise RecordTooLargeError(
                f"a record needs {nbytes} bytes, more than buffer_memory={self.total}")
        if self._closed_error is not None:
            raise self._closed_error
        if self.try_reserve(nbytes):
            return
        if timeout_s <= 0:
            raise KafkaTimeoutError(
                f"no buffer memory for {nbytes} bytes ({self.available} of {self.total} free) "
                "and max_block_ms=0")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        waiter = _Waiter(nbytes, fut)
        self._waiters.append(waiter)
        timer = loop.call_later(timeout_s, _expire, fut)
        started = loop.time()
        try:
            await fut
        except BaseException as exc:
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                # Memory was handed to us just as we were cancelled: pass it on.
                self.release(nbytes)
            else:
                try:
                    self._waiters.remove(waiter)
                except ValueError:
                    pass
                # We may have been blocking smaller requests behind us.
                self._wake()
            if isinstance(exc, _Expired):
                raise KafkaTimeoutError(
                    f"waited {timeout_s * 1000:.0f} ms (max_block_ms) for {nbytes} bytes of buffer memory; "
                    f"{self.available} of {self.total} free: the brokers are not keeping up or are "
                    "unreachable"
                ) from None
            raise
        finally:
            timer.cancel()
            self.wait_seconds += loop.time() - started

    def release(self, nbytes: int) -> None:
        """Give ``nbytes`` back and hand them to the first waiter(s) that fit."""
        self.available += nbytes
        if self._waiters:
            self._wake()

    def _wake(self) -> None:
        waiters = self._waiters
        while waiters:
            w = waiters[0]
            if w.fut.done():
                waiters.popleft()
                continue
            if w.nbytes > self.available:
                break
            waiters.popleft()
            self.available -= w.nbytes
            w.fut.set_result(None)

    def close(self, error: BaseException) -> None:
        """Fail every waiter and every later reserve with ``error`` (the producer stopped or died)."""
        self._closed_error = error
        while self._waiters:
            w = self._waiters.popleft()
            if not w.fut.done():
                w.fut.set_exception(error)

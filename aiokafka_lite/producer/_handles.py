# cython: language_level=3, boundscheck=False, wraparound=False, annotation_typing=False
"""One result per batch, a light awaitable handle per record.

An ``asyncio.Future`` per record costs more than appending the record itself, so ``send()`` hands out a
:class:`RecordFuture` -- a few fields -- and the batch owns the outcome (:class:`BatchResult`): the
handles' done callbacks wait in the batch's list. No ``asyncio.Future`` is made for a record; a task
awaiting one blocks on the handle itself, as it would on an ``asyncio.Future``.

A RecordFuture duck-types ``asyncio.Future`` (``asyncio.isfuture`` is true), so ``asyncio.gather``,
``asyncio.wait``, ``asyncio.wait_for``, ``asyncio.shield``, ``asyncio.timeout`` and ``add_done_callback``
work on it as on aiokafka's futures. Cancelling it (``cancel()``, a ``wait_for`` or ``timeout`` that
expires, the awaiting task cancelled) cancels that handle at once for its awaiters and callbacks, as
with an ``asyncio.Future``; the record is already in a batch and is still delivered (the batch's
outcome no longer reaches the cancelled handle).

One source for both forms: setup.py compiles this module with Cython, ``_handles.pxd`` making the classes
extension types with C fields (the send fast path calls :func:`make_future` at C speed); run as Python
(``AIOKAFKA_LITE_PURE=1``, or not built) it is the same code, ``__slots__`` standing in for the fields.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Generator
from typing import Any

from ..errors import KafkaError
from ..structs import RecordMetadata

__all__ = ["BatchResult", "RecordFuture", "failed_future", "make_future"]


class BatchResult:
    """The outcome of one produced batch: a base offset and log-append time, or an error."""

    __slots__ = ("_callbacks", "_waiters", "base_offset", "done", "error", "log_append_time", "loop",
                 "partition", "parts", "topic")

    def __init__(self, topic: str, partition: int, loop: asyncio.AbstractEventLoop) -> None:
        self.topic = topic
        self.partition = partition
        self.loop = loop
        self.base_offset = -1
        self.log_append_time = -1
        self.error: BaseException | None = None
        self.done = False
        self._waiters: list[asyncio.Future[None]] | None = None
        self._callbacks: list[tuple[Callable[[Any], Any], Any, contextvars.Context | None]] | None = None
        #: Set when the batch was split (MESSAGE_TOO_LARGE): ``[(first_index, part), ...]`` in index
        #: order; each record's outcome is then its part's, and this result is done once all parts are.
        self.parts: list[tuple[int, BatchResult]] | None = None

    def locate(self, index: int) -> tuple[BatchResult, int]:
        """The result that holds record ``index`` (this one unless split) and its index there."""
        b = self
        while b.parts is not None:
            first, part = b.parts[0]
            for f, p in b.parts:
                if f > index:
                    break
                first, part = f, p
            index -= first
            b = part
        return b, index

    def set_result(self, base_offset: int, log_append_time: int = -1) -> None:
        if self.done:
            return
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self._finish()

    def set_exception(self, error: BaseException) -> None:
        if self.done:
            return
        self.error = error
        self._finish()

    def _finish(self) -> None:
        self.done = True
        # Done callbacks (added at send() time) are scheduled before the tasks awaiting the batch wake up,
        # as an asyncio.Future runs callbacks in the order they were added: a tracing span ends at the ack,
        # before send_and_wait() returns.
        cbs = self._callbacks
        if cbs:
            self._callbacks = None
            call_soon = self.loop.call_soon
            for fn, handle, ctx in cbs:
                call_soon(fn, handle, context=ctx)
        waiters = self._waiters
        if waiters:
            self._waiters = None
            for fut in waiters:
                # A cancelled wait is skipped. Always a plain result: the error lives here, so an
                # unawaited batch never logs "Future exception was never retrieved".
                if not fut.done():
                    fut.set_result(None)

    def waiter(self) -> asyncio.Future[None]:
        """A new asyncio.Future done (with None) once this batch has its outcome.

        One per wait, never shared: cancelling the task that awaits it (a timeout around ``await bulk``)
        cancels that wait only, not another caller's wait nor ``flush()``'s.
        """
        fut = self.loop.create_future()
        if self.done:
            fut.set_result(None)
            return fut
        waiters = self._waiters
        if waiters is None:
            self._waiters = [fut]
        else:
            if len(waiters) >= 64:  # waits given up on (cancelled) need not wait for the outcome
                waiters[:] = [w for w in waiters if not w.done()]
            waiters.append(fut)
        return fut

    def add_callback(self, fn: Callable[[Any], Any], handle: Any,
                     context: contextvars.Context | None) -> None:
        if self.done:
            self.loop.call_soon(fn, handle, context=context)
            return
        if self._callbacks is None:
            self._callbacks = []
        self._callbacks.append((fn, handle, context))

    def release(self, handle: Any) -> None:
        """``handle`` was cancelled: its callbacks leave this batch and run now, in the order added."""
        cbs = self._callbacks
        if not cbs:
            return
        keep = []
        call_soon = self.loop.call_soon
        for cb in cbs:
            if cb[1] is handle:
                call_soon(cb[0], handle, context=cb[2])
            else:
                keep.append(cb)
        self._callbacks = keep

    def remove_callback(self, fn: Callable[[Any], Any], handle: Any) -> int:
        if not self._callbacks:
            return 0
        keep = [c for c in self._callbacks if not (c[0] == fn and c[1] is handle)]
        removed = len(self._callbacks) - len(keep)
        self._callbacks = keep
        return removed

    def __repr__(self) -> str:
        state = "pending" if not self.done else (f"error={self.error!r}" if self.error else
                                                 f"base_offset={self.base_offset}")
        return f"<BatchResult {self.topic}-{self.partition} {state}>"


class RecordFuture:
    """What ``send()`` returns for one record; ``await`` it for its :class:`RecordMetadata`.

    Pending until the batch has its outcome, unless cancelled first: then it is done and cancelled for
    its awaiters and callbacks at once, as an ``asyncio.Future`` is, while the record is still delivered.
    """

    __slots__ = ("_cancelled", "batch", "index", "timestamp")

    def __init__(self, batch: BatchResult, index: int, timestamp: int) -> None:
        self.batch = batch
        self.index = index
        self.timestamp = timestamp
        #: None, or the CancelledError it was cancelled with (raised as a copy, as asyncio does).
        self._cancelled: BaseException | None = None

    # asyncio.isfuture() and the Task's step read this: a pending handle that ``__await__`` yields asks
    # the Task to block on it. The Task writes False back; nothing here depends on the flag, and a
    # handle only yields itself while pending, so the write is dropped (a property: no field to store).
    @property
    def _asyncio_future_blocking(self) -> bool:
        return True

    @_asyncio_future_blocking.setter
    def _asyncio_future_blocking(self, value: bool) -> None:
        pass

    def done(self) -> bool:
        return self.batch.done or self._cancelled is not None

    def cancelled(self) -> bool:
        return self._cancelled is not None

    def cancel(self, msg: Any = None) -> bool:
        """Stop waiting for this record: the handle is cancelled now and its callbacks run (False when
        already done). The record is in a batch already and is still delivered, as with aiokafka and
        the Java client, where cancelling the future does not recall the record."""
        if self.batch.done or self._cancelled is not None:
            return False
        self._cancelled = asyncio.CancelledError() if msg is None else asyncio.CancelledError(msg)
        self.batch.release(self)
        return True

    @property
    def _cancel_message(self) -> Any:
        """Read by ``asyncio.gather`` from a cancelled child (asyncio.Future's attribute)."""
        c = self._cancelled
        return c.args[0] if c is not None and c.args else None

    def _make_cancelled_error(self) -> asyncio.CancelledError:
        """The CancelledError to raise (``asyncio.gather`` calls this, as on an asyncio.Future)."""
        c = self._cancelled
        return asyncio.CancelledError(*c.args) if c is not None else asyncio.CancelledError()

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self.batch.loop

    def follow(self) -> RecordFuture:
        """A new handle on the same record, never cancelled: for whoever must see the record's own
        outcome (interceptors, tracing) after the caller cancelled this one."""
        return make_future(self.batch, self.index, self.timestamp)

    def result(self) -> RecordMetadata:
        if self._cancelled is not None:
            raise self._make_cancelled_error()
        b = self.batch
        if not b.done:
            raise asyncio.InvalidStateError("record not yet acknowledged")
        index = self.index
        if b.parts is not None:
            b, index = b.locate(index)
        if b.error is not None:
            raise b.error
        lat = b.log_append_time
        offset = b.base_offset + index if b.base_offset >= 0 else -1
        return RecordMetadata(b.topic, b.partition, offset, lat if lat >= 0 else self.timestamp, lat)

    def exception(self) -> BaseException | None:
        if self._cancelled is not None:
            raise self._make_cancelled_error()
        b = self.batch
        if not b.done:
            raise asyncio.InvalidStateError("record not yet acknowledged")
        if b.parts is not None:
            return b.locate(self.index)[0].error
        return b.error

    def add_done_callback(self, fn: Callable[[Any], Any], *,
                          context: contextvars.Context | None = None) -> None:
        if self._cancelled is not None:
            self.batch.loop.call_soon(fn, self, context=context)
        else:
            self.batch.add_callback(fn, self, context)

    def remove_done_callback(self, fn: Callable[[Any], Any]) -> int:
        if self._cancelled is not None:
            return 0  # already scheduled when it was cancelled, as asyncio.Future does
        return self.batch.remove_callback(fn, self)

    def __await__(self) -> Generator[Any, None, RecordMetadata]:
        if self.batch.done and self._cancelled is None:
            it = _DoneIter.__new__(_DoneIter)
            it.value = self.result()
            return it  # type: ignore[return-value]
        return _wait(self)

    def __iter__(self) -> Generator[Any, None, RecordMetadata]:
        return self.__await__()

    @property
    def topic(self) -> str:
        return self.batch.topic

    @property
    def partition(self) -> int:
        return self.batch.partition

    def __repr__(self) -> str:
        b = self.batch
        index = self.index
        if b.done and b.parts is not None:
            b, index = b.locate(index)
        if self._cancelled is not None:
            state = "cancelled"
        elif not b.done:
            state = "pending"
        elif b.error is not None:
            state = f"error={b.error!r}"
        else:
            state = f"offset={b.base_offset + index if b.base_offset >= 0 else -1}"
        return f"<RecordFuture {b.topic}-{b.partition} {state}>"


class _DoneIter:
    """What awaiting an acknowledged record returns: an iterator that ends at once with its value."""

    __slots__ = ("value",)

    value: Any

    def __iter__(self) -> _DoneIter:
        return self

    def __next__(self) -> Any:
        raise StopIteration(self.value)

    def send(self, v: Any) -> Any:
        raise StopIteration(self.value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        if val is None:
            raise typ
        raise val


def _wait(handle: RecordFuture) -> Generator[Any, None, RecordMetadata]:
    """Await a pending record as asyncio.Future.__await__ does: the Task blocks on the handle itself (its
    wakeup is a done callback), so cancelling the Task cancels this handle, nothing shared."""
    if not handle.done():
        yield handle
    return handle.result()


def make_future(batch: BatchResult, index: int, timestamp: int) -> RecordFuture:
    """Constructor used by the send path (compiled: no argument parsing, no ``__init__`` call)."""
    f = RecordFuture.__new__(RecordFuture)
    f.batch = batch
    f.index = index
    f.timestamp = timestamp
    f._cancelled = None
    return f


def failed_future(topic: str, partition: int, error: KafkaError,
                  loop: asyncio.AbstractEventLoop) -> RecordFuture:
    """A RecordFuture already failed with ``error`` (used when a record never reaches a batch)."""
    b = BatchResult(topic, partition, loop)
    b.set_exception(error)
    return RecordFuture(b, 0, -1)

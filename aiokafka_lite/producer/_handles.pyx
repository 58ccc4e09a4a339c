# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of ``_handles_py.py`` (same API and behaviour; see that module's docstring)."""

cimport cython

import asyncio

from ..structs import RecordMetadata


cdef class BatchResult:
    """The outcome of one produced batch: a base offset and log-append time, or an error."""

    def __init__(self, str topic, int partition, loop):
        self.topic = topic
        self.partition = partition
        self.loop = loop
        self.base_offset = -1
        self.log_append_time = -1
        self.error = None
        self.done = False
        self._fut = None
        self._callbacks = None
        self.parts = None

    cpdef tuple locate(self, long long index):
        """The result that holds record ``index`` (this one unless split) and its index there."""
        cdef BatchResult b = self
        cdef BatchResult part
        cdef long long first
        while b.parts is not None:
            first, part = b.parts[0]
            for f, p in b.parts:
                if f > index:
                    break
                first, part = f, p
            index -= first
            b = part
        return b, index

    def set_result(self, long long base_offset, long long log_append_time=-1):
        if self.done:
            return
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self._finish()

    def set_exception(self, error):
        if self.done:
            return
        self.error = error
        self._finish()

    cdef _finish(self):
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
        fut = self._fut
        if fut is not None and not fut.done():
            fut.set_result(None)

    def waiter(self):
        """The batch's one asyncio.Future, made on first need."""
        fut = self._fut
        if fut is None:
            fut = self._fut = self.loop.create_future()
            if self.done:
                fut.set_result(None)
        return fut

    def add_callback(self, fn, handle, context):
        if self.done:
            self.loop.call_soon(fn, handle, context=context)
            return
        if self._callbacks is None:
            self._callbacks = []
        self._callbacks.append((fn, handle, context))

    def remove_callback(self, fn, handle):
        if not self._callbacks:
            return 0
        keep = [c for c in self._callbacks if not (c[0] == fn and c[1] is handle)]
        removed = len(self._callbacks) - len(keep)
        self._callbacks = keep
        return removed

    def __repr__(self):
        if not self.done:
            state = "pending"
        elif self.error is not None:
            state = f"error={self.error!r}"
        else:
            state = f"base_offset={self.base_offset}"
        return f"<BatchResult {self.topic}-{self.partition} {state}>"


cdef class _DoneIter:
    """``__await__`` of a finished handle: stops at once with the value (no generator needed)."""

    cdef object value

    def __iter__(self):
        return self

    def __next__(self):
        raise StopIteration(self.value)

    def send(self, v):
        raise StopIteration(self.value)

    def throw(self, typ, val=None, tb=None):
        if val is None:
            raise typ
        raise val


@cython.freelist(1024)
cdef class RecordFuture:
    """What ``send()`` returns for one record; ``await`` it for its :class:`RecordMetadata`."""

    # asyncio.isfuture() looks for this attribute on the class; None would mean "not a future".
    _asyncio_future_blocking = False

    def __init__(self, BatchResult batch, long long index, long long timestamp):
        self.batch = batch
        self.index = index
        self.timestamp = timestamp

    def done(self):
        return self.batch.done

    def cancelled(self):
        return False

    def cancel(self, msg=None):
        """A record handed to the producer cannot be called back; this always answers False."""
        return False

    def get_loop(self):
        return self.batch.loop

    def result(self):
        cdef BatchResult b = self.batch
        cdef long long lat
        cdef long long index = self.index
        if not b.done:
            raise asyncio.InvalidStateError("record not yet acknowledged")
        if b.parts is not None:
            b, index = b.locate(index)
        if b.error is not None:
            raise b.error
        lat = b.log_append_time
        return RecordMetadata(b.topic, b.partition, b.base_offset + index if b.base_offset >= 0 else -1,
                              lat if lat >= 0 else self.timestamp, lat)

    def exception(self):
        cdef BatchResult b = self.batch
        if not b.done:
            raise asyncio.InvalidStateError("record not yet acknowledged")
        if b.parts is not None:
            return b.locate(self.index)[0].error
        return b.error

    def add_done_callback(self, fn, *, context=None):
        self.batch.add_callback(fn, self, context)

    def remove_done_callback(self, fn):
        return self.batch.remove_callback(fn, self)

    def __await__(self):
        cdef _DoneIter it
        if self.batch.done:
            it = _DoneIter.__new__(_DoneIter)
            it.value = self.result()
            return it
        return _wait(self)

    def __iter__(self):
        return self.__await__()

    @property
    def topic(self):
        return self.batch.topic

    @property
    def partition(self):
        return self.batch.partition

    def __repr__(self):
        cdef BatchResult b = self.batch
        cdef long long index = self.index
        if b.done and b.parts is not None:
            b, index = b.locate(index)
        if not b.done:
            state = "pending"
        elif b.error is not None:
            state = f"error={b.error!r}"
        else:
            state = f"offset={b.base_offset + index if b.base_offset >= 0 else -1}"
        return f"<RecordFuture {b.topic}-{b.partition} {state}>"


def _wait(RecordFuture handle):
    yield from handle.batch.waiter().__await__()
    return handle.result()


cpdef RecordFuture make_future(BatchResult batch, long long index, long long timestamp):
    """Fast constructor used by the send path (skips argument parsing of ``__init__``)."""
    cdef RecordFuture f = RecordFuture.__new__(RecordFuture)
    f.batch = batch
    f.index = index
    f.timestamp = timestamp
    return f


def failed_future(str topic, int partition, error, loop):
    """A RecordFuture already failed with ``error`` (used when a record never reaches a batch)."""
    b = BatchResult(topic, partition, loop)
    b.set_exception(error)
    return make_future(b, 0, -1)

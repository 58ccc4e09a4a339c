"""One asyncio loop per Python worker process, on a worker-local thread, and one client per configuration.

Spark calls the data source synchronously (``read()`` returns an iterator Spark pulls from), while our
clients are asyncio-native. Two ways to bridge them were possible:

* ``asyncio.run()`` per call: simple, but every task would connect, negotiate ApiVersions and fetch
  metadata afresh, and close it all again when the call returns;
* a loop on a background thread of the worker, kept for the worker's life: this is what we do.

Spark reuses Python workers across tasks and micro-batches (``spark.python.worker.reuse``, on by
default), and the driver-side stream reader lives as long as the query, so a kept loop keeps its
connections and cluster metadata warm: a micro-batch costs fetches only. It also lets the network run
ahead of Spark: while Spark converts one Arrow batch, the loop already fetches the next (see
``fetch.py``). The synchronous side waits on ``concurrent.futures`` results, so exceptions raised on
the loop reach the Spark task unchanged.

Nothing here is created before first use, so readers and writers pickle without sockets. If the process
forks after the loop started (Spark's daemon forks workers), the child sees a different PID and builds
its own loop and clients; it never touches the parent's.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from concurrent.futures import CancelledError as FutureCancelled
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from ..errors import ClientClosedError, IllegalStateError, KafkaTimeoutError

__all__ = ["WorkerLoop", "close_worker_loop", "config_key", "worker_loop"]

T = TypeVar("T")

log = logging.getLogger("aiokafka_lite.spark")

# The share of close()'s bound its clients may take; the rest is for the tasks it then cancels to unwind.
_CLIENTS_SHARE = 0.75

_on_loop_thread = threading.local()  # .worker: the WorkerLoop whose thread this is


def config_key(kind: str, settings: Mapping[str, Any]) -> str:
    """A stable text key for a client configuration (same settings -> same client)."""
    return kind + ":" + json.dumps(dict(settings), sort_keys=True, default=repr)


def _kind(key: str) -> str:
    """The kind part of a ``config_key`` (the settings may hold secrets: never log them)."""
    return key.split(":", 1)[0]


class WorkerLoop:
    """A daemon thread running an event loop, and the clients created on it, keyed by configuration."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self._clients: dict[str, Any] = {}
        self._closers: dict[str, Callable[[Any], Awaitable[None]]] = {}
        self._creating: dict[str, asyncio.Future[Any]] = {}
        # close() sets _closing under _guard, and work is accepted under it, so every task accepted
        # before the close exists on the loop by the time the close's own coroutine runs there.
        self._guard = threading.Lock()
        self._closing = False
        self._waiting: set[Future[Any]] = set()  # run()/submit() futures not yet answered
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="aiokafka-lite-spark-loop", daemon=True)
        self._thread.start()
        self._ready.wait()

    def _run(self) -> None:
        _on_loop_thread.worker = self
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        try:
            self.loop.run_forever()
        finally:  # only close() stops the loop; the thread that ran it closes it, however late
            self._answer_waiters()  # a run() on a task that ignored its cancellation
            self.loop.close()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    @property
    def closing(self) -> bool:
        """True from the moment close() is called: no new work is accepted."""
        return self._closing

    def _closed_error(self, what: str) -> ClientClosedError:
        return ClientClosedError(f"the worker's asyncio loop was closed {what}")

    def _start(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule ``coro`` on the loop, or close it unrun and refuse once close() has begun."""
        with self._guard:
            if self._closing:
                coro.close()
                raise self._closed_error("before this call")
            if not self.alive:
                coro.close()
                raise IllegalStateError("the worker's asyncio loop is not running")
            future = asyncio.run_coroutine_threadsafe(coro, self.loop)
            self._waiting.add(future)
        future.add_done_callback(self._answered)
        return future

    def _answered(self, future: Future[Any]) -> None:
        with self._guard:
            self._waiting.discard(future)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine on the loop and wait for its result; its exception is raised here.

        Raises ``KafkaTimeoutError`` after ``timeout`` s (the coroutine is cancelled), and
        ``ClientClosedError`` at once after close() began (the coroutine is closed unrun) or as soon as
        close() cancels the coroutine it waits on."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise IllegalStateError("WorkerLoop.run called from the loop's own thread")
        return self.wait(self._start(coro), timeout)

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Start a coroutine on the loop; returns a concurrent.futures.Future. Raises
        ``ClientClosedError`` after close() began; close() cancels the future if it is still pending
        (wait on it with :meth:`result`)."""
        return self._start(coro)

    def wait(self, future: Future[T], timeout: float | None) -> T:
        """:meth:`result`, and past ``timeout`` s the future is cancelled and ``KafkaTimeoutError`` raised,
        as :meth:`run` does (the sink's wait on the batch it has in flight)."""
        try:
            return self.result(future, timeout)
        except FutureTimeout:
            future.cancel()
            raise KafkaTimeoutError(f"operation did not finish within {timeout:.1f} s") from None

    def result(self, future: Future[T], timeout: float | None) -> T:
        """``future.result(timeout)`` for a :meth:`submit` future, but ``ClientClosedError`` when close()
        cancelled it (not concurrent.futures' ``CancelledError``, which names no cause). A timeout
        raises ``concurrent.futures.TimeoutError`` and leaves the future running: the caller decides."""
        try:
            return future.result(timeout)
        except FutureCancelled:
            if self._closing:
                raise self._closed_error("while this call waited") from None
            raise

    async def client(self, key: str, factory: Callable[[], Awaitable[T]],
                     closer: Callable[[T], Awaitable[None]]) -> T:
        """The client for ``key``, started by ``factory`` on first use (on the loop). Raises
        ``ClientClosedError`` after close() began; a client whose factory returns after that is closed
        here, not cached (close() has already closed the cached ones)."""
        if self._closing:
            raise self._closed_error("before this client was asked for")
        existing = self._clients.get(key)
        if existing is not None:
            return existing
        pending = self._creating.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: asyncio.Future[Any] = self.loop.create_future()
        self._creating[key] = fut
        try:
            created = await factory()
            if self._closing:
                await self._close_client(key, created, closer)
                raise self._closed_error("while this client was created")
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # mark retrieved: waiters re-raise it, nobody else must log it
            raise
        finally:
            self._creating.pop(key, None)
        self._clients[key] = created
        self._closers[key] = closer
        fut.set_result(created)
        return created

    async def discard(self, key: str) -> None:
        """Close and forget a client (after a failure that may have left it unusable)."""
        client = self._clients.pop(key, None)
        closer = self._closers.pop(key, None)
        if client is not None and closer is not None:
            await self._close_client(key, client, closer)

    async def _close_client(self, key: str, client: Any, closer: Callable[[Any], Awaitable[None]]) -> None:
        try:
            await closer(client)
        except Exception:  # closing a broken client must not hide the first error: log it, go on
            log.warning("closing the cached %s client failed", _kind(key), exc_info=True)

    async def _close_all(self) -> None:
        while self._clients:
            await self.discard(next(iter(self._clients)))

    def _answer_waiters(self) -> None:
        """Cancel every run()/submit() future still pending, so that no thread waits past close()."""
        with self._guard:
            waiting = list(self._waiting)
        for future in waiting:
            future.cancel()

    async def _shutdown(self, clients_by: float, deadline: float) -> None:
        """close()'s work on the loop, as ``asyncio.run`` ends its loop: the clients, then every other
        task cancelled and awaited, then async generators, then the loop stops."""
        try:
            closing = asyncio.ensure_future(self._close_all())
            await asyncio.wait([closing], timeout=max(0.0, clients_by - time.monotonic()))
            me = asyncio.current_task()
            rest = [task for task in asyncio.all_tasks() if task is not me]  # closing too, if unfinished
            for task in rest:
                task.cancel()
            if rest:
                await asyncio.wait(rest, timeout=max(0.0, deadline - time.monotonic()))
            left = deadline - time.monotonic()
            if left > 0:
                try:
                    await asyncio.wait_for(self.loop.shutdown_asyncgens(), left)
                except asyncio.TimeoutError:
                    pass
        finally:
            self.loop.stop()

    def close(self, timeout: float = 10.0) -> None:
        """Close every client and stop the loop. Returns ``None`` within ``timeout`` s; never raises.

        From the call on, run(), submit() and client() raise ``ClientClosedError``. On the loop, the
        cached clients are closed first, for up to three quarters of ``timeout`` (a closer's error is
        logged, not raised; a client whose factory returns meanwhile is closed instead of cached). Then
        every other task is cancelled and awaited, as ``asyncio.run`` does: the coroutine a run() waits on
        with it, so that run() raises ``ClientClosedError`` (a submit() future is cancelled). At
        ``timeout``, a call still unanswered has its future cancelled, and a loop whose thread is still
        busy (a closer blocking it) is left to stop and close once free. Called on the loop's own thread,
        it starts all this and returns at once; in a forked child, or a second time, it does nothing."""
        with self._guard:
            if self._closing or os.getpid() != self.pid:
                return
            self._closing = True
        began = time.monotonic()
        deadline = began + timeout
        if self.alive:
            try:
                asyncio.run_coroutine_threadsafe(
                    self._shutdown(began + timeout * _CLIENTS_SHARE, deadline), self.loop)
            except RuntimeError:  # the loop closed in between: nothing left to run
                pass
        if threading.current_thread() is self._thread:
            return
        self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():  # busy: its _shutdown stops and closes the loop once it runs again
            self._answer_waiters()
            log.warning("the worker's asyncio loop did not stop within %.1f s; it stops once its thread "
                        "is free", timeout)


_lock = threading.Lock()
_current: WorkerLoop | None = None


def worker_loop() -> WorkerLoop:
    """This process's loop, created on first use (and again in a forked child). On a loop's own thread,
    that loop, even while it closes: a coroutine uses the clients of the loop it runs on, and never
    starts a second loop under a closing one."""
    global _current
    own: WorkerLoop | None = getattr(_on_loop_thread, "worker", None)
    if own is not None and own.pid == os.getpid():
        return own
    with _lock:
        if _current is None or _current.pid != os.getpid() or not _current.alive:
            _current = WorkerLoop()
        return _current


def close_worker_loop(timeout: float = 5.0) -> None:
    """Close this process's clients and stop its loop, if it has one, as ``WorkerLoop.close``: returns
    ``None`` within ``timeout`` s and never raises; a later ``worker_loop()`` starts a fresh loop, while
    the closed one refuses work with ``ClientClosedError``. A cached client otherwise lives as long as
    the process: once its cluster is gone, its metadata refresh retries for that long. Registered to run
    at interpreter exit, and run after each test of tests/spark."""
    global _current
    with _lock:
        loop, _current = _current, None
    if loop is not None:
        loop.close(timeout=timeout)


atexit.register(close_worker_loop)

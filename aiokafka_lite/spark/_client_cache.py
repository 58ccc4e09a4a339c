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
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from ..errors import IllegalStateError, KafkaTimeoutError

__all__ = ["WorkerLoop", "close_worker_loop", "config_key", "worker_loop"]

T = TypeVar("T")


def config_key(kind: str, settings: Mapping[str, Any]) -> str:
    """A stable text key for a client configuration (same settings -> same client)."""
    return kind + ":" + json.dumps(dict(settings), sort_keys=True, default=repr)


class WorkerLoop:
    """A daemon thread running an event loop, and the clients created on it, keyed by configuration."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self._clients: dict[str, Any] = {}
        self._closers: dict[str, Callable[[Any], Awaitable[None]]] = {}
        self._creating: dict[str, asyncio.Future[Any]] = {}
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="aiokafka-lite-spark-loop", daemon=True)
        self._thread.start()
        self._ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        self.loop.run_forever()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run a coroutine on the loop and wait for its result; its exception is raised here."""
        if not self.alive:
            coro.close()
            raise IllegalStateError("the worker's asyncio loop is not running")
        if threading.current_thread() is self._thread:
            coro.close()
            raise IllegalStateError("WorkerLoop.run called from the loop's own thread")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise KafkaTimeoutError(f"operation did not finish within {timeout:.1f} s") from None

    def submit(self, coro: Coroutine[Any, Any, T]) -> Any:
        """Start a coroutine on the loop; returns a concurrent.futures.Future."""
        if not self.alive:
            coro.close()
            raise IllegalStateError("the worker's asyncio loop is not running")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def client(self, key: str, factory: Callable[[], Awaitable[T]],
                     closer: Callable[[T], Awaitable[None]]) -> T:
        """The client for ``key``, started by ``factory`` on first use (on the loop)."""
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
            try:
                await closer(client)
            except Exception:  # closing a broken client must not hide the first error
                pass

    async def _close_all(self) -> None:
        for key in list(self._clients):
            await self.discard(key)

    def close(self, timeout: float = 10.0) -> None:
        """Close every client and stop the loop (at interpreter exit, or in tests)."""
        if not self.alive or os.getpid() != self.pid:
            return
        try:
            self.run(self._close_all(), timeout)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.loop.close()


_lock = threading.Lock()
_current: WorkerLoop | None = None


def worker_loop() -> WorkerLoop:
    """This process's loop, created on first use (and again in a forked child)."""
    global _current
    with _lock:
        if _current is None or _current.pid != os.getpid() or not _current.alive:
            _current = WorkerLoop()
        return _current


def close_worker_loop(timeout: float = 5.0) -> None:
    """Close this process's clients and stop its loop, if it has one (a later ``worker_loop()`` starts
    afresh). A cached client otherwise lives as long as the process: once its cluster is gone, its
    metadata refresh retries for that long. Registered to run at interpreter exit."""
    global _current
    with _lock:
        loop, _current = _current, None
    if loop is not None:
        loop.close(timeout=timeout)


atexit.register(close_worker_loop)

"""A delaying TCP proxy for the benchmarks: every chunk crosses it ``delay`` seconds late, each way.

It models a far link (latency, not bandwidth): bytes keep their order, and a chunk read at time t is
written at t + delay whatever came before it, so pipelined requests overlap as on a real long wire.
It runs its own event loop in a daemon thread of the benchmark driver, listens on 127.0.0.1 only, and
``stop()`` closes every connection. Kafka brokers advertise their own address in Metadata answers, so
the broker behind it must advertise the proxy's port (see ``matrix.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class DelayProxy:
    """Listen on ``127.0.0.1:port`` and forward to ``127.0.0.1:upstream_port`` with ``delay`` s each way."""

    def __init__(self, port: int, upstream_port: int, delay: float) -> None:
        self.port = port
        self.upstream_port = upstream_port
        self.delay = delay
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="delay-proxy", daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            return
        for sock_writer in (writer, up_w):
            sock = sock_writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for src, dst in ((reader, up_w), (up_r, writer)):
            task = asyncio.ensure_future(self._pipe(src, dst))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        """Read chunks as they come; a second task writes each one ``delay`` after it was read."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, chunk = await queue.get()
                if not chunk:
                    break
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                dst.write(chunk)
                await dst.drain()

        writer_task = asyncio.ensure_future(deliver())
        try:
            while True:
                chunk = await src.read(1 << 18)
                await queue.put((loop.time() + self.delay, chunk))
                if not chunk:
                    break
            await writer_task
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer_task.cancel()
            with contextlib.suppress(Exception):
                dst.close()


def start_tansu(advertised_port: int | None = None) -> Any:
    """A Tansu broker (aiokafka_lite.embedded) that advertises ``advertised_port`` (a proxy's) in
    Metadata answers, so clients come back through the proxy after bootstrapping."""
    from aiokafka_lite.embedded import EmbeddedBroker

    class _Tansu(EmbeddedBroker):
        def _argv(self, binary: Path) -> list[str]:
            argv = super()._argv(binary)
            if advertised_port is not None:
                argv[argv.index("--advertised-listener-url") + 1] = f"tcp://127.0.0.1:{advertised_port}"
            return argv

    broker = _Tansu("tansu")
    broker.start(30)
    return broker


class DelayedTansu:
    """Tansu behind a :class:`DelayProxy` (``delay_ms`` each way); ``bootstrap`` is the proxy's address,
    ``direct`` the broker's own (for admin work that should not wait)."""

    def __init__(self, delay_ms: float) -> None:
        port = free_port()
        self.broker = start_tansu(port)
        self.proxy = DelayProxy(port, self.broker.port, delay_ms / 1000)
        try:
            self.proxy.start()
        except BaseException:
            self.broker.stop()
            raise
        self.bootstrap = f"127.0.0.1:{port}"
        self.direct = self.broker.bootstrap

    def stop(self) -> None:
        try:
            self.proxy.stop()
        finally:
            self.broker.stop()

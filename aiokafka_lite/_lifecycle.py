"""``with`` and ``async with`` for things that ``start()`` and ``stop()``: brokers, servers, processes,
and the clients.

One definition for every such class (the embedded brokers, the mock cluster and the test servers), so
they all behave alike: ``with`` starts what is not running yet and always stops; ``async with`` does
the same through ``astart()`` / ``astop()``, which run the blocking calls in a thread unless a class
has real coroutines for them. The clients (the producer, the consumers, the admin and network clients),
whose ``start()`` and ``close()`` are coroutines, share :class:`AsyncClient`.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

from typing_extensions import Self

__all__ = ["AsyncClient", "Lifecycle"]


class AsyncClient:
    """Mixin for the clients: ``async with`` awaits ``start()``, and on the way out, always, ``close()``."""

    async def start(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()


class Lifecycle:
    """Mixin: context managers over ``start()`` / ``stop()`` (see the module docstring)."""

    def start(self) -> Any:
        raise NotImplementedError

    def stop(self) -> Any:
        raise NotImplementedError

    def _needs_start(self) -> bool:
        return not getattr(self, "running", False)

    async def astart(self) -> None:
        await asyncio.to_thread(self.start)

    async def astop(self) -> Any:
        return await asyncio.to_thread(self.stop)

    def __enter__(self) -> Self:
        if self._needs_start():
            self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        if self._needs_start():
            await self.astart()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.astop()

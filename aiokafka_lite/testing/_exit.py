"""One registry of the kit's child processes still running, stopped at interpreter exit (the kernel's death
signal covers a killed interpreter; this covers a normal exit that skipped ``stop()``)."""

from __future__ import annotations

import atexit
import contextlib
import threading
from typing import Any, Protocol


class _Stoppable(Protocol):
    def stop(self) -> Any: ...


class ExitRegistry:
    """``add`` on start, ``discard`` on stop; whatever is left is stopped at exit."""

    def __init__(self) -> None:
        self._live: set[_Stoppable] = set()
        self._lock = threading.Lock()
        atexit.register(self.stop_all)

    def add(self, obj: _Stoppable) -> None:
        with self._lock:
            self._live.add(obj)

    def discard(self, obj: _Stoppable) -> None:
        with self._lock:
            self._live.discard(obj)

    def stop_all(self) -> None:
        with self._lock:
            live = list(self._live)
        for obj in live:
            with contextlib.suppress(Exception):
                obj.stop()

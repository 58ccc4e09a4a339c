"""Warnings that repeat while something stays broken, rate-limited so the log stays readable.

A broker that is down makes every retry fail (every retry_backoff_ms); one WARNING says so at once, then
at most one per ``interval`` seconds carries the count of failures since the last one; the others go to
DEBUG. :meth:`recovered` says (at INFO) when it works again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class RateLimitedWarning:
    """One kind of repeating failure, keyed (e.g. by broker address)."""

    def __init__(self, logger: logging.Logger, interval: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._log = logger
        self._interval = interval
        self._clock = clock
        self._last: dict[str, float] = {}  # key -> when the last WARNING went out
        self._count: dict[str, int] = {}  # key -> failures since that WARNING

    def warn(self, key: str, msg: str, *args: object) -> None:
        now = self._clock()
        last = self._last.get(key)
        if last is None or now - last >= self._interval:
            repeats = self._count.get(key, 0)
            suffix = f" ({repeats} more time(s) since the last warning)" if last is not None else ""
            self._log.warning(msg + suffix, *args)
            self._last[key] = now
            self._count[key] = 0
        else:
            self._count[key] = self._count.get(key, 0) + 1
            self._log.debug(msg, *args)

    def recovered(self, key: str, what: str) -> None:
        if self._last.pop(key, None) is not None:
            self._log.info("%s works again (%d failure(s) after the last warning)", what,
                           self._count.pop(key, 0))

"""Retrying until a deadline: the one helper every loop that asks again goes through.

A job that may fail for a while (a coordinator being elected, a leader moving, a broker restarting) is
tried; after a failure the error's class decides whether to try again (``errors.py``: ``retriable``,
``coordinator_moved``, ``invalid_metadata``), never a list of codes. Between attempts it waits an
exponential backoff with jitter and a cap (Java's ``retry.backoff.ms`` / ``retry.backoff.max.ms``,
KIP-580) and never sleeps past the deadline: when the next attempt could not start before it, the caller
gets :class:`KafkaTimeoutError` naming the job, with the last error as its ``__cause__``.

Two shapes: :func:`call_with_retries` for one call, :func:`retry_each` for a request about many items
(partitions, groups, topics) where each item has its own answer and only the failed ones go round again.
Cancellation is never retried: it goes straight through, during an attempt or a backoff.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from .._tasks import cancel_and_wait
from ..config import Config
from ..errors import KafkaConnectionError, KafkaError, KafkaTimeoutError, ProtocolError

__all__ = ["ExponentialBackoff", "Retry", "call_with_retries", "is_retriable", "retry_backoff", "retry_each"]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


class ExponentialBackoff:
    """``initial * 2**(failures-1)`` capped at ``maximum``, times a random factor in 1 +- jitter
    (so that many clients do not retry in lockstep)."""

    def __init__(self, initial_ms: float, maximum_ms: float, jitter: float = 0.2,
                 uniform: Callable[[float, float], float] = random.uniform) -> None:
        self.initial = initial_ms / 1000
        self.maximum = max(maximum_ms, initial_ms) / 1000
        self.jitter = jitter
        self._uniform = uniform

    def delay(self, failures: int) -> float:
        """Seconds to wait after ``failures`` consecutive failures (0 for none)."""
        if failures <= 0 or self.initial <= 0:
            return 0.0
        term = min(self.initial * (2 ** min(failures - 1, 62)), self.maximum)
        return term * self._uniform(1 - self.jitter, 1 + self.jitter)


def retry_backoff(config: Config) -> ExponentialBackoff:
    """Between retries of a request: ``retry_backoff_ms``, doubling up to ``retry_backoff_max_ms``."""
    return ExponentialBackoff(config.retry_backoff_ms, config.retry_backoff_max_ms)


def is_retriable(exc: BaseException) -> bool:
    """The default verdict: the error's class says waiting may help (``retriable``)."""
    return isinstance(exc, KafkaError) and exc.retriable


class Retry:
    """One job's retry budget: its name (for the timeout's message), a deadline, and a backoff.

    When the next attempt could not start before the deadline the job gives up at once, unless
    ``wait_out``: a call that promised to block up to its timeout (``max_block_ms``) waits until the
    deadline before raising. ``wake``: an event its owner sets when it closes; a backoff then ends at once,
    so the next attempt meets the closed client and the call fails now, not after the backoff. ``clock``
    and ``sleep`` default to the monotonic clock and ``asyncio.sleep``; tests pass a virtual pair.
    """

    def __init__(self, what: str, timeout: float, backoff: ExponentialBackoff, *, wait_out: bool = False,
                 wake: asyncio.Event | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.what = what
        self.timeout = timeout
        self.backoff = backoff
        self.wait_out = wait_out
        self.wake = wake
        self._clock = clock
        self._sleep = sleep
        self.deadline = clock() + timeout
        #: Failed attempts so far (the backoff grows with them).
        self.failures = 0

    def remaining(self) -> float:
        """Seconds left before the deadline (0 once it passed)."""
        return max(0.0, self.deadline - self._clock())

    async def pause(self) -> bool:
        """Count a failed attempt and wait its backoff; False when the next attempt could not start
        before the deadline (at once, or at the deadline with ``wait_out``)."""
        self.failures += 1
        wait = self.backoff.delay(self.failures)
        if self._clock() + wait >= self.deadline:
            if self.wait_out and self.remaining() > 0:
                await self._wait(self.remaining())
            return False
        await self._wait(wait)
        return True

    async def _wait(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when ``wake`` is set meanwhile."""
        if self.wake is None:
            await self._sleep(seconds)
            return
        if self.wake.is_set():
            return
        sleeping = asyncio.ensure_future(self._sleep(seconds))
        woken = asyncio.ensure_future(self.wake.wait())
        try:
            await asyncio.wait((sleeping, woken), return_when=asyncio.FIRST_COMPLETED)
        finally:
            await cancel_and_wait(sleeping, woken, quiet=True)

    def timed_out(self, cause: BaseException | None, subject: str | None = None, *,
                  running: bool = False) -> KafkaTimeoutError:
        """The error for a job (or one ``subject`` of it) still failing at the deadline (``running``: its
        last attempt was cut short there)."""
        what = self.what if subject is None else f"{self.what} for {subject}"
        note = "; an attempt was still waiting for its answer" if running else ""
        note += f"; last error: {cause}" if cause is not None else ""
        error = KafkaTimeoutError(f"{what} did not succeed within {round(self.timeout * 1000)} ms{note}")
        error.__cause__ = cause
        return error


async def call_with_retries(fn: Callable[[], Awaitable[T]], retry: Retry, *,
                            retriable: Callable[[BaseException], bool] = is_retriable,
                            on_retry: Callable[[BaseException], None] | None = None) -> T:
    """``await fn()`` until it returns, retrying the errors ``retriable`` accepts.

    Raises at once an error it refuses; after the deadline, ``retry.timed_out(last)``. Each attempt is
    bounded by the time left, so the call ends by the deadline; an attempt cut short there counts as
    timed out. ``on_retry(exc)`` runs before each backoff (forget a coordinator, ask for metadata).
    """
    last: BaseException | None = None
    while True:
        remaining = retry.remaining()
        if remaining <= 0:
            raise retry.timed_out(last)
        bound = asyncio.timeout(remaining)
        try:
            async with bound:
                return await fn()
        except Exception as exc:
            if bound.expired():
                raise retry.timed_out(last, running=True) from last
            if not retriable(exc):
                raise
            last = exc
        if on_retry is not None:
            on_retry(last)
        if not await retry.pause():
            raise retry.timed_out(last) from last


async def retry_each(items: Iterable[K], attempt: Callable[[list[K]], Awaitable[Mapping[K, Any]]],
                     retry: Retry, *, retriable: Callable[[BaseException], bool] = is_retriable,
                     max_disconnects: int | None = None, describe: Callable[[K], str] | None = None,
                     reroute: Callable[[], Any] | None = None) -> dict[K, Any]:
    """Run ``attempt(pending)`` until every item has a final answer or the deadline passes.

    ``attempt`` maps each item to its result or to an exception; a failure of the whole attempt that
    ``retriable`` accepts counts for every pending item, one it refuses is raised. Items whose exception
    ``retriable`` accepts go round again after the backoff; before that, ``reroute()`` runs when an error
    says the routing was wrong (``invalid_metadata``, ``coordinator_moved``). ``max_disconnects``: after that
    many rounds that lost a connection, a lost connection is final (a broker that drops the connection on
    a request will drop it again). Returns item -> result or final exception (``retry.timed_out`` for those
    still failing at the deadline, naming ``describe(item)``); the caller decides how to raise.
    """
    pending = list(dict.fromkeys(items))
    done: dict[K, Any] = {}
    last: dict[K, BaseException] = {}
    disconnects = 0
    while pending:
        try:
            answers = await attempt(pending)
        except Exception as exc:
            if not retriable(exc):
                raise
            answers = {k: exc for k in pending}
        disconnects += any(isinstance(a, KafkaConnectionError) for a in answers.values())
        retry_next: list[K] = []
        moved = False
        for k in pending:
            answer = answers.get(k, ProtocolError(f"the {retry.what} answer left out {k!r}"))
            if isinstance(answer, KafkaConnectionError) and max_disconnects is not None \
                    and disconnects >= max_disconnects:
                done[k] = answer
            elif isinstance(answer, BaseException) and retriable(answer):
                retry_next.append(k)
                last[k] = answer
                moved = moved or (isinstance(answer, KafkaError)
                                  and (answer.invalid_metadata or answer.coordinator_moved))
            else:
                done[k] = answer
        pending = retry_next
        if not pending:
            break
        if moved and reroute is not None:
            reroute()
        if not await retry.pause():
            for k in pending:
                done[k] = retry.timed_out(last[k], describe(k) if describe is not None else None)
            break
    return done


"""The three clauses every public async call is held to (docs/contract.md), as reusable checks.

* **cancel**: cancelled at its first suspension, a little later, or while it waits on the broker, the call
  raises ``CancelledError`` (or had already finished) and the client stays usable: a follow-up call
  succeeds.
* **stop during**: ``stop()`` issued while the call really waits (an empty topic, a full buffer, a broker
  that stopped answering) wakes it with the documented error within ``BOUND`` seconds, and ``stop()``
  itself returns within ``BOUND``.
* **after stop**: the call raises the documented error at once.

A broker "stops answering" by being sent SIGSTOP: its sockets stay open and the kernel still accepts
connections, so requests go out and are never answered, as with a hung or partitioned broker. SIGCONT
brings it back; nothing is steered through a control API.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from aiokafka_lite.errors import BrokerResponseError

#: Every client in these tests waits at most this long for one answer.
REQUEST_TIMEOUT_MS = 1500
#: A woken call, and stop() itself, must finish within this many seconds: two request timeouts and slack
#: for a loaded machine. The clauses do not wait for a request to time out: they name the error.
BOUND = 2 * REQUEST_TIMEOUT_MS / 1000 + 3.0
#: How long a call is given to start waiting before we act on it.
SETTLE = 0.3

Call = Callable[[], Awaitable[Any]]

#: Where the cancel clause cancels: at the first suspension, shortly after, or once the call waits.
CANCEL_POINTS = ("first-suspension", "after-10ms")


@contextlib.contextmanager
def frozen(pid: int) -> Iterator[None]:
    """The process ``pid`` (a broker) stops answering until the block ends."""
    os.kill(pid, signal.SIGSTOP)
    try:
        _wait_all_threads_stopped(pid)
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def _wait_all_threads_stopped(pid: int) -> None:
    """SIGSTOP reaches a multi-threaded broker's threads one by one: until all are stopped, one may
    still answer a request sent right after kill() returned."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        if states and all(s in ("T", "t") for s in states):
            return
        time.sleep(0.001)
    raise AssertionError(f"process {pid} did not stop within 5 s of SIGSTOP")


async def cancel_at(call: Call, point: str,
                    answers: tuple[type[BaseException], ...] = (BrokerResponseError,)) -> None:
    """Start ``call`` in a task and cancel it at ``point``; it must end (cancelled or done) in BOUND.
    ``answers``: what the call raises when the broker answered before the cancel landed."""
    task = asyncio.ensure_future(call())
    if point == "first-suspension":
        await asyncio.sleep(0)
    else:
        await asyncio.sleep(0.01)
    task.cancel()
    await _ended(task, answers)


async def cancel_waiting(call: Call) -> None:
    """Start ``call``, let it wait (it must be waiting after SETTLE), cancel it; it must end cancelled."""
    task = await started_waiting(call)
    task.cancel()
    await _ended(task)
    assert task.cancelled(), f"cancelling a waiting call gave {task.exception()!r}, not CancelledError"


async def started_waiting(call: Call) -> asyncio.Future[Any]:
    task = asyncio.ensure_future(call())
    await asyncio.sleep(SETTLE)
    if task.done():
        exc = None if task.cancelled() else task.exception()
        raise AssertionError(f"the call did not wait (it ended with {exc!r}): the setup does not hold it")
    return task


async def _ended(task: asyncio.Future[Any],
                 answers: tuple[type[BaseException], ...] = (BrokerResponseError,)) -> None:
    done, _ = await asyncio.wait([task], timeout=BOUND)
    assert done, f"the call did not end within {BOUND} s of being cancelled"
    if not task.cancelled() and isinstance(task.exception(), answers):
        return  # the broker answered before the cancel landed: the call's own outcome
    if not task.cancelled() and task.exception() is not None:
        exc = task.exception()
        raise AssertionError(f"cancelling raised {exc!r} instead of CancelledError") from exc


async def stop_wakes(call: Call, stop: Call, expected: type[BaseException] | tuple[type[BaseException], ...]
                     | None, stop_bound: float = BOUND) -> float:
    """Start ``call``, let it wait, run ``stop``: the call ends with ``expected`` (None: returns) in BOUND,
    and ``stop`` returns within ``stop_bound``.

    Returns how long the call took to wake after stop() began.
    """
    task = await started_waiting(call)
    t0 = time.monotonic()
    stopper = asyncio.ensure_future(stop())
    done, _ = await asyncio.wait([task], timeout=BOUND)
    woke = time.monotonic() - t0
    try:
        assert done, f"the call still waits {BOUND} s after stop()"
        if expected is None:
            assert task.exception() is None, f"expected a return, got {task.exception()!r}"
        else:
            exc = task.exception()
            assert isinstance(exc, expected), f"expected {expected}, got {exc!r}"
    finally:
        sdone, _ = await asyncio.wait([stopper], timeout=stop_bound)
        if not task.done():
            task.cancel()
    assert sdone, f"stop() did not return within {stop_bound} s"
    stopper.result()
    return woke


async def raises_at_once(call: Call, expected: type[BaseException] | tuple[type[BaseException], ...] | None
                         ) -> None:
    """``call`` ends at once (0.5 s) with ``expected`` (None: returns)."""
    t0 = time.monotonic()
    try:
        await asyncio.wait_for(call(), BOUND)
    except asyncio.TimeoutError:
        raise AssertionError(f"the call on a stopped client still waits after {BOUND} s") from None
    except BaseException as exc:
        assert expected is not None and isinstance(exc, expected), f"expected {expected}, got {exc!r}"
    else:
        assert expected is None, f"expected {expected}, the call returned"
    assert time.monotonic() - t0 < 0.5, "the call on a stopped client took longer than at once"


async def within(aw: Awaitable[Any], what: str = "the call") -> Any:
    """``await aw`` bounded by BOUND, naming what hung."""
    try:
        return await asyncio.wait_for(aw, BOUND)
    except asyncio.TimeoutError:
        raise AssertionError(f"{what} did not finish within {BOUND} s") from None


# --- the lifecycle clauses, alike for every client ---------------------------------------------------

#: The lifecycle calls of every client (start, stop and the async context manager).
LIFECYCLE = frozenset({"start", "stop", "close", "__aenter__", "__aexit__"})
#: The calls that stop a client; each returns at once on a stopped one.
STOPPERS = ("stop", "close", "__aexit__")
#: The calls that start a client.
STARTERS = ("start", "__aenter__")


def lifecycle_call(client: Any, name: str) -> Call:
    if name == "__aexit__":
        return lambda: client.__aexit__(None, None, None)
    return getattr(client, name)


async def stopper_after_stop_returns(client: Any, name: str) -> None:
    await within(client.stop(), "stop()")
    await raises_at_once(lifecycle_call(client, name), None)


async def starter_after_stop(client: Any, name: str,
                             expected: type[BaseException] | tuple[type[BaseException], ...] | None) -> None:
    await within(client.stop(), "stop()")
    await raises_at_once(lifecycle_call(client, name), expected)


async def cancelled_stop_then_stop(client: Any, point: str, check: Call,
                                   expected: type[BaseException]) -> None:
    """A cancelled stop() leaves a client that stop() stops: ``check`` then raises ``expected``."""
    await cancel_at(client.stop, point)
    await within(client.stop(), "stop() after a cancelled stop()")
    await raises_at_once(check, expected)


async def second_stop_waits(stop: Call, pid: int) -> None:
    """With the broker hung, a second stop() returns only once the first has finished stopping."""
    with frozen(pid):
        first = asyncio.ensure_future(stop())
        await asyncio.sleep(0)
        await within(stop(), "a second stop()")
        assert first.done(), "the second stop() returned while the first was still stopping"
    await within(first, "the first stop()")

"""What every CLI command shares: running the event loop, stopping on signals, one-line errors."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from .. import errors
from .._tasks import cancel_and_wait

PROG = "aiokafka-lite"
T = TypeVar("T")


class CLIError(Exception):
    """A failure the command explains itself; printed as one line, exit status ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class UsageError(CLIError):
    """Bad arguments (argparse errors, bad -X settings, bad --format): exit status 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code=2)


def describe(exc: BaseException) -> str:
    """One line saying what went wrong, without a traceback."""
    if isinstance(exc, (CLIError, errors.ConfigError)) and exc.args:
        text = str(exc.args[0])
    elif isinstance(exc, errors.KafkaError):
        text = str(exc)
    elif isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        text = str(exc) or "timed out"
    elif isinstance(exc, OSError):
        text = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
    else:
        text = f"{type(exc).__name__}: {exc} (set AIOKAFKA_LITE_DEBUG=1 for a traceback)"
    return " ".join(text.split("\n"))


def print_error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr, flush=True)


def warn(message: str) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr, flush=True)


def exit_code_for(exc: BaseException) -> int:
    if isinstance(exc, CLIError):
        return exc.code
    if isinstance(exc, errors.ConfigError):
        return 2
    return 1


def run(main: Callable[[], Coroutine[Any, Any, T]], *, use_uvloop: bool = False) -> T:
    """Run ``main()`` on a fresh loop: uvloop when asked for (and installed), asyncio otherwise."""
    factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    if use_uvloop or os.environ.get("AIOKAFKA_LITE_LOOP") == "uvloop":
        try:
            import uvloop
        except ImportError:
            if use_uvloop:
                warn("--uvloop: uvloop is not installed; using asyncio's loop (pip install uvloop)")
        else:
            factory = uvloop.new_event_loop
    if sys.version_info >= (3, 11):
        with asyncio.Runner(loop_factory=factory) as runner:
            return runner.run(main())
    if factory is not None:  # pragma: no cover - Python 3.10
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return asyncio.run(main())  # pragma: no cover - Python 3.10


class StopSignal:
    """SIGINT / SIGTERM set an event instead of killing the loop, so commands stop cleanly.

    Commands race their work against :meth:`wait`; when signal handlers cannot be installed (not the
    main thread) Ctrl-C still arrives as KeyboardInterrupt through the runner.
    """

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.signum: int | None = None
        self._installed: list[int] = []

    def __enter__(self) -> StopSignal:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self._fire, sig)
                self._installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
        return self

    def __exit__(self, *exc: object) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)

    def _fire(self, sig: int) -> None:
        self.signum = sig
        self.event.set()

    @property
    def stopped(self) -> bool:
        return self.event.is_set()

    async def wait(self) -> None:
        await self.event.wait()


async def race(work: Awaitable[T], stop: StopSignal, timeout: float | None = None) -> tuple[bool, T | None]:
    """Await ``work`` unless a stop signal (or ``timeout``) comes first; returns (finished, result)."""
    task = asyncio.ensure_future(work)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        done, _ = await asyncio.wait({task, stopper}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
    if task in done:
        return True, task.result()
    await cancel_and_wait(task)
    return False, None


async def with_timeout(work: Awaitable[T], seconds: float | None, what: str) -> T:
    """``work`` bounded by ``seconds``; on expiry a one-line CLIError saying what did not finish."""
    if seconds is None or seconds <= 0:
        return await work
    try:
        return await asyncio.wait_for(work, seconds)
    except (TimeoutError, asyncio.TimeoutError):
        raise CLIError(f"{what} did not finish within {seconds:g} s") from None

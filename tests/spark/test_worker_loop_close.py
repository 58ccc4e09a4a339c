"""``close_worker_loop()`` ends the process's worker loop the way ``asyncio.run`` ends its loop: new work is
refused with ``ClientClosedError``, every client is closed (one still being created too), every waiting
thread gets an answer, and the whole close returns within its bound. Plain Python: no Spark, no broker."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Coroutine
from typing import Any

import pytest

from aiokafka_lite.errors import ClientClosedError, KafkaTimeoutError
from aiokafka_lite.spark._client_cache import WorkerLoop, close_worker_loop, worker_loop

# Slack for a thread switch on a loaded 2-core machine; every bound below is far shorter than the hang
# or the doubled wait it catches.
_SLACK_S = 0.5


def _waiting_thread(call: Any) -> tuple[threading.Thread, list[BaseException]]:
    """A thread blocked in ``call()``; the list receives what it raised."""
    answers: list[BaseException] = []

    def wait() -> None:
        try:
            call()
        except BaseException as exc:
            answers.append(exc)

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread, answers


async def _ignoring_cancellation(started: threading.Event) -> None:
    started.set()
    while True:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            continue


def _closes_within(loop: WorkerLoop, seconds: float) -> bool:
    """Whether the loop's thread ends and closes the loop within ``seconds``."""
    deadline = time.monotonic() + seconds
    while loop.alive and time.monotonic() < deadline:
        time.sleep(0.05)
    return loop.loop.is_closed()


def _close_while_a_run_waits(loop: WorkerLoop, waited: Coroutine[Any, Any, None], started: threading.Event,
                             bound_s: float) -> float:
    """Close the process's loop while a thread waits in ``loop.run(waited, None)``; check that the close
    returns within ``bound_s`` and that the thread got ``ClientClosedError``. Returns the close's time."""
    thread, answers = _waiting_thread(lambda: loop.run(waited, None))
    assert started.wait(5.0)
    began = time.monotonic()
    close_worker_loop(timeout=bound_s)
    took = time.monotonic() - began
    assert took < bound_s + _SLACK_S
    thread.join(_SLACK_S)
    assert not thread.is_alive(), "run(timeout=None) still waits on a closed loop"
    assert len(answers) == 1 and isinstance(answers[0], ClientClosedError), answers
    return took


def test_a_run_waiting_without_timeout_is_answered_when_the_loop_closes() -> None:
    """The coroutine it waits on is cancelled and unwinds before the close returns; run() then raises."""
    loop = worker_loop()
    started = threading.Event()
    unwound = threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            unwound.set()

    assert _close_while_a_run_waits(loop, forever(), started, 5.0) < 1.0 + _SLACK_S
    assert unwound.is_set()


def test_a_run_on_a_task_that_ignores_cancellation_is_answered_within_the_bound() -> None:
    loop = worker_loop()
    started = threading.Event()

    _close_while_a_run_waits(loop, _ignoring_cancellation(started), started, 1.0)


def test_a_close_called_on_the_loops_own_thread_returns_at_once_and_still_answers_waiters() -> None:
    """Called from a coroutine on the loop, the close cannot wait for the loop: it returns, and the loop
    still ends, answering a thread that waits on a task ignoring its cancellation when it stops."""
    loop = worker_loop()
    started = threading.Event()
    bound_s = 1.0

    async def close_here() -> float:
        began = time.monotonic()
        close_worker_loop(timeout=bound_s)
        return time.monotonic() - began

    thread, answers = _waiting_thread(lambda: loop.run(_ignoring_cancellation(started), None))
    assert started.wait(5.0)
    assert loop.run(close_here(), 5.0) < _SLACK_S
    thread.join(bound_s + _SLACK_S)
    assert len(answers) == 1 and isinstance(answers[0], ClientClosedError), answers
    assert _closes_within(loop, 5.0)


def test_a_thread_waiting_on_a_submitted_step_gets_client_closed_error() -> None:
    """read_range() and the sink wait on submit() futures (a prefetched step, a batch in flight) through
    WorkerLoop.result: the close cancels the future, and the waiting thread is told why."""
    loop = worker_loop()
    started = threading.Event()

    async def step() -> None:
        started.set()
        await asyncio.Event().wait()

    future = loop.submit(step())
    thread, answers = _waiting_thread(lambda: loop.result(future, None))
    assert started.wait(5.0)
    close_worker_loop(timeout=1.0)
    thread.join(5.0)
    assert not thread.is_alive()
    assert len(answers) == 1 and isinstance(answers[0], ClientClosedError), answers
    assert "while this call waited" in str(answers[0])


def test_wait_past_its_timeout_cancels_the_step_and_raises_kafka_timeout() -> None:
    """The sink waits on the batch it has in flight with WorkerLoop.wait: past the bound it gets
    KafkaTimeoutError, as run() gives, and the step is cancelled on the loop (not left running)."""
    loop = worker_loop()
    cancelled = threading.Event()

    async def step() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    future = loop.submit(step())
    began = time.monotonic()
    with pytest.raises(KafkaTimeoutError, match=r"within 0\.3 s"):
        loop.wait(future, 0.3)
    assert time.monotonic() - began < 0.3 + _SLACK_S
    assert cancelled.wait(5.0) and future.cancelled()


def test_a_client_whose_creation_finishes_during_the_close_is_closed_not_cached() -> None:
    loop = worker_loop()
    closed: list[str] = []
    creating = threading.Event()
    may_finish = asyncio.Event()
    made = asyncio.Event()

    async def close(client: str) -> None:
        if client == "cached":  # the creation of "late" finishes while this closer runs
            may_finish.set()
            await made.wait()
            await asyncio.sleep(0)
        closed.append(client)

    async def make_cached() -> str:
        return "cached"

    async def make_late() -> str:
        creating.set()
        await may_finish.wait()
        made.set()
        return "late"

    assert loop.run(loop.client("cached", make_cached, close), 5.0) == "cached"
    late = loop.submit(loop.client("late", make_late, close))
    assert creating.wait(5.0)
    close_worker_loop(timeout=5.0)
    assert sorted(closed) == ["cached", "late"]
    with pytest.raises(ClientClosedError):
        late.result(0)


def test_new_work_on_a_closed_loop_is_refused_and_the_next_use_starts_a_fresh_loop() -> None:
    old = worker_loop()
    close_worker_loop()
    with pytest.raises(ClientClosedError):
        old.run(asyncio.sleep(0), 5.0)
    with pytest.raises(ClientClosedError):
        old.submit(asyncio.sleep(0))
    fresh = worker_loop()
    assert fresh is not old and fresh.run(asyncio.sleep(0, "ok"), 5.0) == "ok"


def test_a_coroutine_on_a_closing_loop_keeps_its_own_loop() -> None:
    """A coroutine still running on the loop while it closes (here a closer) asks ``worker_loop()`` for its
    clients: it gets its own, closing loop, which refuses, rather than a new loop started under it."""
    loop = worker_loop()
    seen: list[Any] = []

    async def close(_client: str) -> None:
        own = worker_loop()
        seen.append(own)

        async def make() -> str:
            return "another"

        try:
            await own.client("another", make, close)
        except ClientClosedError as exc:
            seen.append(exc)

    async def make() -> str:
        return "cached"

    loop.run(loop.client("cached", make, close), 5.0)
    close_worker_loop(timeout=5.0)
    assert len(seen) == 2 and seen[0] is loop and isinstance(seen[1], ClientClosedError), seen


def test_the_close_returns_within_its_bound_when_a_closer_blocks_the_loop() -> None:
    """A closer that blocks the loop's thread past the bound (a synchronous call in it): the close still
    returns within ``timeout``, answers the thread waiting on the loop, and the loop closes once free."""
    loop = worker_loop()
    started = threading.Event()
    bound_s = 1.0

    async def close(_client: str) -> None:
        time.sleep(bound_s * 2)  # noqa: ASYNC251 - the case under test: a closer blocking the thread

    async def make() -> str:
        return "blocking"

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    loop.run(loop.client("blocking", make, close), 5.0)
    _close_while_a_run_waits(loop, forever(), started, bound_s)
    assert _closes_within(loop, bound_s * 2 + 5.0)


def test_a_closer_error_is_logged_and_the_close_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    loop = worker_loop()
    closed: list[str] = []

    async def close(client: str) -> None:
        if client == "broken":
            raise OSError("socket already gone")
        closed.append(client)

    async def make_broken() -> str:
        return "broken"

    async def make_sound() -> str:
        return "sound"

    loop.run(loop.client("producer:{}", make_broken, close), 5.0)
    loop.run(loop.client("consumer:{}", make_sound, close), 5.0)
    with caplog.at_level(logging.WARNING, logger="aiokafka_lite.spark"):
        close_worker_loop(timeout=5.0)
    assert closed == ["sound"]
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "producer" in warned[0].getMessage(), caplog.text
    assert "socket already gone" in caplog.text

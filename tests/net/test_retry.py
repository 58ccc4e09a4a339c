"""The retry helper (net/retry.py): backoff, cap, jitter bounds, the deadline, and what is retried.

Most tests run on a virtual clock (a ``clock``/``sleep`` pair that moves only when the helper sleeps), so
the waits the helper chose are read exactly; cancellation and the bound on one attempt use the real loop.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from aiokafka_lite import errors
from aiokafka_lite.net.retry import ExponentialBackoff, Retry, call_with_retries, retry_each


class VirtualClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _mid(low: float, high: float) -> float:
    return (low + high) / 2


def _retry(clock: VirtualClock, timeout: float = 10.0, initial_ms: float = 100, max_ms: float = 1000,
           uniform: Any = _mid) -> Retry:
    return Retry("Job", timeout, ExponentialBackoff(initial_ms, max_ms, uniform=uniform),
                 clock=clock, sleep=clock.sleep)


def _failing(errs: list[BaseException], result: Any = "ok") -> tuple[Any, list[int]]:
    calls: list[int] = []

    async def fn() -> Any:
        calls.append(1)
        if errs:
            raise errs.pop(0)
        return result

    return fn, calls


# -- the backoff ----------------------------------------------------------------------------------------


def test_backoff_doubles_per_failure_up_to_the_cap() -> None:
    backoff = ExponentialBackoff(100, 1000, uniform=lambda low, high: 1.0)
    assert [backoff.delay(n) for n in range(0, 8)] == pytest.approx([0, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0])
    assert backoff.delay(10_000) == pytest.approx(1.0)  # no overflow for a long outage


def test_jitter_draws_within_twenty_percent_either_side() -> None:
    asked: list[tuple[float, float]] = []

    def uniform(low: float, high: float) -> float:
        asked.append((low, high))
        return high

    backoff = ExponentialBackoff(100, 1000, uniform=uniform)
    assert backoff.delay(5) == pytest.approx(1.2)  # the cap, then the jitter on top of it
    assert asked == [pytest.approx((0.8, 1.2))]
    low = ExponentialBackoff(100, 1000, uniform=lambda lo, hi: lo)
    assert low.delay(1) == pytest.approx(0.08)


def test_jitter_spreads_real_draws() -> None:
    backoff = ExponentialBackoff(100, 1000)
    draws = [backoff.delay(2) for _ in range(300)]
    assert all(0.16 <= d <= 0.24 for d in draws)
    assert min(draws) < 0.18 and max(draws) > 0.22  # not a constant: clients do not retry in lockstep


# -- call_with_retries ----------------------------------------------------------------------------------


async def test_retriable_errors_are_retried_with_growing_backoff() -> None:
    clock = VirtualClock()
    fn, calls = _failing([errors.NotCoordinatorError(), errors.KafkaConnectionError(),
                          errors.CoordinatorLoadInProgressError()])
    assert await call_with_retries(fn, _retry(clock)) == "ok"
    assert len(calls) == 4
    assert clock.sleeps == pytest.approx([0.1, 0.2, 0.4])


async def test_a_non_retriable_error_is_raised_at_once() -> None:
    clock = VirtualClock()
    fn, calls = _failing([errors.CoordinatorNotAvailableError(), errors.TopicAuthorizationFailedError("t")])
    with pytest.raises(errors.TopicAuthorizationFailedError):
        await call_with_retries(fn, _retry(clock))
    assert len(calls) == 2 and clock.sleeps == pytest.approx([0.1])


async def test_retriable_is_read_from_the_error_class() -> None:
    class Transient(errors.KafkaError):
        retriable = True

    class Permanent(errors.KafkaError):
        pass

    clock = VirtualClock()
    fn, calls = _failing([Transient(), Transient()])
    assert await call_with_retries(fn, _retry(clock)) == "ok"
    assert len(calls) == 3
    fn, calls = _failing([Permanent()])
    with pytest.raises(Permanent):
        await call_with_retries(fn, _retry(clock))
    fn, _ = _failing([ValueError("a bug")])
    with pytest.raises(ValueError):
        await call_with_retries(fn, _retry(clock))


async def test_a_caller_verdict_and_on_retry_hook() -> None:
    clock = VirtualClock()
    seen: list[BaseException] = []
    fn, _ = _failing([errors.OperationNotAttemptedError(), errors.NotCoordinatorError()])
    result = await call_with_retries(
        fn, _retry(clock), on_retry=seen.append,
        retriable=lambda e: isinstance(e, errors.KafkaError)
        and (e.retriable or isinstance(e, errors.OperationNotAttemptedError)))
    assert result == "ok"
    assert [type(e) for e in seen] == [errors.OperationNotAttemptedError, errors.NotCoordinatorError]


async def test_the_deadline_ends_retries_without_sleeping_past_it() -> None:
    clock = VirtualClock()
    fn, calls = _failing([errors.CoordinatorNotAvailableError(f"try {i}") for i in range(100)])
    with pytest.raises(errors.KafkaTimeoutError) as info:
        await call_with_retries(fn, _retry(clock, timeout=1.0))
    # 0.1 + 0.2 + 0.4 = 0.7 s slept; the next wait (0.8 s) would end past the deadline: give up now.
    assert clock.sleeps == pytest.approx([0.1, 0.2, 0.4])
    assert clock.now < 1.0
    assert len(calls) == 4
    assert isinstance(info.value.__cause__, errors.CoordinatorNotAvailableError)
    assert str(info.value.__cause__) in str(info.value)
    assert "Job did not succeed within 1000 ms" in str(info.value)


async def test_a_blocking_wait_gives_up_at_the_deadline_not_before() -> None:
    clock = VirtualClock()
    fn, calls = _failing([errors.UnknownTopicOrPartitionError() for _ in range(100)])
    retry = Retry("Job", 1.0, ExponentialBackoff(100, 1000, uniform=_mid), wait_out=True,
                  clock=clock, sleep=clock.sleep)
    with pytest.raises(errors.KafkaTimeoutError):
        await call_with_retries(fn, retry)
    assert clock.sleeps == pytest.approx([0.1, 0.2, 0.4, 0.3])  # the last wait is cut to the deadline
    assert clock.now == pytest.approx(1.0)
    assert len(calls) == 4


async def test_the_cap_bounds_each_wait_until_the_deadline() -> None:
    clock = VirtualClock()
    fn, _ = _failing([errors.CoordinatorNotAvailableError() for _ in range(100)])
    with pytest.raises(errors.KafkaTimeoutError):
        await call_with_retries(fn, _retry(clock, timeout=5.0, initial_ms=100, max_ms=300))
    assert max(clock.sleeps) == pytest.approx(0.3)
    assert clock.sleeps[:3] == pytest.approx([0.1, 0.2, 0.3])
    assert sum(clock.sleeps) < 5.0


async def test_an_attempt_is_cut_at_the_deadline() -> None:
    started: list[int] = []

    async def hangs() -> None:
        started.append(1)
        await asyncio.sleep(60)

    retry = Retry("Hanging job", 0.05, ExponentialBackoff(10, 10))
    with pytest.raises(errors.KafkaTimeoutError, match=r"Hanging job .*still waiting for its answer"):
        await asyncio.wait_for(call_with_retries(hangs, retry), 10)
    assert started == [1]


async def test_cancellation_during_the_backoff_goes_through() -> None:
    fn, calls = _failing([errors.NotCoordinatorError() for _ in range(10)])
    task = asyncio.ensure_future(call_with_retries(fn, Retry("Job", 60, ExponentialBackoff(30_000, 30_000))))
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(calls) == 1  # now in the backoff
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(calls) == 1


async def test_cancellation_during_an_attempt_is_not_retried() -> None:
    calls: list[int] = []

    async def hangs() -> None:
        calls.append(1)
        await asyncio.sleep(60)

    task = asyncio.ensure_future(call_with_retries(hangs, Retry("Job", 60, ExponentialBackoff(1, 1))))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert calls == [1]


# -- retry_each -----------------------------------------------------------------------------------------


async def test_retry_each_retries_only_the_failed_items() -> None:
    clock = VirtualClock()
    rounds: list[list[str]] = []
    reroutes: list[int] = []

    async def attempt(pending: list[str]) -> dict[str, Any]:
        rounds.append(list(pending))
        out: dict[str, Any] = {"a": 1, "c": errors.InvalidTopicError("c")}
        out["b"] = errors.NotLeaderOrFollowerError("b") if len(rounds) == 1 else 2
        return {k: v for k, v in out.items() if k in pending}

    done = await retry_each(["a", "b", "c", "a"], attempt, _retry(clock), reroute=lambda: reroutes.append(1))
    assert rounds == [["a", "b", "c"], ["b"]]
    assert done["a"] == 1 and done["b"] == 2 and isinstance(done["c"], errors.InvalidTopicError)
    assert reroutes == [1]  # NOT_LEADER says the routing was stale
    assert clock.sleeps == pytest.approx([0.1])


async def test_retry_each_times_out_items_still_failing() -> None:
    clock = VirtualClock()

    async def attempt(pending: list[str]) -> dict[str, Any]:
        return {"a": 1, "b": errors.CoordinatorLoadInProgressError("b")}

    done = await retry_each(["a", "b"], attempt, _retry(clock, timeout=1.0), describe=lambda k: f"item {k}")
    assert done["a"] == 1
    assert isinstance(done["b"], errors.KafkaTimeoutError)
    assert "Job for item b did not succeed within 1000 ms" in str(done["b"])
    assert isinstance(done["b"].__cause__, errors.CoordinatorLoadInProgressError)
    assert clock.now < 1.0


async def test_retry_each_gives_up_on_a_broker_that_keeps_dropping_the_connection() -> None:
    clock = VirtualClock()
    rounds: list[int] = []

    async def attempt(pending: list[str]) -> dict[str, Any]:
        rounds.append(1)
        return {"a": errors.KafkaConnectionError("dropped")}

    done = await retry_each(["a"], attempt, _retry(clock), max_disconnects=3)
    assert len(rounds) == 3 and isinstance(done["a"], errors.KafkaConnectionError)


async def test_retry_each_whole_attempt_failures() -> None:
    clock = VirtualClock()
    rounds: list[int] = []

    async def attempt(pending: list[str]) -> dict[str, Any]:
        rounds.append(1)
        if len(rounds) == 1:
            raise errors.NotControllerError()
        if len(rounds) == 2:
            return {}  # an answer that leaves an item out is a protocol error, final
        raise AssertionError("not asked again")

    done = await retry_each(["a"], attempt, _retry(clock))
    assert isinstance(done["a"], errors.ProtocolError)

    async def broken(pending: list[str]) -> dict[str, Any]:
        raise errors.ClusterAuthorizationFailedError()

    with pytest.raises(errors.ClusterAuthorizationFailedError):
        await retry_each(["a"], broken, _retry(clock))


async def test_a_backoff_ends_when_its_owner_sets_wake() -> None:
    """``wake`` (set by the owner's stop()) cuts a backoff short: the next attempt then meets the closed
    client at once instead of after a 30 s sleep."""
    wake = asyncio.Event()
    retry = Retry("job", 120.0, ExponentialBackoff(30_000, 30_000), wake=wake)
    pausing = asyncio.ensure_future(retry.pause())
    for _ in range(5):
        await asyncio.sleep(0)
    assert not pausing.done()  # sleeping its backoff
    wake.set()
    done, _ = await asyncio.wait([pausing], timeout=5)
    assert done and pausing.result() is True
    assert await retry.pause() is True  # already set: no wait at all

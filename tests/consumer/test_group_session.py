"""The parts every group member shares, sans-I/O: the fenced rule by protocol (group_rules.verdict) and
the GroupSession's coordinator lookup (one lookup for every caller, retried with backoff until the
deadline, ended by close())."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import pytest

from aiokafka_lite import errors as Errors
from aiokafka_lite.consumer.group_rules import Outcome, verdict
from aiokafka_lite.consumer.group_session import GroupSession

E = Errors


@pytest.mark.parametrize(("error", "classic", "kip848_share"), [
    (None, Outcome.NOTHING, Outcome.NOTHING),
    (E.UnknownMemberIdError, Outcome.LOST, Outcome.LOST),
    (E.FencedMemberEpochError, Outcome.LOST, Outcome.LOST),
    (E.IllegalGenerationError, Outcome.LOST, Outcome.FATAL),
    (E.FencedInstanceIdError, Outcome.LOST, Outcome.FATAL),
    (E.RebalanceInProgressError, Outcome.REBALANCE, Outcome.FATAL),
    (E.NotCoordinatorError, Outcome.COORDINATOR_MOVED, Outcome.COORDINATOR_MOVED),
    (E.CoordinatorNotAvailableError, Outcome.COORDINATOR_MOVED, Outcome.COORDINATOR_MOVED),
    (E.CoordinatorLoadInProgressError, Outcome.RETRY, Outcome.RETRY),
    (E.GroupAuthorizationFailedError, Outcome.FATAL, Outcome.FATAL),
])
def test_one_fenced_rule_per_protocol(error: Any, classic: Outcome, kip848_share: Outcome) -> None:
    code = error.errno if error is not None else 0
    assert verdict(code, classic=True) is classic
    assert verdict(code) is kip848_share


class LookupClient:
    """FindCoordinator answers: each call takes the next scripted outcome (an exception or a node id)."""

    def __init__(self, *outcomes: Any, delay: float = 0.0) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0
        self.delay = delay

    async def find_coordinator(self, key: str, key_type: int = 0, *, timeout_ms: int | None = None) -> int:
        self.calls += 1
        await asyncio.sleep(self.delay)
        outcome = self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return int(outcome)


CONFIG = SimpleNamespace(request_timeout_ms=1000, retry_backoff_ms=1, retry_backoff_max_ms=4)


async def test_one_lookup_for_every_caller() -> None:
    client = LookupClient(7, delay=0.01)
    session = GroupSession(client, "g", "group 'g'", CONFIG)
    deadline = time.monotonic() + 1
    assert await asyncio.gather(*(session.ensure_coordinator(deadline) for _ in range(5))) == [7] * 5
    assert client.calls == 1 and session.coordinator_id == 7


async def test_retriable_lookup_failures_are_retried_then_time_out_naming_the_group() -> None:
    client = LookupClient(E.CoordinatorNotAvailableError(), E.CoordinatorLoadInProgressError(), 3)
    session = GroupSession(client, "g", "group 'g'", CONFIG)
    assert await session.ensure_coordinator(time.monotonic() + 1) == 3 and client.calls == 3
    session.coordinator_dead(E.NotCoordinatorError())
    assert session.coordinator_id is None
    client.outcomes = [E.CoordinatorNotAvailableError()]
    with pytest.raises(E.KafkaTimeoutError, match="group 'g'"):
        await session.ensure_coordinator(time.monotonic() + 0.05)


async def test_a_refused_lookup_is_raised_at_once() -> None:
    session = GroupSession(LookupClient(E.GroupAuthorizationFailedError()), "g", "group 'g'", CONFIG)
    with pytest.raises(E.GroupAuthorizationFailedError):
        await session.ensure_coordinator(time.monotonic() + 5)


async def test_close_ends_a_waiting_lookup_with_consumer_stopped() -> None:
    session = GroupSession(LookupClient(1, delay=10), "g", "group 'g'", CONFIG)
    waiter = asyncio.ensure_future(session.ensure_coordinator(time.monotonic() + 30))
    await asyncio.sleep(0.01)
    await session.close()
    with pytest.raises(E.ConsumerStoppedError):
        await waiter

"""The classic heartbeat's answers, sans-I/O: each error code leads to one call on its host (the group
coordinator), and the heartbeat never touches the host's state otherwise (HeartbeatHost). COORDINATOR_MOVED
and retriable errors are the shared driver's (heartbeat_driver.py): the host hears nothing of them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from aiokafka_lite import errors as Errors
from aiokafka_lite.consumer.heartbeat import ClassicHeartbeat
from aiokafka_lite.consumer.metrics import ConsumerMetrics


class Host:
    group_id = "g"

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def request_rejoin(self, reason: str) -> None:
        self.calls.append(("rejoin", reason))

    def member_error(self, code: int) -> None:
        self.calls.append(("member_error", code))

    def coordinator_dead(self, reason: BaseException) -> None:
        self.calls.append(("coordinator_dead", type(reason)))

    def fail(self, exc: BaseException) -> None:
        self.calls.append(("fail", type(exc)))

    def heartbeat_request(self) -> object:
        return object()  # a member of a generation


CONFIG = SimpleNamespace(heartbeat_interval_ms=100, max_poll_interval_ms=1000, request_timeout_ms=1000)


@pytest.mark.parametrize(("error", "call"), [
    (None, None),
    (Errors.RebalanceInProgressError, ("rejoin", "the group is rebalancing")),
    (Errors.IllegalGenerationError, ("member_error", Errors.IllegalGenerationError.errno)),
    (Errors.UnknownMemberIdError, ("member_error", Errors.UnknownMemberIdError.errno)),
    (Errors.FencedInstanceIdError, ("member_error", Errors.FencedInstanceIdError.errno)),
    (Errors.NotCoordinatorError, None),
    (Errors.CoordinatorNotAvailableError, None),
    (Errors.CoordinatorLoadInProgressError, None),
    (Errors.GroupAuthorizationFailedError, ("fail", Errors.GroupAuthorizationFailedError)),
])
async def test_each_answer_has_one_consequence(error: Any, call: Any) -> None:
    host = Host()
    hb = ClassicHeartbeat(host, client=None, config=CONFIG, metrics=ConsumerMetrics())  # type: ignore[arg-type]
    resp = SimpleNamespace(error_code=error.errno if error is not None else 0)
    await hb.answered(hb.on_response(resp), resp)
    assert host.calls == ([call] if call is not None else [])

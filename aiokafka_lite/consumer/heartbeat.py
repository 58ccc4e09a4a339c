"""The classic group's heartbeat strategy: what the shared :class:`~.heartbeat_driver.HeartbeatDriver`
sends for a classic member and what the answers mean.

The heartbeat runs beside the application, so that long processing between two poll() calls does not cost
the membership, and reports what it learns to the coordinator (rebalance started, generation over, fenced),
whose membership task acts on it. When poll() has not been called for max_poll_interval_ms it has the
coordinator leave the group, as the Java client does, so a stuck application does not hold its partitions
hostage. A classic Heartbeat carries no assignment: unlike the KIP-848 and share members there is nothing
to reconcile from its answers, only the rule of :func:`.group_rules.verdict` to follow.

The coordinator owns the membership state; this strategy reads and changes it only through the
:class:`HeartbeatHost` methods, never its attributes.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Protocol

from .. import errors as Errors
from ..protocol.messages.heartbeat import HeartbeatRequest
from . import cluster_view as cv
from .group_rules import Outcome, verdict
from .metrics import ConsumerMetrics

log = logging.getLogger("aiokafka_lite.consumer.coordinator")

__all__ = ["ClassicHeartbeat", "HeartbeatHost"]


class HeartbeatHost(Protocol):
    """What the classic heartbeat asks of the group coordinator."""

    group_id: str

    def heartbeat_request(self) -> HeartbeatRequest | None:
        """The heartbeat to send now: None while not a member with a generation (joining, or closed)."""

    def poll_overdue(self) -> bool:
        """poll() was not called for max_poll_interval_ms."""

    def request_rejoin(self, reason: str) -> None: ...

    def member_error(self, code: int) -> None: ...

    def fail(self, exc: BaseException) -> None: ...

    async def leave_after_poll_timeout(self) -> None:
        """poll() is overdue by max_poll_interval_ms: leave and give up the partitions."""


class ClassicHeartbeat:
    """The classic member for the heartbeat driver (its member and its strategy): Heartbeat every
    heartbeat_interval_ms while the host is a member of a generation."""

    def __init__(self, host: HeartbeatHost, client: cv.ConsumerClient, config: Any,
                 metrics: ConsumerMetrics) -> None:
        self._host = host
        self._client = client
        self._metrics = metrics
        #: The classic interval is the client's setting (a KIP-848 or share coordinator names its own).
        self.heartbeat_interval_ms: int | None = config.heartbeat_interval_ms
        self._request_timeout = config.request_timeout_ms / 1000.0
        #: The last answer came after a rebalance started: it says nothing about the new round.
        self._stale = False

    # -- the member: what to send, what an answer means ----------------------------------------------
    def wants_heartbeat(self) -> bool:
        return self._host.heartbeat_request() is not None

    def urgent(self) -> bool:
        return False

    def heartbeat_request(self) -> HeartbeatRequest | None:
        return self._host.heartbeat_request()

    def request_failed(self) -> None:
        pass  # a classic heartbeat says the same every time

    def on_response(self, resp: Any) -> Outcome:
        self._stale = self._host.heartbeat_request() is None  # a rebalance started while it was in flight
        if self._stale:
            return Outcome.NOTHING
        return verdict(resp.error_code, classic=True)

    # -- the strategy: what the driver asks of the protocol ------------------------------------------
    async def heartbeat_version(self, node: int) -> int:
        return await cv.api_version(self._client, node, HeartbeatRequest)

    def send_timeout(self, interval: float) -> float:
        return self._request_timeout

    def before_turn(self) -> None:
        pass

    def longest_idle(self) -> float:
        return float("inf")

    async def hold(self, now: float) -> bool:
        if not self._host.poll_overdue():
            return False
        await self._host.leave_after_poll_timeout()
        return True

    async def answered(self, outcome: Outcome, resp: Any) -> None:
        if self._stale:
            return
        self._metrics.heartbeats += 1
        self._metrics.last_heartbeat = time.monotonic()
        host = self._host
        if outcome is Outcome.REBALANCE:
            host.request_rejoin("the group is rebalancing")
        elif outcome is Outcome.LOST:
            host.member_error(resp.error_code)
        elif outcome is Outcome.FATAL:
            host.fail(Errors.for_code(resp.error_code)(f"heartbeat in group {host.group_id!r}"))

    def failed(self, exc: BaseException) -> bool:
        self._host.fail(exc)
        return True

"""The classic group's heartbeat: keeps the membership alive and notices when it ended.

It runs beside the application, so that long processing between two poll() calls does not cost the
membership, and reports what it learns to the coordinator (rebalance started, generation over, fenced),
whose membership task acts on it. When poll() has not been called for max_poll_interval_ms it has the
coordinator leave the group, as the Java client does, so a stuck application does not hold its
partitions hostage.

The coordinator owns the :class:`Heartbeat` and the membership state; the heartbeat reads and changes
that state only through the :class:`HeartbeatHost` methods, never its attributes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

from .. import errors as Errors
from ..protocol.messages.heartbeat import HeartbeatRequest
from . import cluster_view as cv
from .group_rules import membership_over
from .metrics import ConsumerMetrics

log = logging.getLogger("aiokafka_lite.consumer.coordinator")

__all__ = ["Heartbeat", "HeartbeatHost"]


class HeartbeatHost(Protocol):
    """What the heartbeat asks of the group coordinator."""

    group_id: str

    def heartbeat_request(self) -> HeartbeatRequest | None:
        """The heartbeat to send now: None while not a member with a generation (joining, or closed)."""

    def polled_at(self) -> float:
        """time.monotonic() of the application's last poll()."""

    async def ensure_coordinator(self, deadline: float) -> int: ...

    def coordinator_dead(self, reason: BaseException) -> None: ...

    def request_rejoin(self, reason: str) -> None: ...

    def member_error(self, code: int) -> None: ...

    def fail(self, exc: BaseException) -> None: ...

    async def leave_after_poll_timeout(self) -> None:
        """poll() is overdue by max_poll_interval_ms: leave and give up the partitions."""


class Heartbeat:
    """One task sending Heartbeat every heartbeat_interval_ms while the host is a member."""

    def __init__(self, host: HeartbeatHost, client: cv.ConsumerClient, config: Any,
                 metrics: ConsumerMetrics) -> None:
        self._host = host
        self._client = client
        self._metrics = metrics
        self._interval = config.heartbeat_interval_ms / 1000.0
        self._max_poll_interval = config.max_poll_interval_ms / 1000.0
        self._request_timeout = config.request_timeout_ms / 1000.0
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._loop(), name="aiokafka_lite-heartbeat")

    async def _loop(self) -> None:
        host = self._host
        try:
            while True:
                await asyncio.sleep(self._interval)
                if host.heartbeat_request() is None:
                    continue
                if time.monotonic() - host.polled_at() > self._max_poll_interval:
                    log.warning("group %r: poll() was not called for over %.0f s (max_poll_interval_ms); "
                                "leaving the group so its partitions go to a live member", host.group_id,
                                self._max_poll_interval)
                    await host.leave_after_poll_timeout()
                    continue
                await self._once()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            log.exception("group %r: heartbeat task failed", host.group_id)
            host.fail(exc)
            raise

    async def _once(self) -> None:
        host = self._host
        try:
            node = await host.ensure_coordinator(time.monotonic() + self._request_timeout)
            req = host.heartbeat_request()
            if req is None:
                return
            version = await cv.api_version(self._client, node, HeartbeatRequest)
            resp = await cv.send(self._client, node, req, version)
        except Errors.KafkaError as exc:
            if exc.retriable or isinstance(exc, Errors.KafkaConnectionError):
                host.coordinator_dead(exc)
                return
            raise
        if host.heartbeat_request() is None:
            return  # a rebalance started while the heartbeat was in flight
        self._metrics.heartbeats += 1
        self._metrics.last_heartbeat = time.monotonic()
        self._on_error(resp.error_code)

    def _on_error(self, code: int) -> None:
        if code == 0:
            return
        host = self._host
        err = Errors.for_code(code)
        if err is Errors.RebalanceInProgressError:
            host.request_rejoin("the group is rebalancing")
        elif membership_over(code):
            host.member_error(code)
        elif err.coordinator_moved:
            host.coordinator_dead(err())
        elif err is not Errors.CoordinatorLoadInProgressError:
            host.fail(err(f"heartbeat in group {host.group_id!r}"))

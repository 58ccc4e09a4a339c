"""The share group driver: finds the coordinator and keeps ShareGroupHeartbeat going for one member.

The heartbeat task (the :class:`~.heartbeat_driver.HeartbeatDriver` the KIP-848 member uses too) sends what
:class:`~.share_member.ShareGroupMember` builds, at the interval the coordinator asks for (at once when
joining or after a subscription change); this driver turns its assignments (topic ids) into partitions for
the fetcher. Its failures reach the application through ``poll()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from .. import errors as Errors
from ..net import run_with_timeout
from ..protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from ..structs import TopicPartition
from . import cluster_view as cv
from .group_rules import Outcome
from .heartbeat_driver import HeartbeatDriver, heartbeat_version
from .share_member import ShareGroupMember

log = logging.getLogger(__name__)

#: Until the coordinator names its interval (Kafka's group.share.heartbeat.interval.ms default).
_DEFAULT_INTERVAL = 5.0


class ShareGroupDriver:
    """Membership of one share group member: coordinator, heartbeats, assignment, leave."""

    def __init__(self, client: Any, member: ShareGroupMember, config: Any,
                 on_assignment: Callable[[set[TopicPartition]], None]) -> None:
        self._client = client
        self.member = member
        self._on_assignment = on_assignment
        self._retry_backoff = config.retry_backoff_ms / 1000.0
        self._request_timeout = config.request_timeout_ms / 1000.0
        self.coordinator: int | None = None
        self._driver = HeartbeatDriver(self, member, client, config, f"share group {member.group_id!r}",
                                       _DEFAULT_INTERVAL)
        self._task: asyncio.Task[None] | None = None
        self.failure: BaseException | None = None
        self._closed = False
        #: The assignment names topics metadata does not know yet: publish again once it does.
        self._unresolved = False

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._driver.run(),
                                                                name="aiokafka_lite-share-heartbeat")

    def wake(self) -> None:
        self._driver.wake()

    async def find_coordinator(self, deadline: float) -> int:
        if self.coordinator is None:
            try:
                self.coordinator = await run_with_timeout(
                    cv.find_coordinator(self._client, self.member.group_id),
                    max(0.001, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                raise Errors.KafkaTimeoutError(
                    f"no coordinator found for share group {self.member.group_id!r}") from None
        return self.coordinator

    async def heartbeat_version(self, node: int) -> int:
        """The ShareGroupHeartbeat version the coordinator speaks; a clear error if it speaks none."""
        return await heartbeat_version(
            self._client, node, ShareGroupHeartbeatRequest, f"share group {self.member.group_id!r}",
            "ShareConsumer needs ShareGroupHeartbeat v1 (KIP-932 share groups, Kafka 4.1 or later)")

    # -- what the heartbeat driver asks ------------------------------------------------------------------
    def is_closed(self) -> bool:
        return self._closed

    async def ensure_coordinator(self, deadline: float) -> int:
        return await self.find_coordinator(deadline)

    def coordinator_dead(self, reason: BaseException) -> None:
        if self.coordinator is not None:
            cv.close_connection(self._client, self.coordinator, ShareGroupHeartbeatRequest)
        self.coordinator = None

    def send_timeout(self, interval: float) -> float:
        return self._request_timeout

    def before_turn(self) -> None:
        if self._unresolved:
            self._publish()

    def longest_idle(self) -> float:
        return self._retry_backoff if self._unresolved else float("inf")

    async def hold(self, now: float) -> bool:
        return False

    async def answered(self, outcome: Outcome, resp: Any) -> None:
        m = self.member
        if outcome is Outcome.ASSIGNED:
            self._publish()
        elif outcome is Outcome.REJOIN:
            log.info("share group %r: member %s %s; rejoining", m.group_id, m.member_id,
                     Errors.for_code(resp.error_code).message)
        elif outcome is Outcome.FATAL and m.fatal_error is not None:
            raise m.fatal_error

    def failed(self, exc: BaseException) -> bool:
        self.failure = exc
        return False

    def _publish(self) -> None:
        """Hand the fetcher the assigned partitions whose topic names metadata knows (asking for more)."""
        tps: set[TopicPartition] = set()
        unknown = False
        for tid, parts in self.member.assignment.items():
            name = cv.topic_name(self._client, tid)
            if name is None:
                unknown = True
                continue
            tps.update(TopicPartition(name, p) for p in parts)
        if unknown:
            cv.request_metadata_update(self._client)
        self._unresolved = unknown
        self._on_assignment(tps)

    async def close(self) -> None:
        """Leave the group (epoch -1); the coordinator hands what this member had to the others."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        req = self.member.leave_request()
        if req is None:
            return
        try:
            node = await self.find_coordinator(time.monotonic() + self._request_timeout)
            version = await self.heartbeat_version(node)
            await cv.send(self._client, node, req, version, timeout_ms=self._request_timeout * 1000)
        except Errors.KafkaError as exc:
            log.info("share group %r: leave heartbeat failed (%s); the session will expire instead",
                     self.member.group_id, exc)

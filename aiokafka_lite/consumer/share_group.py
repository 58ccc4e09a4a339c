"""The share group driver: finds the coordinator and keeps ShareGroupHeartbeat going for one member.

The heartbeat task sends what :class:`~.share_member.ShareGroupMember` builds, at the interval the
coordinator asks for (at once when joining or after a subscription change), and turns its assignments
(topic ids) into partitions for the fetcher. Its failures reach the application through ``poll()``.
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
from .share_member import Outcome, ShareGroupMember

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
        self._wake = asyncio.Event()
        self._next = 0.0
        self._task: asyncio.Task[None] | None = None
        self.failure: BaseException | None = None
        self._closed = False
        #: The assignment names topics metadata does not know yet: publish again once it does.
        self._unresolved = False

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(),
                                                                name="aiokafka_lite-share-heartbeat")

    def wake(self) -> None:
        self._wake.set()

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
        try:
            return await cv.api_version(self._client, node, ShareGroupHeartbeatRequest)
        except Errors.UnsupportedVersionError as exc:
            raise Errors.UnsupportedVersionError(
                f"ShareConsumer needs ShareGroupHeartbeat v1 (KIP-932 share groups, Kafka 4.1 or later), "
                f"but the coordinator of share group {self.member.group_id!r}, "
                f"{cv.node_name(self._client, node)}, does not offer it ({exc})") from None

    def _coordinator_dead(self) -> None:
        if self.coordinator is not None:
            cv.close_connection(self._client, self.coordinator, ShareGroupHeartbeatRequest)
        self.coordinator = None

    async def _loop(self) -> None:
        try:
            while not self._closed:
                self._wake.clear()
                m = self.member
                now = time.monotonic()
                if self._unresolved:
                    self._publish()
                if not m.wants_heartbeat():
                    await self._sleep(_DEFAULT_INTERVAL)
                elif not m.urgent() and now < self._next:
                    await self._sleep(min(self._next - now, self._retry_backoff if self._unresolved else 1e9))
                else:
                    await self._heartbeat_once()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            log.error("share group %r: heartbeat task failed: %r", self.member.group_id, exc)
            self.failure = exc

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await run_with_timeout(self._wake.wait(), max(0.0, seconds))

    async def _heartbeat_once(self) -> None:
        m = self.member
        interval = (m.heartbeat_interval_ms or _DEFAULT_INTERVAL * 1000) / 1000.0
        sent = False
        try:
            node = await self.find_coordinator(time.monotonic() + self._request_timeout)
            version = await self.heartbeat_version(node)
            req = m.heartbeat_request()
            sent = True
            self._next = time.monotonic() + interval
            resp = await cv.send(self._client, node, req, version, timeout_ms=self._request_timeout * 1000)
        except Errors.UnsupportedVersionError:
            raise
        except Errors.KafkaError as exc:
            if not (exc.retriable or isinstance(exc, Errors.KafkaConnectionError)):
                raise
            if sent:
                m.request_failed()
            self._coordinator_dead()
            await asyncio.sleep(self._retry_backoff)
            self._next = 0.0
            return
        if self._closed:
            return
        outcome = m.on_response(resp)
        if m.heartbeat_interval_ms:
            self._next = min(self._next, time.monotonic() + m.heartbeat_interval_ms / 1000)
        if outcome is Outcome.ASSIGNED:
            self._publish()
        elif outcome is Outcome.REJOIN:
            log.info("share group %r: member %s %s; rejoining", m.group_id, m.member_id,
                     Errors.for_code(resp.error_code).message)
        elif outcome is Outcome.COORDINATOR_MOVED:
            self._coordinator_dead()
            await asyncio.sleep(self._retry_backoff)
            self._next = 0.0
        elif outcome is Outcome.RETRY:
            await asyncio.sleep(self._retry_backoff)
            self._next = 0.0
        elif outcome is Outcome.FATAL and m.fatal_error is not None:
            raise m.fatal_error

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

"""The share group driver: finds the coordinator and keeps ShareGroupHeartbeat going for one member.

The heartbeat task (the :class:`~.heartbeat_driver.HeartbeatDriver` every group member uses, run by its
:class:`~.group_session.GroupSession`, which also finds the coordinator and sends the leave) sends what
:class:`~.share_member.ShareGroupMember` builds, at the interval the coordinator asks for (at once when
joining or after a subscription change); this driver turns its assignments (topic ids) into partitions for
the fetcher. Its failures reach the application through ``poll()``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from .. import errors as Errors
from ..protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from ..structs import TopicPartition
from . import cluster_view as cv
from .group_rules import Outcome
from .group_session import GroupSession
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
        self._request_timeout = config.request_timeout_ms / 1000.0
        #: An answer that will never come must not hold the next heartbeat: a coordinator found unusable
        #: has its heartbeat connection closed.
        self.session = GroupSession(client, member.group_id, f"share group {member.group_id!r}", config,
                                    close_on_dead=ShareGroupHeartbeatRequest)
        self._driver = HeartbeatDriver(self.session, self, member, client, config, _DEFAULT_INTERVAL)
        self.failure: BaseException | None = None
        #: The assignment names topics metadata does not know yet: publish again once it does.
        self._unresolved = False

    def start(self) -> None:
        self.session.start_heartbeat(self._driver.run, "aiokafka_lite-share-heartbeat")

    def wake(self) -> None:
        self._driver.wake()

    async def find_coordinator(self, deadline: float) -> int:
        return await self.session.ensure_coordinator(deadline)

    async def heartbeat_version(self, node: int) -> int:
        """The ShareGroupHeartbeat version the coordinator speaks; a clear error if it speaks none."""
        return await heartbeat_version(
            self._client, node, ShareGroupHeartbeatRequest, f"share group {self.member.group_id!r}",
            "ShareConsumer needs ShareGroupHeartbeat v1 (KIP-932 share groups, Kafka 4.1 or later)")

    # -- what the heartbeat driver asks ------------------------------------------------------------------
    def send_timeout(self, interval: float) -> float:
        return self._request_timeout

    def before_turn(self) -> None:
        if self._unresolved:
            self._publish()

    def longest_idle(self) -> float:
        return self.session.backoff.initial if self._unresolved else float("inf")

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
        await self.session.stop_heartbeat()
        req = self.member.leave_request()
        try:
            if req is not None:
                await self.session.leave(ShareGroupHeartbeatRequest, lambda _version: req,
                                         time.monotonic() + self._request_timeout, self.heartbeat_version)
        finally:
            await self.session.close()

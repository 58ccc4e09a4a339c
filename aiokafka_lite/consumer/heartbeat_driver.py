"""The heartbeat driver the KIP-848 and share group members share: one task that sends what a sans-I/O
member builds (:mod:`.member848`, :mod:`.share_member`) at the interval the coordinator names (at once when
the member says it is urgent), feeds the answers back, and handles what every protocol handles alike:
transport failures (find the coordinator again, say everything again), COORDINATOR_MOVED and retriable
errors (back off, then heartbeat at once). What differs is the host's (:class:`HeartbeatDriverHost`): how
it finds the coordinator and names the protocol's version, what it waits for first (a poll deadline, a
leave in flight), and what it does with the other outcomes (reconcile, lose partitions, publish an
assignment, fail). The classic protocol's heartbeat (:mod:`.heartbeat`) carries no assignment and stays
separate; all three share the fenced rule (:mod:`.group_rules`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, Protocol

from .. import errors as Errors
from ..net import run_with_timeout
from . import cluster_view as cv
from .group_rules import Outcome

log = logging.getLogger(__name__)

__all__ = ["HeartbeatDriver", "HeartbeatDriverHost", "HeartbeatMember", "heartbeat_version"]


async def heartbeat_version(client: Any, node: int, request: type, group: str, needs: str,
                            advice: str = "") -> int:
    """The heartbeat's version on ``node``; a coordinator without it is named in the error, with what the
    protocol ``needs``."""
    try:
        return await cv.api_version(client, node, request)
    except Errors.UnsupportedVersionError as exc:
        raise Errors.UnsupportedVersionError(
            f"{needs}, but the coordinator of {group}, {cv.node_name(client, node)}, does not offer it "
            f"({exc}){advice}") from None


class HeartbeatMember(Protocol):
    """The protocol's sans-I/O member: what to send and what an answer means."""

    heartbeat_interval_ms: int | None

    def wants_heartbeat(self) -> bool: ...

    def urgent(self) -> bool: ...

    def heartbeat_request(self) -> Any: ...

    def request_failed(self) -> None: ...

    def on_response(self, resp: Any) -> Outcome: ...


class HeartbeatDriverHost(Protocol):
    """What the driver asks of the group it heartbeats for (the KIP-848 coordinator, the share driver)."""

    def is_closed(self) -> bool: ...

    async def ensure_coordinator(self, deadline: float) -> int:
        """The coordinator's node id, found if unknown."""

    def coordinator_dead(self, reason: BaseException) -> None: ...

    async def heartbeat_version(self, node: int) -> int:
        """The heartbeat's version on ``node``; UnsupportedVersionError, clearly worded, if it has none."""

    def send_timeout(self, interval: float) -> float:
        """How long one heartbeat may take, in seconds."""

    def before_turn(self) -> None:
        """At the top of every turn (the share driver publishes an assignment metadata now resolves)."""

    def longest_idle(self) -> float:
        """The longest sleep until the next interval before looking again."""

    async def hold(self, now: float) -> bool:
        """Work to do instead of this heartbeat (a poll deadline, a leave first): True when it did some."""

    async def answered(self, outcome: Outcome, resp: Any) -> None:
        """An answer the member read: act on LOST, RECONCILE and FATAL, count it, log its error."""

    def failed(self, exc: BaseException) -> bool:
        """The task failed with ``exc``: record it for the application; True to end the task with it."""


class HeartbeatDriver:
    """The one heartbeat loop of a KIP-848 or share member."""

    def __init__(self, host: HeartbeatDriverHost, member: HeartbeatMember, client: Any, config: Any,
                 name: str, default_interval: float) -> None:
        self._host, self._member, self._client, self._name = host, member, client, name
        self._request_timeout = config.request_timeout_ms / 1000.0
        self._retry_backoff = config.retry_backoff_ms / 1000.0
        #: Until the coordinator names its interval (its first answer).
        self._default_interval = default_interval
        self._wake = asyncio.Event()
        #: time.monotonic() when the next heartbeat is due (0: at once).
        self.next = 0.0

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        host, m = self._host, self._member
        try:
            while not host.is_closed():
                self._wake.clear()
                host.before_turn()
                if not m.wants_heartbeat():
                    await self._sleep(self._default_interval)
                    continue
                now = time.monotonic()
                if not m.urgent() and now < self.next:
                    await self._sleep(min(self.next - now, host.longest_idle()))
                    continue
                if await host.hold(now):
                    continue
                await self.once()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            log.error("%s: heartbeat task failed: %r", self._name, exc)
            if host.failed(exc):
                raise

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await run_with_timeout(self._wake.wait(), max(0.0, seconds))

    async def _backoff(self) -> None:
        await asyncio.sleep(self._retry_backoff)
        self.next = 0.0

    async def once(self) -> None:
        """One heartbeat and what its answer means."""
        host, m = self._host, self._member
        interval = (m.heartbeat_interval_ms or self._default_interval * 1000) / 1000.0
        sent = False
        try:
            node = await host.ensure_coordinator(time.monotonic() + self._request_timeout)
            version = await host.heartbeat_version(node)
            req = m.heartbeat_request()
            sent = True
            self.next = time.monotonic() + interval
            resp = await cv.send(self._client, node, req, version,
                                 timeout_ms=host.send_timeout(interval) * 1000)
        except Errors.UnsupportedVersionError:
            raise
        except Errors.KafkaError as exc:
            if not (exc.retriable or isinstance(exc, Errors.KafkaConnectionError)):
                raise
            if sent:
                m.request_failed()
            host.coordinator_dead(exc)
            await self._backoff()
            return
        if host.is_closed():
            return
        outcome = m.on_response(resp)
        if m.heartbeat_interval_ms:  # the first answer names the interval the coordinator wants
            self.next = min(self.next, time.monotonic() + m.heartbeat_interval_ms / 1000)
        await host.answered(outcome, resp)
        if outcome is Outcome.COORDINATOR_MOVED:
            host.coordinator_dead(Errors.for_code(resp.error_code)())
            await self._backoff()
        elif outcome is Outcome.RETRY:
            await self._backoff()

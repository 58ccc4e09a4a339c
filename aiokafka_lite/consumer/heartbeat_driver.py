"""The one heartbeat driver of every group member (classic, KIP-848, share): one task that sends what the
protocol's member builds (:mod:`.heartbeat` for the classic member, :mod:`.member848`, :mod:`.share_member`)
at the interval it names (at once when the member says it is urgent), feeds the answers back, and handles
what every protocol handles alike: transport failures (find the coordinator again, say everything again),
COORDINATOR_MOVED and retriable errors (back off, then heartbeat at once). The coordinator comes from the
member's :class:`~.group_session.GroupSession`; what differs is the protocol's strategy
(:class:`HeartbeatStrategy`): how it names the protocol's version, what it waits for first (a poll deadline,
a leave in flight), and what it does with the other outcomes (rejoin, lose partitions, reconcile, publish
an assignment, fail). All three read an answer's error through one rule (:func:`.group_rules.verdict`).
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
from .group_session import GroupSession

log = logging.getLogger(__name__)

__all__ = ["HeartbeatDriver", "HeartbeatMember", "HeartbeatStrategy", "heartbeat_version"]


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

    def heartbeat_request(self) -> Any:
        """The next heartbeat; None when the member stopped wanting one meanwhile (a classic rebalance)."""

    def request_failed(self) -> None: ...

    def on_response(self, resp: Any) -> Outcome: ...


class HeartbeatStrategy(Protocol):
    """What the driver asks of the protocol it heartbeats for (the classic, KIP-848 and share members)."""

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
        """An answer the member read: act on LOST, RECONCILE, REBALANCE and FATAL, count it, log its error."""

    def failed(self, exc: BaseException) -> bool:
        """The task failed with ``exc``: record it for the application; True to end the task with it."""


class HeartbeatDriver:
    """The one heartbeat loop of a group member, whatever its protocol."""

    def __init__(self, session: GroupSession, strategy: HeartbeatStrategy, member: HeartbeatMember,
                 client: Any, config: Any, default_interval: float) -> None:
        self._session, self._host, self._member, self._client = session, strategy, member, client
        self._request_timeout = config.request_timeout_ms / 1000.0
        #: Until the coordinator names its interval (its first answer).
        self._default_interval = default_interval
        self._wake = asyncio.Event()
        #: Heartbeats in a row that failed or were answered "retry" (the backoff grows with them).
        self._failures = 0
        #: time.monotonic() when the next heartbeat is due (0: at once).
        self.next = 0.0

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        session, host, m = self._session, self._host, self._member
        try:
            while not session.closed:
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
            log.error("%s: heartbeat task failed: %r", session.label, exc)
            if host.failed(exc):
                raise

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await run_with_timeout(self._wake.wait(), max(0.0, seconds))

    async def _backoff(self) -> None:
        self._failures += 1
        await asyncio.sleep(self._session.backoff.delay(self._failures))
        self.next = 0.0

    async def once(self) -> None:
        """One heartbeat and what its answer means."""
        session, host, m = self._session, self._host, self._member
        interval = (m.heartbeat_interval_ms or self._default_interval * 1000) / 1000.0
        sent = False
        try:
            node = await session.ensure_coordinator(time.monotonic() + self._request_timeout)
            version = await host.heartbeat_version(node)
            req = m.heartbeat_request()
            if req is None:
                return  # the member stopped wanting it meanwhile (a classic rebalance started)
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
            session.coordinator_dead(exc)
            await self._backoff()
            return
        if session.closed:
            return
        outcome = m.on_response(resp)
        if m.heartbeat_interval_ms:  # the first answer names the interval the coordinator wants
            self.next = min(self.next, time.monotonic() + m.heartbeat_interval_ms / 1000)
        await host.answered(outcome, resp)
        if outcome is Outcome.COORDINATOR_MOVED:
            session.coordinator_dead(Errors.for_code(resp.error_code)())
            await self._backoff()
        elif outcome is Outcome.RETRY:
            await self._backoff()
        else:
            self._failures = 0

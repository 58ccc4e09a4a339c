"""The group session: what a member of any group protocol (classic, KIP-848, share) needs of its group,
written once. It finds the coordinator (one lookup shared by every caller that waits for it: heartbeats,
joins, commits, the leave), forgets it when it moved or its connection broke, runs the protocol's
:class:`~.heartbeat_driver.HeartbeatDriver` as one task, and sends the leave. What differs between the
protocols is a small strategy each (:mod:`.heartbeat` for the classic member, :mod:`.group848`,
:mod:`.share_group`): what a heartbeat says and what its answer means.

Its retries back off on the one helper, :mod:`aiokafka_lite.net.retry` (retry_backoff_ms doubling up to
retry_backoff_max_ms, with jitter).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from .. import errors as Errors
from .._tasks import cancel_and_wait
from ..net import run_with_timeout
from ..net.retry import ExponentialBackoff, Retry
from . import cluster_view as cv

log = logging.getLogger(__name__)

__all__ = ["GroupSession"]


class GroupSession:
    """One member's link to its group's coordinator: discovery, the heartbeat task, the leave."""

    def __init__(self, client: Any, group_id: str, label: str, config: Any,
                 close_on_dead: type | None = None) -> None:
        self._client = client
        self.group_id = group_id
        #: How errors and logs name the group ("group 'g'", "share group 'g'").
        self.label = label
        self._request_timeout = config.request_timeout_ms / 1000.0
        #: The one backoff between retries of every group request (net/retry.py).
        self.backoff = ExponentialBackoff(config.retry_backoff_ms,
                                          getattr(config, "retry_backoff_max_ms", config.retry_backoff_ms))
        #: A request class whose connection is closed when the coordinator is found unusable (the share
        #: member's heartbeat: an answer that will never come must not hold the next one).
        self._close_on_dead = close_on_dead
        self.coordinator_id: int | None = None
        self._lookup: asyncio.Task[int] | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        #: Set by close(): nothing of this membership runs after it.
        self.closed = False

    # -- the coordinator ------------------------------------------------------------------------------
    async def ensure_coordinator(self, deadline: float) -> int:
        """The coordinator's node id, looked up (once for all concurrent callers) when unknown; retriable
        failures are retried with backoff until ``deadline``, then KafkaTimeoutError."""
        retry: Retry | None = None
        while self.coordinator_id is None:
            if self._lookup is None or self._lookup.done():
                self._lookup = asyncio.get_running_loop().create_task(
                    cv.find_coordinator(self._client, self.group_id), name="aiokafka_lite-find-coordinator")
            lookup = self._lookup
            left = deadline - time.monotonic()
            if left <= 0:
                raise Errors.KafkaTimeoutError(f"no coordinator found for {self.label}")
            try:
                node = await run_with_timeout(asyncio.shield(lookup), left)
            except asyncio.CancelledError:
                if self.closed and lookup.cancelled():  # close() stopped the shared lookup, not our caller
                    raise Errors.ConsumerStoppedError("the consumer is stopped") from None
                raise
            except asyncio.TimeoutError:
                raise Errors.KafkaTimeoutError(f"no coordinator found for {self.label}") from None
            except Errors.KafkaError as exc:
                if not (exc.retriable or exc.coordinator_moved):
                    raise
                log.debug("finding the coordinator of %s: %s", self.label, exc)
                if retry is None:
                    retry = Retry(f"FindCoordinator for {self.label}", left, self.backoff, wait_out=True)
                if not await retry.pause():
                    raise Errors.KafkaTimeoutError(f"no coordinator found for {self.label}") from exc
                continue
            self.coordinator_id = node
        return self.coordinator_id

    def coordinator_dead(self, reason: BaseException) -> None:
        """The coordinator moved or its connection failed: the next request looks it up again."""
        node = self.coordinator_id
        if node is None:
            return
        log.info("%s: coordinator %s unusable (%s); looking it up again", self.label, node, reason)
        if self._close_on_dead is not None:
            cv.close_connection(self._client, node, self._close_on_dead)
        self.coordinator_id = None

    # -- the heartbeat task ---------------------------------------------------------------------------
    def start_heartbeat(self, run: Callable[[], Awaitable[None]], name: str) -> asyncio.Task[None]:
        """Start the heartbeat task (once)."""
        if self._heartbeat is None:
            self._heartbeat = asyncio.get_running_loop().create_task(run(), name=name)  # type: ignore[arg-type]
        return self._heartbeat

    @property
    def heartbeat_task(self) -> asyncio.Task[None] | None:
        return self._heartbeat

    async def stop_heartbeat(self) -> None:
        """End the heartbeat task and wait for it (nothing may heartbeat after the leave); its failure was
        reported to the application already."""
        await cancel_and_wait(self._heartbeat, quiet=True)

    # -- the leave ------------------------------------------------------------------------------------
    async def leave(self, request_cls: type, build: Callable[[int], Any], deadline: float,
                    version_of: Callable[[int], Awaitable[int]] | None = None) -> bool:
        """Send the leave (``build(version)``) to the coordinator, found within ``deadline`` if unknown.
        False when it failed: the coordinator then drops the member when its session expires."""
        try:
            node = self.coordinator_id
            if node is None:
                node = await self.ensure_coordinator(deadline)
            if version_of is not None:
                version = await version_of(node)
            else:
                version = await cv.api_version(self._client, node, request_cls)
            await cv.send(self._client, node, build(version), version,
                          timeout_ms=max(100.0, (deadline - time.monotonic()) * 1000))
        except Errors.KafkaError as exc:
            log.info("%s: leaving failed (%s); the session will expire instead", self.label, exc)
            return False
        return True

    async def close(self) -> None:
        """Stop the heartbeat and any coordinator lookup; what is in flight ends here."""
        self.closed = True
        await cancel_and_wait(self._heartbeat, self._lookup, quiet=True)

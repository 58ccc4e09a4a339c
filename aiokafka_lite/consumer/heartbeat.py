"""The group heartbeat task: keeps the membership alive and notices when it ended.

It runs beside the application, so that long processing between two poll() calls does not cost the
membership, and reports what it learns to the coordinator (rebalance started, generation over, fenced),
which acts on it in the next poll(). When poll() has not been called for max_poll_interval_ms it leaves
the group, as the Java client does, so a stuck application does not hold its partitions hostage.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from .. import errors as Errors
from ..protocol.messages.heartbeat import HeartbeatRequest
from . import cluster_view as cv

if TYPE_CHECKING:
    from .coordinator import GroupCoordinator

log = logging.getLogger("aiokafka_lite.consumer.coordinator")



async def heartbeat_loop(m: GroupCoordinator) -> None:
    """Heartbeat every heartbeat_interval_ms while a member; leave when poll() is overdue."""
    try:
        while not m._closed:
            await asyncio.sleep(m._heartbeat_interval)
            if not m._subs.partitions_auto_assigned or not m._heartbeat_due():
                continue
            if time.monotonic() - m._last_poll > m._max_poll_interval:
                await _poll_timeout(m)
                continue
            await _heartbeat_once(m)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        log.exception("group %r: heartbeat task failed", m.group_id)
        m._fail(exc)
        raise


async def _heartbeat_once(m: GroupCoordinator) -> None:
    try:
        node = await m.ensure_coordinator(time.monotonic() + m._request_timeout)
        req = HeartbeatRequest(group_id=m.group_id, generation_id=m.generation,
                               member_id=m.member_id, group_instance_id=m.group_instance_id)
        version = await cv.api_version(m._client, node, HeartbeatRequest)
        resp = await cv.send(m._client, node, req, version)
    except Errors.KafkaError as exc:
        if exc.retriable or isinstance(exc, Errors.KafkaConnectionError):
            m.coordinator_dead(exc)
            return
        raise
    if not m._heartbeat_due():
        return  # a rebalance started while the heartbeat was in flight
    code = resp.error_code
    m.metrics.heartbeats += 1
    m.metrics.last_heartbeat = time.monotonic()
    if code == 0:
        return
    if code == Errors.RebalanceInProgressError.errno:
        m.request_rejoin("the group is rebalancing")
    elif code in (Errors.IllegalGenerationError.errno, Errors.UnknownMemberIdError.errno,
                  Errors.FencedInstanceIdError.errno):
        m.member_error(code)
    elif Errors.coordinator_moved(code):
        m.coordinator_dead(Errors.for_code(code)())
    elif code == Errors.CoordinatorLoadInProgressError.errno:
        return
    else:
        m._fail(Errors.for_code(code)(f"heartbeat in group {m.group_id!r}"))


async def _poll_timeout(m: GroupCoordinator) -> None:
    """The application did not call poll() within max_poll_interval_ms: leave, as Java does."""
    log.warning("group %r: poll() was not called for over %.0f s (max_poll_interval_ms); leaving the "
                "group so its partitions go to a live member", m.group_id, m._max_poll_interval)
    await m._maybe_leave_group("consumer poll timeout has expired",
                                  time.monotonic() + m._request_timeout)
    m.generation = -1
    if m.group_instance_id is None:
        m.member_id = ""
    m._lost |= m._subs.assigned_partitions()
    m.request_rejoin("poll timeout expired")

"""Rules every group member (classic, KIP-848, share) follows, written once.

The fenced rule: an answer saying the coordinator no longer knows this member at this generation or epoch
ends the membership. What the member owned is *lost*, not revoked (another member may own it already, so
nothing is committed for it), and the member rejoins; for a static member replaced by another with its
group_instance_id the classic coordinator then fails the consumer
(:meth:`.coordinator.ClassicProtocol.member_error`). Which codes say so depends on the protocol:

* classic (Heartbeat, and OffsetCommit in classic and KIP-848 groups): UNKNOWN_MEMBER_ID,
  ILLEGAL_GENERATION, FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID (:func:`membership_over`);
* KIP-848 and share heartbeats: exactly the errors flagged ``member_fenced`` (UNKNOWN_MEMBER_ID,
  FENCED_MEMBER_EPOCH); every other error there, FENCED_INSTANCE_ID included, is fatal, as in Java's
  HeartbeatRequestManager.

:func:`verdict` reads every heartbeat's error code (all three protocols) through that rule.
"""

from __future__ import annotations

import base64
import enum
import uuid
from typing import Any, TypeVar

from .. import errors as Errors
from .._state import Stateful, StateMachine

__all__ = ["JOIN_EPOCH", "LEAVE_EPOCH", "EpochMember", "Outcome", "membership_over", "new_member_id",
           "verdict"]

S = TypeVar("S", bound=enum.Enum)

JOIN_EPOCH = 0
LEAVE_EPOCH = -1


class Outcome(enum.Enum):
    """What a heartbeat's answer asks of the driver (:mod:`.heartbeat_driver`)."""

    NOTHING = "nothing"
    RECONCILE = "reconcile"  # a new target assignment: the driver applies it
    LOST = "lost"  # fenced: give up every owned partition as lost (a share member has none), then rejoin
    REBALANCE = "rebalance"  # classic: the group is rebalancing; rejoin, keeping the partitions until then
    COORDINATOR_MOVED = "coordinator_moved"  # find the coordinator again, then heartbeat at once
    RETRY = "retry"  # heartbeat again after the retry backoff
    FATAL = "fatal"  # an error no retry fixes: the application gets it
    # The share member's names for the same outcomes (nothing there is revoked or reconciled):
    ASSIGNED = "reconcile"  # the assignment changed: fetch from the new partitions
    REJOIN = "lost"  # fenced or unknown: heartbeat again at once, at epoch 0

_GENERATION_OVER = frozenset({Errors.IllegalGenerationError.errno, Errors.FencedInstanceIdError.errno})


def membership_over(code: int) -> bool:
    """True when a classic answer's error code says this member's generation or epoch is over (fenced)."""
    return bool(code) and (code in _GENERATION_OVER or Errors.for_code(code).member_fenced)


def verdict(code: int, *, classic: bool = False) -> Outcome:
    """What a heartbeat answered with error ``code`` asks (0: nothing), by the protocol's fenced rule."""
    if not code:
        return Outcome.NOTHING
    err = Errors.for_code(code)
    if membership_over(code) if classic else err.member_fenced:
        return Outcome.LOST
    if err.coordinator_moved:
        return Outcome.COORDINATOR_MOVED
    if classic and err is Errors.RebalanceInProgressError:
        return Outcome.REBALANCE
    if err.retriable:
        return Outcome.RETRY
    return Outcome.FATAL


def new_member_id() -> str:
    """A random member id, 22 URL-safe base64 characters of a UUID (as the Java client makes them)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


class EpochMember(Stateful[S]):
    """What a KIP-848 member and a share member both are to their coordinator: a member id the client
    makes (KIP-1082) and keeps for its life, across fencing and rejoins; the epoch and the heartbeat
    interval the coordinator's answers give; the error that ended it (FATAL). Each protocol's member adds
    its own state table and what its heartbeats carry."""

    def __init__(self, group_id: str, rack_id: str | None, member_id: str | None,
                 machine: StateMachine[S]) -> None:
        self.group_id = group_id
        self.rack_id = rack_id
        self.member_id = member_id or new_member_id()
        self.epoch = JOIN_EPOCH
        self._sm = machine
        #: The coordinator's heartbeat interval (ms) from its last answer; None before one.
        self.heartbeat_interval_ms: int | None = None
        self.fatal_error: Errors.KafkaError | None = None

    def _accepted(self, resp: Any) -> None:
        """An answer without error: the epoch it gives, and the interval the coordinator wants."""
        self.epoch = resp.member_epoch
        if resp.heartbeat_interval_ms > 0:
            self.heartbeat_interval_ms = resp.heartbeat_interval_ms

"""Rules every group member (classic, KIP-848, share) follows, written once.

The fenced rule: an answer saying the coordinator no longer knows this member at this generation or epoch
ends the membership. What the member owned is *lost*, not revoked (another member may own it already, so
nothing is committed for it), and the member rejoins; for a static member replaced by another with its
group_instance_id the classic coordinator then fails the consumer
(:meth:`.coordinator.GroupCoordinator.member_error`). Which codes say so depends on the protocol:

* classic (Heartbeat, and OffsetCommit in classic and KIP-848 groups): UNKNOWN_MEMBER_ID,
  ILLEGAL_GENERATION, FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID (:func:`membership_over`);
* KIP-848 and share heartbeats: exactly the errors flagged ``member_fenced`` (UNKNOWN_MEMBER_ID,
  FENCED_MEMBER_EPOCH); every other error there, FENCED_INSTANCE_ID included, is fatal, as in Java's
  HeartbeatRequestManager.

:func:`verdict` reads every heartbeat's error code (all three protocols) through that rule.
"""

from __future__ import annotations

import enum

from .. import errors as Errors

__all__ = ["Outcome", "membership_over", "verdict"]


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

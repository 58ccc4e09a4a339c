"""Rules every group member (classic, KIP-848, share) follows, written once.

The fenced rule: an answer saying the coordinator no longer knows this member at this generation or epoch
(UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID) ends the membership. What
the member owned is *lost*, not revoked (another member may own it already, so nothing is committed for
it), and the member rejoins; for a static member replaced by another with its group_instance_id the
coordinator then fails the consumer (:meth:`.coordinator.GroupCoordinator.member_error`). The classic
heartbeat and the committer (classic and KIP-848 groups) ask :func:`membership_over`. A KIP-848 or share
heartbeat is fenced by exactly the errors flagged ``member_fenced`` (UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH);
every other error there, FENCED_INSTANCE_ID included, is fatal, as in Java's HeartbeatRequestManager.
"""

from __future__ import annotations

import enum

from .. import errors as Errors

__all__ = ["Outcome", "membership_over"]


class Outcome(enum.Enum):
    """What a KIP-848 or share heartbeat's answer asks of the driver (:mod:`.heartbeat_driver`)."""

    NOTHING = "nothing"
    RECONCILE = "reconcile"  # a new target assignment: the driver applies it
    LOST = "lost"  # fenced: give up every owned partition as lost (a share member has none), then rejoin
    COORDINATOR_MOVED = "coordinator_moved"  # find the coordinator again, then heartbeat at once
    RETRY = "retry"  # heartbeat again after the retry backoff
    FATAL = "fatal"  # raise ``member.fatal_error`` to the application
    # The share member's names for the same outcomes (nothing there is revoked or reconciled):
    ASSIGNED = "reconcile"  # the assignment changed: fetch from the new partitions
    REJOIN = "lost"  # fenced or unknown: heartbeat again at once, at epoch 0

_GENERATION_OVER = frozenset({Errors.IllegalGenerationError.errno, Errors.FencedInstanceIdError.errno})


def membership_over(code: int) -> bool:
    """True when an answer's error code says this member's generation or epoch is over (fenced)."""
    return bool(code) and (code in _GENERATION_OVER or Errors.for_code(code).member_fenced)

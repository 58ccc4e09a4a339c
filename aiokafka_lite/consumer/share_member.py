"""Share group membership (KIP-932) as a sans-I/O state machine: what the next ShareGroupHeartbeat says and
what each answer means.

A share group is simpler than a KIP-848 consumer group: the coordinator assigns partitions, but several
members may hold the same partition and the broker, not the assignment, decides which member gets which
records (each record is *acquired* by one member for a time). So there is nothing to revoke or hand over:
an answer's assignment replaces the old one at once, and the member reports nothing it owns.

Rules (KIP-932; the Java client's ShareMembershipManager):

* The member id is made by the client and kept for the member's life, across fencing and rejoins.
* A joining heartbeat (epoch 0), and every heartbeat after a failed one, carries the subscription; others
  carry it only when it changed (null means "unchanged").
* FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID: rejoin at epoch 0 with the same member id.
* Leaving sends epoch -1.

:mod:`.share_consumer` sends what this builds and feeds back the answers; tests/consumer/test_share_member.py
checks every rule from values alone.
"""

from __future__ import annotations

import enum
import uuid

from .. import errors as Errors
from .._state import StateMachine, table
from ..protocol.messages.share_group_heartbeat import (
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)
from .group_rules import JOIN_EPOCH, LEAVE_EPOCH, EpochMember, Outcome, verdict


class ShareMemberState(enum.Enum):
    JOINING = "joining"  # the next heartbeat is a join (epoch 0): at first, and after being fenced
    STABLE = "stable"  # in the group at an epoch the coordinator gave
    FATAL = "fatal"  # an error no retry fixes; the share consumer raises ``fatal_error``
    LEFT = "left"  # the leave heartbeat is due or went out; the member is done


_S = ShareMemberState
#: The share member's allowed moves (docs/consumer.md; tests/consumer/test_member_states.py walks it).
SHARE_MEMBER: dict[ShareMemberState, frozenset[ShareMemberState]] = table({
    _S.JOINING: (_S.STABLE, _S.FATAL, _S.LEFT),
    _S.STABLE: (_S.JOINING, _S.FATAL, _S.LEFT),
    _S.FATAL: (_S.LEFT,),
    _S.LEFT: (),
})


class ShareGroupMember(EpochMember[ShareMemberState]):
    """One member of a share group: id, epoch, subscription and the partitions assigned to it."""

    def __init__(self, group_id: str, *, rack_id: str | None = None, member_id: str | None = None) -> None:
        super().__init__(group_id, rack_id, member_id,
                         StateMachine("share member", SHARE_MEMBER, ShareMemberState.JOINING))
        #: What the coordinator last assigned: topic id -> partitions.
        self.assignment: dict[uuid.UUID, frozenset[int]] = {}
        self._names: tuple[str, ...] = ()
        self._sent_names: tuple[str, ...] | None = None
        self._in_flight: tuple[str, ...] | None = None

    @property
    def joined(self) -> bool:
        """In the group at an epoch the coordinator gave (not joining, fenced, failed or gone)."""
        return self._sm.state is ShareMemberState.STABLE

    @property
    def subscription(self) -> tuple[str, ...]:
        return self._names

    def subscribe(self, names: tuple[str, ...]) -> None:
        self._names = tuple(sorted(set(names)))

    def wants_heartbeat(self) -> bool:
        return bool(self._names) and self._sm.state in (ShareMemberState.JOINING, ShareMemberState.STABLE)

    def urgent(self) -> bool:
        """A heartbeat should go now rather than at the next interval (joining, or a new subscription)."""
        return self.wants_heartbeat() and (self.epoch == JOIN_EPOCH or self._names != self._sent_names)

    def heartbeat_request(self) -> ShareGroupHeartbeatRequest:
        full = self.epoch == JOIN_EPOCH or self._sent_names is None
        req = ShareGroupHeartbeatRequest(group_id=self.group_id, member_id=self.member_id,
                                         member_epoch=self.epoch)
        if full:
            req.rack_id = self.rack_id
        send_names = full or self._names != self._sent_names
        if send_names:
            req.subscribed_topic_names = list(self._names)
        self._in_flight = self._names if send_names else None
        return req

    def request_failed(self) -> None:
        """No answer (connection lost, timeout): the next heartbeat says everything again."""
        self._in_flight = None
        self._sent_names = None

    def on_response(self, resp: ShareGroupHeartbeatResponse) -> Outcome:
        sent, self._in_flight = self._in_flight, None
        if self._sm.state in (ShareMemberState.LEFT, ShareMemberState.FATAL):
            return Outcome.NOTHING  # an answer to a heartbeat sent before the member left or failed
        code = resp.error_code
        if code:
            return self._on_error(code, resp.error_message)
        if sent is not None:
            self._sent_names = sent
        self._accepted(resp)
        self._to(ShareMemberState.STABLE)
        if resp.assignment is None:
            return Outcome.NOTHING
        new = {tp.topic_id: frozenset(tp.partitions) for tp in resp.assignment.topic_partitions
               if tp.partitions}
        if new == self.assignment:
            return Outcome.NOTHING
        self.assignment = new
        return Outcome.ASSIGNED

    def _on_error(self, code: int, message: str | None) -> Outcome:
        err = Errors.for_code(code)
        outcome = verdict(code)
        if outcome is Outcome.REJOIN:
            self.epoch = JOIN_EPOCH
            self._to(ShareMemberState.JOINING)
        if outcome is not Outcome.FATAL:
            self._sent_names = None
            return outcome
        self.fatal_error = err(f"share group {self.group_id!r}: {message or err.message}")
        self._to(ShareMemberState.FATAL)
        return Outcome.FATAL

    def leave_request(self) -> ShareGroupHeartbeatRequest | None:
        """The leave heartbeat (epoch -1), or None when the member never joined. The member is out after."""
        was_in = self._sm.state is ShareMemberState.STABLE and self.epoch > 0
        self._to(ShareMemberState.LEFT)
        self.assignment = {}
        if not was_in:
            return None
        return ShareGroupHeartbeatRequest(group_id=self.group_id, member_id=self.member_id,
                                          member_epoch=LEAVE_EPOCH)

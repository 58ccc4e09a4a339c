"""KIP-848 group membership as a sans-I/O state machine: what the next ConsumerGroupHeartbeat says, and
what each answer means.

In the ``consumer`` group protocol the coordinator computes the assignment and hands each member its
target in heartbeat answers, one step at a time: a member first gives up partitions the target lacks
(the answer lists only what it may keep), reports what it owns in its next heartbeat, and only then gets
partitions that another member had to release first. The member epoch counts these steps; commits carry it.

This module decides nothing about I/O or time: :mod:`.group848` sends the requests it builds, feeds it the
answers, and applies the targets it reports (with the rebalance listener, in its membership task). So
every rule here is testable from values alone (tests/consumer/test_member848.py).

Rules (KIP-848, KIP-1082; the Java client's ConsumerMembershipManager and HeartbeatRequestManager):

* The member id is made by the client (KIP-1082, ConsumerGroupHeartbeat v1) and kept for the member's
  life, across fencing and rejoins.
* A joining heartbeat (epoch 0) and every heartbeat after a failed one carry every field; others carry
  only what changed since the last one that was answered (null means "unchanged").
* The subscription goes as names plus regex, both set or both null: librdkafka's client sends them so,
  and its mock broker asserts it (rdkafka_mock_cgrp.c, ``validate_subscription``).
* FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID: what the member owned is lost (not revoked: someone else may
  have it); it rejoins at epoch 0 with the same member id once the loss is handled.
* Leaving sends epoch -1, or -2 for a static member (KIP-345 ids), whose partitions the coordinator then
  keeps for it until its session times out.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping

from .. import errors as Errors
from .._state import StateMachine, table
from ..protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatRequestTopicPartitions,
    ConsumerGroupHeartbeatResponse,
)
from .group_rules import JOIN_EPOCH, LEAVE_EPOCH, EpochMember, Outcome, new_member_id, verdict

#: An assignment in the protocol's terms: topic id -> partition ids.
TopicIdAssignment = Mapping[uuid.UUID, frozenset[int]]

__all__ = ["JOIN_EPOCH", "LEAVE_EPOCH", "LEAVE_STATIC_EPOCH", "MEMBER848", "ConsumerGroupMember",
           "MemberState", "new_member_id"]

LEAVE_STATIC_EPOCH = -2


class MemberState(enum.Enum):
    UNSUBSCRIBED = "unsubscribed"  # not in the group: no subscription yet, or left it
    JOINING = "joining"  # the next heartbeat is a join (epoch 0)
    STABLE = "stable"  # owns what the coordinator last assigned, and told it so
    RECONCILING = "reconciling"  # a new target waits for the driver to apply it
    ACKNOWLEDGING = "acknowledging"  # applied; the next heartbeat reports what is owned now
    FENCED = "fenced"  # the coordinator dropped the member: its partitions are lost, then it rejoins
    LEAVING = "leaving"  # a leave heartbeat is due or in flight
    FATAL = "fatal"  # an error no retry fixes; the consumer raises it


_M = MemberState
#: The KIP-848 member's allowed moves (docs/consumer.md draws it; tests/consumer/test_member_states.py
#: walks it). Leaving is allowed from everywhere; FENCED is also where a missed poll deadline waits.
MEMBER848: dict[MemberState, frozenset[MemberState]] = table({
    _M.UNSUBSCRIBED: (_M.JOINING, _M.LEAVING, _M.FENCED),
    _M.JOINING: (_M.STABLE, _M.RECONCILING, _M.FENCED, _M.FATAL, _M.LEAVING),
    _M.STABLE: (_M.RECONCILING, _M.FENCED, _M.FATAL, _M.LEAVING),
    _M.RECONCILING: (_M.ACKNOWLEDGING, _M.FENCED, _M.FATAL, _M.LEAVING),
    _M.ACKNOWLEDGING: (_M.STABLE, _M.RECONCILING, _M.FENCED, _M.FATAL, _M.LEAVING),
    _M.FENCED: (_M.JOINING, _M.UNSUBSCRIBED, _M.LEAVING),
    _M.LEAVING: (_M.JOINING, _M.UNSUBSCRIBED, _M.FENCED),
    _M.FATAL: (_M.LEAVING,),
})


class ConsumerGroupMember(EpochMember[MemberState]):
    """One member of a KIP-848 group: its id, epoch, subscription, owned and target assignment."""

    def __init__(self, group_id: str, *, instance_id: str | None = None, rack_id: str | None = None,
                 rebalance_timeout_ms: int, server_assignor: str | None = None,
                 member_id: str | None = None) -> None:
        super().__init__(group_id, rack_id, member_id,
                         StateMachine("KIP-848 member", MEMBER848, MemberState.UNSUBSCRIBED))
        self.instance_id = instance_id
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.server_assignor = server_assignor
        #: What the member owns (applied, and told to the coordinator or about to be).
        self.owned: dict[uuid.UUID, frozenset[int]] = {}
        #: The last target the coordinator sent and the driver has not applied yet.
        self.target: dict[uuid.UUID, frozenset[int]] | None = None
        #: The coordinator has sent an assignment (possibly empty) since the member last joined.
        self.assignment_known = False
        self._names: tuple[str, ...] = ()
        self._regex: str | None = None
        self._subscribed = False
        # What the last answered heartbeat told the coordinator; None: unknown, send it in full.
        self._sent_subscription: tuple[tuple[str, ...], str] | None = None
        self._sent_owned: dict[uuid.UUID, frozenset[int]] | None = None
        self._in_flight: tuple[tuple[tuple[str, ...], str] | None, dict[uuid.UUID, frozenset[int]] | None] \
            | None = None

    # -- what the application asks ------------------------------------------------------------------
    def subscribe(self, names: tuple[str, ...] = (), regex: str | None = None) -> None:
        """Subscribe to topic names, or to the topics matching ``regex`` (evaluated by the broker)."""
        self._names = tuple(sorted(names))
        self._regex = regex
        self._subscribed = True
        if self.state in (MemberState.UNSUBSCRIBED, MemberState.LEAVING):
            self._join()

    def leave(self) -> ConsumerGroupHeartbeatRequest | None:
        """The leave heartbeat to send now, or None when not in the group. The member is out after it."""
        in_group = self.state not in (MemberState.UNSUBSCRIBED, MemberState.JOINING, MemberState.FATAL,
                                      MemberState.FENCED) and self.epoch > 0
        self._subscribed = False
        self._to(MemberState.LEAVING)
        if not in_group:
            self._left()
            return None
        epoch = LEAVE_STATIC_EPOCH if self.instance_id is not None else LEAVE_EPOCH
        return ConsumerGroupHeartbeatRequest(group_id=self.group_id, member_id=self.member_id,
                                             member_epoch=epoch, instance_id=self.instance_id)

    def left(self) -> None:
        """The leave heartbeat went out (answered or not): out of the group, owning nothing (unless the
        application subscribed again meanwhile: then the member is already joining afresh)."""
        if self.state is MemberState.LEAVING:
            self._left()

    def _left(self) -> None:
        self.epoch = JOIN_EPOCH
        self.assignment_known = False
        self.owned = {}
        self.target = None
        self._sent_subscription = self._sent_owned = None
        self._to(MemberState.JOINING if self._subscribed else MemberState.UNSUBSCRIBED)

    def _join(self) -> None:
        self.epoch = JOIN_EPOCH
        self.assignment_known = False
        self.target = None
        self._sent_subscription = self._sent_owned = None
        self._to(MemberState.JOINING)

    # -- heartbeats ---------------------------------------------------------------------------------
    def wants_heartbeat(self) -> bool:
        return self.state in (MemberState.JOINING, MemberState.STABLE, MemberState.RECONCILING,
                              MemberState.ACKNOWLEDGING)

    def urgent(self) -> bool:
        """A heartbeat should go now rather than at the next interval (join, or report a change)."""
        if self.state in (MemberState.JOINING, MemberState.ACKNOWLEDGING):
            return True
        return self.wants_heartbeat() and (self._names, self._regex or "") != self._sent_subscription

    def heartbeat_request(self) -> ConsumerGroupHeartbeatRequest:
        """The next heartbeat; its fields are taken as known to the coordinator once it is answered."""
        # Epoch 0 is a join whatever the state: librdkafka's mock answers a new member epoch 0 until it
        # can assign it something (rdkafka_mock_cgrp.c), and refuses an epoch-0 heartbeat that is not full.
        full = self.state is MemberState.JOINING or self._sent_subscription is None or self.epoch == 0
        subscription = (self._names, self._regex or "")
        req = ConsumerGroupHeartbeatRequest(group_id=self.group_id, member_id=self.member_id,
                                            member_epoch=self.epoch)
        if full:
            req.instance_id = self.instance_id
            req.rack_id = self.rack_id
            req.rebalance_timeout_ms = self.rebalance_timeout_ms
            req.server_assignor = self.server_assignor
        send_sub = full or subscription != self._sent_subscription
        if send_sub:
            req.subscribed_topic_names = list(subscription[0])
            req.subscribed_topic_regex = subscription[1]
        send_owned = full or self.owned != self._sent_owned
        if send_owned:
            req.topic_partitions = [
                ConsumerGroupHeartbeatRequestTopicPartitions(topic_id=tid, partitions=sorted(ps))
                for tid, ps in sorted(self.owned.items()) if ps]
        self._in_flight = (subscription if send_sub else None, dict(self.owned) if send_owned else None)
        return req

    def request_failed(self) -> None:
        """No answer (connection lost, timeout): the next heartbeat says everything again."""
        self._in_flight = None
        self._sent_subscription = self._sent_owned = None

    def on_response(self, resp: ConsumerGroupHeartbeatResponse) -> Outcome:
        sent, self._in_flight = self._in_flight, None
        if self.state in (MemberState.LEAVING, MemberState.UNSUBSCRIBED, MemberState.FATAL,
                          MemberState.FENCED):
            return Outcome.NOTHING  # an answer to a heartbeat sent before the member left or was fenced
        code = resp.error_code
        if code:
            return self._on_error(code, resp.error_message)
        if sent is not None:
            if sent[0] is not None:
                self._sent_subscription = sent[0]
            if sent[1] is not None:
                self._sent_owned = sent[1]
        if resp.member_id:
            self.member_id = resp.member_id
        self._accepted(resp)
        if resp.assignment is not None:
            self.assignment_known = True
            target = {tp.topic_id: frozenset(tp.partitions) for tp in resp.assignment.topic_partitions
                      if tp.partitions}
            if target != self.owned or self.state is MemberState.JOINING:
                self.target = target
                self._to(MemberState.RECONCILING)
                return Outcome.RECONCILE
            self.target = None  # what we own already: nothing to apply
            if self.state is MemberState.RECONCILING:
                self._to(MemberState.ACKNOWLEDGING)
        if self.state is MemberState.JOINING:
            self._to(MemberState.STABLE)  # joined; the assignment comes in a later answer
        elif self.state is MemberState.ACKNOWLEDGING and self._sent_owned == self.owned:
            self._to(MemberState.STABLE)
        return Outcome.NOTHING

    def _on_error(self, code: int, message: str | None) -> Outcome:
        cls = Errors.for_code(code)
        detail = f"ConsumerGroupHeartbeat of member {self.member_id} in group {self.group_id!r}"
        if message:
            detail = f"{detail}: {message}"
        self._sent_subscription = self._sent_owned = None  # after any error, say everything again
        outcome = verdict(code)
        if outcome is Outcome.LOST:
            self.fence()
        if outcome is not Outcome.FATAL:
            return outcome
        if cls is Errors.UnreleasedInstanceIdError:
            detail += (f" (another consumer with group_instance_id {self.instance_id!r} is still a member; "
                       "stop it or give this one another id)")
        elif cls is Errors.GroupMaxSizeReachedError:
            detail += " (the group has as many members as the broker's group.consumer.max.size allows)"
        elif cls is Errors.UnsupportedAssignorError:
            detail += f" (group_remote_assignor {self.server_assignor!r} is not configured on the broker)"
        self.fatal_error = cls(detail)
        self._to(MemberState.FATAL)
        return Outcome.FATAL

    def fence(self) -> None:
        """The coordinator no longer knows this member or its epoch (a heartbeat or a commit said so)."""
        if self.state in (MemberState.UNSUBSCRIBED, MemberState.LEAVING, MemberState.FATAL):
            return
        self._to(MemberState.FENCED)
        self.target = None
        self.assignment_known = False
        self._sent_subscription = self._sent_owned = None

    # -- after the driver acted ---------------------------------------------------------------------
    def reconciled(self, applied: Mapping[uuid.UUID, frozenset[int]],
                   owned: Mapping[uuid.UUID, frozenset[int]], complete: bool = True) -> None:
        """The driver applied the target ``applied`` (``owned`` is what the member has now); report it next.

        ``complete`` is False when some of the target's topics are not yet known by name: the rest stays
        due, and the driver tries again after a metadata refresh. A target that arrived while it was
        applying ``applied`` stays due as well."""
        if self.state is not MemberState.RECONCILING:
            return  # fenced or left meanwhile: what the driver applied is moot
        self.owned = {tid: ps for tid, ps in owned.items() if ps}
        if complete and self.target is applied:
            self.target = None
            self._to(MemberState.ACKNOWLEDGING)

    def rejoin(self) -> None:
        """After a fence (and its partitions handled as lost), or a missed poll deadline: join anew."""
        self.owned = {}
        if self._subscribed:
            self._join()
        else:
            self._left()

    def poll_timeout(self) -> ConsumerGroupHeartbeatRequest | None:
        """poll() was not called within max_poll_interval_ms: the leave heartbeat to send (Java's rule).

        The member waits as FENCED: after the next poll() the driver gives its partitions up as lost and calls
        rejoin() (the driver must not call left() here, which would rejoin at once)."""
        subscribed = self._subscribed
        req = self.leave()
        self._subscribed = subscribed
        self._to(MemberState.FENCED)
        return req

"""The classic group protocol: JoinGroup, SyncGroup, the leader's client-side assignment, LeaveGroup, and
the metadata watch that makes the leader rebalance when partitions or pattern matches change.

This is the classic strategy (:class:`ClassicProtocol`) of :class:`.membership.GroupMembership`, which
holds what every group protocol shares (lifecycle, ``poll()``, the membership task, commits, giving
partitions up); the coordinator, the heartbeat task and the leave are the
:class:`.group_session.GroupSession`'s; the classic heartbeat is a strategy (:mod:`.heartbeat`) of the one
heartbeat driver.

Rebalance protocols: EAGER revokes everything before rejoining. COOPERATIVE (KIP-429, with
``cooperative-sticky`` alone) keeps consuming owned partitions during the rebalance; partitions missing
from the new assignment are revoked afterwards and the member rejoins at once, which hands them to their
new owner in a second round.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from typing import Any

from .. import errors as Errors
from .._state import Stateful, StateMachine, table
from .._tasks import cancel_and_wait
from ..protocol.messages.heartbeat import HeartbeatRequest
from ..protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from ..protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from ..protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from . import cluster_view as cv
from .assignors import Assignor, RebalanceProtocol, rebalance_protocol
from .group_protocol import (
    PROTOCOL_TYPE,
    Assignment,
    Subscription,
    decode_assignment,
    encode_subscription,
)
from .heartbeat import ClassicHeartbeat
from .heartbeat_driver import HeartbeatDriver
from .leader_assign import explain_inconsistent, leader_assign
from .listener import call_listener
from .membership import GroupMembership, ProtocolParts
from .subscription import SubscriptionState, SubscriptionType

log = logging.getLogger(__name__)

_FATAL_JOIN_ERRORS = frozenset({
    Errors.InconsistentGroupProtocolError.errno, Errors.InvalidSessionTimeoutError.errno,
    Errors.InvalidGroupIdError.errno, Errors.GroupAuthorizationFailedError.errno,
    Errors.GroupMaxSizeReachedError.errno, Errors.FencedInstanceIdError.errno,
    Errors.UnsupportedVersionError.errno, Errors.TopicAuthorizationFailedError.errno,
})


class ClassicState(enum.Enum):
    """The classic member (Java's AbstractCoordinator.MemberState, its two rebalance steps as one)."""

    UNJOINED = "unjoined"  # no current generation: not joined yet, fenced, or left
    JOINING = "joining"  # a JoinGroup/SyncGroup round is under way
    STABLE = "stable"  # the current generation's assignment is installed (listener called)


_C = ClassicState
#: The classic member's allowed moves (docs/consumer.md; tests/consumer/test_member_states.py walks it).
CLASSIC: dict[ClassicState, frozenset[ClassicState]] = table({
    _C.UNJOINED: (_C.JOINING,),
    _C.JOINING: (_C.STABLE, _C.UNJOINED),
    _C.STABLE: (_C.JOINING, _C.UNJOINED),
})


class _Rejoin(Exception):
    """Internal: the join/sync round must start over (after adjusting member id or coordinator)."""


class ClassicProtocol(ProtocolParts, Stateful[ClassicState]):
    """The classic protocol of one consumer's membership (the Java ConsumerCoordinator's join, sync and
    assignment): a :class:`.membership.GroupProtocol`."""

    #: The heartbeat task's name (raise_if_failed names it).
    _HEARTBEAT_TASK = "aiokafka_lite-heartbeat"

    def __init__(self, membership: GroupMembership, client: cv.ConsumerClient,
                 subscription: SubscriptionState, config: Any, assignors: list[Assignor]) -> None:
        super().__init__(membership, client, subscription)
        self.member_id = ""
        self._session_timeout_ms: int = config.session_timeout_ms
        #: The pause before the second JoinGroup of a cooperative rebalance (docs/consumer.md).
        self._retry_backoff = config.retry_backoff_ms / 1000.0
        self._metadata_max_age = config.metadata_max_age_ms / 1000.0
        self._exclude_internal: bool = config.exclude_internal_topics
        self.assignors = assignors
        #: EAGER or COOPERATIVE: the newest that every assignor supports.
        self.rebalance_protocol = rebalance_protocol(assignors)
        self._sm: StateMachine[ClassicState] = StateMachine("classic member", CLASSIC, ClassicState.UNJOINED)
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.rejoin_needed = True
        self._rejoin_reason = "initial join"
        self._join_task: asyncio.Task[Assignment] | None = None
        self._join_started = 0.0
        self._join_delay = 0.0
        self._join_failures = 0  # join rounds in a row that failed (the backoff grows with them)
        heartbeat = ClassicHeartbeat(self, client, config, self._m.metrics)
        self._driver = HeartbeatDriver(self.session, heartbeat, heartbeat, client, config,
                                       config.heartbeat_interval_ms / 1000.0)
        self._metadata_task: asyncio.Task[None] | None = None
        self._assignment_snapshot: dict[str, int] = {}
        #: The generation whose assignment was installed last (listener called); -1 before the first.
        self._installed_generation = -1
        #: revoke_before_every_join: on_partitions_revoked(set()) was called for the rebalance under way.
        self._empty_revoke_called = False

    # -- lifecycle ---------------------------------------------------------------------------------------
    async def check_broker(self, timeout: float) -> None:
        """Every broker serves the classic protocol: nothing to check before the first JoinGroup."""

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.session.start_heartbeat(self._driver.run, self._HEARTBEAT_TASK)
        if self._metadata_task is None:
            self._metadata_task = loop.create_task(self._metadata_loop(), name="aiokafka_lite-group-metadata")

    async def before_close(self) -> None:
        pass

    async def end_round(self) -> None:
        if self._join_task is not None and not self._join_task.done():
            # A broker holds JoinGroup until the rebalance completes, and everything after it on the
            # same connection waits: drop that connection so the commit and LeaveGroup go through.
            await cancel_and_wait(self._join_task, quiet=True)
            self._join_task = None
            self._round_over()
            if self.session.coordinator_id is not None:
                cv.close_connection(self._client, self.session.coordinator_id, JoinGroupRequest)

    def tasks(self) -> tuple[asyncio.Task[Any] | None, ...]:
        return (self._metadata_task,)

    def tasks_to_end(self) -> tuple[asyncio.Task[Any] | None, ...]:
        return self._metadata_task, self._join_task, self._leave_task

    def commit_must_wait(self) -> bool:
        return self._join_task is not None

    def commit_identity(self) -> tuple[int, str]:
        return self.generation, self.member_id

    # -- what the heartbeat asks of its host (heartbeat.HeartbeatHost) ----------------------------------
    def poll_overdue(self) -> bool:
        return self._m.poll_overdue()

    def fail(self, exc: BaseException) -> None:
        self._m.fail(exc)

    def work_due(self) -> bool:
        return self._subs.partitions_auto_assigned and bool(
            self.rejoin_needed or self._join_task is not None or self._m.lost or self._subs.needs_rejoin)

    def has_assignment(self) -> bool:
        return (self._subs.partitions_auto_assigned and self.state is ClassicState.STABLE
                and not self.work_due())

    # -- state changes requested by heartbeats, commits, metadata ----------------------------------------
    def leave_in_background(self, reason: str) -> None:
        """unsubscribe(): leave now so the group rebalances; a later subscribe() joins afresh."""
        self.rejoin_needed = True
        self._m.forget_lost()
        if self._leave_task is None or self._leave_task.done():
            self._leave_task = asyncio.get_running_loop().create_task(
                self.leave(reason, time.monotonic() + self._m.request_timeout),
                name="aiokafka_lite-leave-group")

    def request_rejoin(self, reason: str) -> None:
        if not self.rejoin_needed:
            log.info("group %r: rejoining: %s", self.group_id, reason)
        self.rejoin_needed = True
        self._rejoin_reason = reason
        self._m.kick()

    def member_error(self, code: int) -> None:
        """Our generation is over (or our member id unknown): what we owned is lost; rejoin."""
        if code == Errors.FencedInstanceIdError.errno:
            self._m.fail(Errors.FencedInstanceIdError(
                f"another consumer with group_instance_id {self._m.group_instance_id!r} joined group "
                f"{self.group_id!r}"))
        if code == Errors.UnknownMemberIdError.errno:
            self.member_id = ""
        if self.generation >= 0 or code == Errors.UnknownMemberIdError.errno:
            self._end_generation()
            self._m.mark_lost(self._subs.assigned_partitions())
        self.request_rejoin(Errors.for_code(code).message)

    def _end_generation(self) -> None:
        """Our generation is over (fenced, left, or the poll deadline passed). A round under way goes on."""
        self.generation = -1
        if self.state is ClassicState.STABLE:
            self._to(ClassicState.UNJOINED)

    def _round_over(self) -> None:
        """A join round ended (installed, failed, or cancelled by close()): STABLE when the current
        generation's assignment is installed, else UNJOINED (a commit during the install may have found the
        generation over)."""
        installed = self.generation >= 0 and self._installed_generation == self.generation
        self._to(ClassicState.STABLE if installed else ClassicState.UNJOINED)

    # -- the membership task's round: revoke, join, sync, install -----------------------------------------
    async def membership_round(self, deadline: float | None = None) -> None:
        """Group work due now: revoke, join, sync, install. With a ``deadline`` (tests), returns then with
        a join still running (the next round resumes it); the membership task passes none."""
        if not self._subs.partitions_auto_assigned:
            return
        if self._subs.needs_rejoin:
            self._subs.needs_rejoin = False
            self.request_rejoin("the subscription changed")
        await self._m.lose_partitions()
        while (self.rejoin_needed or self._join_task is not None) and not self._m.closing:
            if self._join_task is None:
                if self._leave_task is not None and not self._leave_task.done():
                    await asyncio.wait([self._leave_task])  # an unsubscribe's leave goes before a join
                await self._prepare_join()
                if self._m.closing:
                    return
                self._join_started = time.monotonic()
                self.rejoin_needed = False
                self._to(ClassicState.JOINING)
                self._join_task = asyncio.get_running_loop().create_task(
                    self._join_and_sync(), name="aiokafka_lite-join-group")
            task = self._join_task
            if not task.done():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return
                await asyncio.wait([task], timeout=left)
                if self._m.closing or not task.done():  # close() took the join over, or the deadline
                    return
            self._join_task = None
            if task.cancelled():
                self.rejoin_needed = True
                self._round_over()
                return
            exc = task.exception()
            if exc is not None:
                self.rejoin_needed = True
                self._round_over()
                self._m.metrics.failed_rebalances += 1
                if isinstance(exc, _Rejoin):
                    continue
                raise exc
            await self._install(task.result())

    async def _prepare_join(self) -> None:
        """Before JoinGroup: eager revokes all (committing first); cooperative revokes dropped topics."""
        await self._resolve_pattern()
        assigned = self._subs.assigned_partitions()
        if self.rebalance_protocol is RebalanceProtocol.EAGER or self.generation < 0:
            revoked = assigned
        else:
            revoked = {tp for tp in assigned if tp.topic not in self._subs.subscription}
        if not revoked:
            if self._subs.revoke_before_every_join and not self._empty_revoke_called:
                self._empty_revoke_called = True  # once per rebalance, not per JoinGroup retry
                await call_listener(self._subs.listener, "on_partitions_revoked", set())
            return
        if not await self._m.commit_then_revoke(revoked):
            # Our generation is over (maybe the commit just found out): the partitions are lost.
            await self._m.lose_partitions(revoked)

    def still_member(self) -> bool:
        """The membership that owns the partitions being revoked is still current."""
        return self.generation >= 0

    async def _install(self, assignment: Assignment) -> None:
        self._m.forget_lost()  # superseded by the new generation's assignment
        self._join_failures = 0
        new = set(assignment.partitions)
        if self._subs.subscription_type is SubscriptionType.AUTO_TOPICS:
            new = {tp for tp in new if tp.topic in self._subs.subscription}
        owned = self._subs.assigned_partitions()
        self._m.metrics.rebalances += 1
        self._m.metrics.last_rebalance = time.monotonic()
        self._m.metrics.rebalance_latency.record(time.monotonic() - self._join_started)
        for a in self.assignors:
            if a.name == self.protocol_name:
                a.on_assignment(assignment, self.generation)
        revoked = owned - new
        added = new - owned
        log.info("group %r generation %s: assigned %s", self.group_id, self.generation, sorted(new))
        if revoked:
            # Cooperative: give up what moved, then rejoin so its new owner gets it (KIP-429).
            if not await self._m.commit_then_revoke(revoked):
                await self._m.lose_partitions(revoked)
            self.request_rejoin("partitions were revoked (cooperative rebalance)")
            self._join_delay = self._retry_backoff
        self._subs.add_assigned(added)
        self._empty_revoke_called = False
        try:
            await call_listener(self._subs.listener, "on_partitions_assigned", added)
        finally:
            self._installed_generation = self.generation  # installed; a listener's error goes to poll()
            self._round_over()

    # -- join / sync -------------------------------------------------------------------------------------
    def _own_subscription(self, assignor: Assignor) -> bytes:
        topics = sorted(self._subs.subscription)
        cooperative = self.rebalance_protocol is RebalanceProtocol.COOPERATIVE
        owned = sorted(self._subs.assigned_partitions()) if cooperative else []
        return encode_subscription(Subscription(topics, assignor.subscription_user_data(topics), owned,
                                                self.generation, self._m.client_rack))

    async def _join_and_sync(self) -> Assignment:
        """One JoinGroup + SyncGroup round; raises _Rejoin when it must start over."""
        if self._join_delay:
            delay, self._join_delay = self._join_delay, 0.0
            await asyncio.sleep(delay)
        deadline = time.monotonic() + self._m.rebalance_timeout_ms / 1000.0 + self._m.request_timeout
        try:
            node = await self.session.ensure_coordinator(time.monotonic() + self._m.request_timeout)
        except Errors.KafkaError as exc:
            await self._transport_error(exc)  # a broker down is retried; only the unexpected is raised
            raise _Rejoin() from exc
        req = JoinGroupRequest(
            group_id=self.group_id, session_timeout_ms=self._session_timeout_ms,
            rebalance_timeout_ms=self._m.rebalance_timeout_ms, member_id=self.member_id,
            group_instance_id=self._m.group_instance_id, protocol_type=PROTOCOL_TYPE,
            protocols=[JoinGroupRequestProtocol(name=a.name, metadata=self._own_subscription(a))
                       for a in self.assignors],
            reason=self._rejoin_reason[:200])
        try:
            version = await cv.api_version(self._client, node, JoinGroupRequest)
            if self._m.group_instance_id is not None and version < 5:
                raise Errors.UnsupportedVersionError(
                    f"group_instance_id needs JoinGroup v5+; the coordinator offers v{version}")
            resp = await cv.send(self._client, node, req, version,
                                 timeout_ms=self._m.rebalance_timeout_ms + self._m.request_timeout * 1000)
        except Errors.KafkaError as exc:
            await self._transport_error(exc)
            raise _Rejoin() from exc
        code = resp.error_code
        log.debug("group %r: JoinGroup v%s answered error %s generation %s leader %s member %s (%d members)",
                  self.group_id, version, code, resp.generation_id, resp.leader, resp.member_id,
                  len(resp.members))
        if code:
            await self._join_error(code, resp.member_id, "JoinGroup")
        self.generation = resp.generation_id
        self.member_id = resp.member_id
        self.protocol_name = resp.protocol_name
        self.leader_id = resp.leader
        assignments: dict[str, bytes] = {}
        if resp.leader == resp.member_id and not getattr(resp, "skip_assignment", False):
            assignments, self._assignment_snapshot = await leader_assign(
                self._client, self.group_id, self.assignors, self._subs, resp.protocol_name or "",
                resp.members, self._m.request_timeout)
        sync = SyncGroupRequest(
            group_id=self.group_id, generation_id=self.generation, member_id=self.member_id,
            group_instance_id=self._m.group_instance_id, protocol_type=PROTOCOL_TYPE,
            protocol_name=self.protocol_name,
            assignments=[SyncGroupRequestAssignment(member_id=m, assignment=a)
                         for m, a in assignments.items()])
        try:
            node = await self.session.ensure_coordinator(deadline)
            version = await cv.api_version(self._client, node, SyncGroupRequest)
            sresp = await cv.send(self._client, node, sync, version,
                                  timeout_ms=self._m.rebalance_timeout_ms + self._m.request_timeout * 1000)
        except Errors.KafkaError as exc:
            await self._transport_error(exc)
            raise _Rejoin() from exc
        log.debug("group %r: SyncGroup generation %s answered error %s", self.group_id, self.generation,
                  sresp.error_code)
        if sresp.error_code:
            if sresp.error_code in (Errors.UnknownMemberIdError.errno, Errors.IllegalGenerationError.errno):
                self.generation = -1
            await self._join_error(sresp.error_code, None, "SyncGroup")
        try:
            return decode_assignment(sresp.assignment)
        except Errors.ProtocolError as exc:
            raise Errors.ProtocolError(f"group {self.group_id!r}: the leader's assignment does not decode: "
                                       f"{exc}") from exc

    async def _transport_error(self, exc: Errors.KafkaError) -> None:
        if exc.retriable or isinstance(exc, Errors.KafkaConnectionError):
            self.session.coordinator_dead(exc)
            await self._back_off()
            return
        raise exc

    async def _back_off(self) -> None:
        """Before the next JoinGroup after a failed one: the session's backoff (net/retry.py), growing with
        the failures in a row until a round installs an assignment."""
        self._join_failures += 1
        await asyncio.sleep(self.session.backoff.delay(self._join_failures))

    async def _join_error(self, code: int, member_id: str | None, what: str) -> None:
        exc = Errors.for_code(code)(f"{what} in group {self.group_id!r}")
        if code == Errors.MemberIdRequiredError.errno:
            # KIP-394: the broker gave us a member id; join again with it right away.
            self.member_id = member_id or ""
            raise _Rejoin()
        if code == Errors.UnknownMemberIdError.errno:
            self.member_id = ""
            self.generation = -1
            raise _Rejoin()
        if code == Errors.IllegalGenerationError.errno:
            self.generation = -1
            raise _Rejoin()
        if Errors.coordinator_moved(code):
            self.session.coordinator_dead(exc)
            await self._back_off()
            raise _Rejoin()
        if code in (Errors.CoordinatorLoadInProgressError.errno, Errors.RebalanceInProgressError.errno):
            await self._back_off()
            raise _Rejoin()
        if code == Errors.InconsistentGroupProtocolError.errno:
            raise Errors.InconsistentGroupProtocolError(await explain_inconsistent(
                self._client,
                lambda: self.session.ensure_coordinator(time.monotonic() + self._m.request_timeout),
                self.group_id, [a.name for a in self.assignors], what, self._m.request_timeout))
        if code == Errors.FencedInstanceIdError.errno or code in _FATAL_JOIN_ERRORS:
            raise exc
        raise exc

    # -- background: heartbeats and metadata checks -----------------------------------------------------
    def _heartbeat_due(self) -> bool:
        return (self.generation >= 0 and self.member_id != "" and not self.session.closed
                and (self._join_task is None or self._join_task.done()))

    def heartbeat_request(self) -> HeartbeatRequest | None:
        if not self._subs.partitions_auto_assigned or not self._heartbeat_due():
            return None
        return HeartbeatRequest(group_id=self.group_id, generation_id=self.generation,
                                member_id=self.member_id, group_instance_id=self._m.group_instance_id)

    async def leave_after_poll_timeout(self) -> None:
        self._m.warn_poll_overdue()
        await self.leave("consumer poll timeout has expired", time.monotonic() + self._m.request_timeout)
        self._end_generation()
        if self._m.group_instance_id is None:
            self.member_id = ""
        self._m.mark_lost(self._subs.assigned_partitions())
        self.request_rejoin("poll timeout expired")

    async def leave(self, reason: str, deadline: float) -> None:
        # Static members keep their id across restarts; leaving would trigger the rebalance they avoid.
        if self._m.group_instance_id is not None or not self.member_id:
            return
        member_id = self.member_id

        def request(version: int) -> LeaveGroupRequest:
            if version >= 3:
                return LeaveGroupRequest(group_id=self.group_id, members=[
                    MemberIdentity(member_id=member_id, group_instance_id=None, reason=reason)])
            return LeaveGroupRequest(group_id=self.group_id, member_id=member_id)

        if await self.session.leave(LeaveGroupRequest, request, deadline):
            log.info("group %r: member %s left (%s)", self.group_id, member_id, reason)
        self.member_id = ""
        self._end_generation()

    async def _resolve_pattern(self) -> None:
        if self._subs.subscription_type is not SubscriptionType.AUTO_PATTERN:
            return
        try:
            await cv.refresh_all_topics(self._client, self._m.request_timeout, keep_tracking=True)
        except Errors.KafkaError as exc:
            log.warning("group %r: metadata for the pattern subscription failed: %s", self.group_id, exc)
        matched = {t for t in cv.topics(self._client, exclude_internal=self._exclude_internal)
                   if self._subs.matches_pattern(t)}
        self._subs.change_subscription(matched)
        self._subs.needs_rejoin = False

    async def _metadata_loop(self) -> None:
        """Every metadata_max_age_ms: new topics for a pattern, new partitions for the leader's topics."""
        try:
            while not self.session.closed:
                await asyncio.sleep(self._metadata_max_age)
                if not self._subs.partitions_auto_assigned or self.generation < 0:
                    continue
                if self._subs.subscription_type is SubscriptionType.AUTO_PATTERN:
                    before = self._subs.subscription
                    await self._resolve_pattern()
                    if self._subs.subscription != before:
                        self.request_rejoin("the pattern now matches other topics")
                        continue
                if self.leader_id == self.member_id and self._assignment_snapshot:
                    try:
                        await cv.refresh_metadata(self._client, self._assignment_snapshot,
                                                  self._m.request_timeout)
                    except Errors.KafkaError:
                        continue
                    now = {t: len(cv.partitions_for(self._client, t) or ())
                           for t in self._assignment_snapshot}
                    if now != self._assignment_snapshot:
                        self.request_rejoin("partition counts of subscribed topics changed")
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            log.exception("group %r: metadata task failed", self.group_id)
            self._m.fail(exc)
            raise

"""The consumer group protocol of KIP-848 (``group_protocol="consumer"``): the driver around
:class:`~.member848.ConsumerGroupMember`.

It is the KIP-848 strategy (:class:`KIP848Protocol`) of :class:`.membership.GroupMembership`, which holds
the plumbing every protocol shares (commits, the rebalance listener's calls, auto-commit, close; its
:class:`.group_session.GroupSession`: the coordinator, the heartbeat task, the leave), and does what differs
itself: no JoinGroup/SyncGroup and no client-side assignor; one heartbeat task sends ConsumerGroupHeartbeat
at the interval the coordinator asks for (at once when joining or reporting a change) and hands the answers
to the state machine. What changes ownership runs in the membership task, as in the classic protocol (and as
the Java 4 consumer's background thread reconciles): partitions the coordinator took away are committed
(with auto-commit) and revoked before they are reported given up, then new ones are added; the listener sees
only those changes (KIP-848 moves partitions incrementally, never all at once).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any

from .. import errors as Errors
from ..protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from ..structs import TopicPartition
from . import cluster_view as cv
from .assignors import Assignor
from .group_rules import Outcome, verdict
from .heartbeat_driver import HeartbeatDriver, heartbeat_version
from .listener import call_listener
from .member848 import ConsumerGroupMember, MemberState
from .membership import GroupMembership, ProtocolParts
from .subscription import SubscriptionState, SubscriptionType

log = logging.getLogger(__name__)

#: Until the coordinator names its interval (its first answer): Kafka's group.consumer.heartbeat.interval.ms.
_DEFAULT_INTERVAL = 5.0

#: Settings of the classic protocol that the coordinator owns in KIP-848 (the Java client refuses them too).
CLASSIC_ONLY_SETTINGS = ("partition_assignment_strategy", "session_timeout_ms", "heartbeat_interval_ms")


class KIP848Protocol(ProtocolParts):
    """The KIP-848 protocol of one consumer's membership (a :class:`.membership.GroupProtocol`): heartbeats,
    incremental reconciliation, epochs on commits."""

    #: The heartbeat task's name (raise_if_failed names it).
    _HEARTBEAT_TASK = "aiokafka_lite-group-heartbeat"

    def __init__(self, membership: GroupMembership, client: cv.ConsumerClient,
                 subscription: SubscriptionState, config: Any, assignors: list[Assignor]) -> None:
        # ``assignors`` are the classic protocol's: in KIP-848 the coordinator assigns.
        super().__init__(membership, client, subscription)
        self.member = ConsumerGroupMember(
            self.group_id, instance_id=config.group_instance_id, rack_id=membership.client_rack,
            rebalance_timeout_ms=membership.rebalance_timeout_ms,
            server_assignor=config.group_remote_assignor)
        self.member_id = self.member.member_id
        self._driver = HeartbeatDriver(self.session, self, self.member, client, config, _DEFAULT_INTERVAL)
        #: No heartbeat before this, urgent or not: a member fenced again and again (librdkafka's mock
        #: answers a second live static member so) must not rejoin in a tight loop.
        self._not_before = 0.0

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> None:
        self.session.start_heartbeat(self._driver.run, self._HEARTBEAT_TASK)

    async def check_broker(self, timeout: float) -> None:
        """At start(): a coordinator without ConsumerGroupHeartbeat fails now, not at the first poll()."""
        try:
            node = await self.session.ensure_coordinator(time.monotonic() + timeout)
        except Errors.KafkaError as exc:
            if not exc.retriable:
                raise
            log.warning("group %r: no coordinator found at start (%s); the heartbeat task keeps looking",
                        self.group_id, exc)
            return
        await self.heartbeat_version(node)

    async def before_close(self) -> None:
        await self.session.stop_heartbeat()  # nothing may heartbeat after the leave heartbeat

    async def end_round(self) -> None:
        pass

    def tasks(self) -> tuple[asyncio.Task[Any] | None, ...]:
        return ()

    def tasks_to_end(self) -> tuple[asyncio.Task[Any] | None, ...]:
        return (self._leave_task,)

    def commit_must_wait(self) -> bool:
        return False

    # -- what commits, the consumer and the listener plumbing ask ---------------------------------------
    def commit_identity(self) -> tuple[int, str]:
        return self.member.epoch, self.member.member_id

    def member_error(self, code: int) -> None:
        """A commit found the member unknown or fenced: its partitions are lost; rejoin at epoch 0."""
        if verdict(code) is Outcome.LOST:
            self.member.fence()
            self._sync_generation()
        self._m.kick()

    def request_rejoin(self, reason: str) -> None:
        self._driver.wake()
        self._m.kick()

    def work_due(self) -> bool:
        return bool(self._m.lost or self._subs.needs_rejoin
                    or self.member.state in (MemberState.RECONCILING, MemberState.FENCED))

    def has_assignment(self) -> bool:
        return (self._subs.partitions_auto_assigned and self.member.assignment_known and not self.work_due()
                and self.member.state in (MemberState.STABLE, MemberState.ACKNOWLEDGING))

    async def membership_round(self, deadline: float | None = None) -> None:
        """Subscription changes, lost partitions and new targets: applied here, in the membership task."""
        if not self._subs.partitions_auto_assigned:
            return
        if self._subs.needs_rejoin:
            self._subs.needs_rejoin = False
            self._subscribe_member()
        if self.member.state is MemberState.FENCED:
            await self._m.lose_partitions(self._subs.assigned_partitions())
            if self.member.state is MemberState.FENCED:
                self.member.rejoin()
                self._sync_generation()
                self._driver.wake()
        else:
            await self._m.lose_partitions()
        for _ in range(3):  # a target that arrived while the listener ran is applied right after
            if self.member.state is not MemberState.RECONCILING or self._m.closing:
                break
            await self._reconcile()

    def _subscribe_member(self) -> None:
        if self._subs.subscription_type is SubscriptionType.AUTO_PATTERN and self._subs.pattern is not None:
            # The coordinator matches the regex (RE2/J syntax on Kafka) against every topic itself.
            self.member.subscribe((), self._subs.pattern.pattern)
        else:
            self.member.subscribe(tuple(self._subs.subscription))
        self._driver.wake()

    def _sync_generation(self) -> None:
        """The classic plumbing reads ``generation``: in KIP-848 the member epoch plays its part."""
        self.generation = self.member.epoch if self.member.epoch > 0 and self.member.state not in (
            MemberState.FENCED, MemberState.UNSUBSCRIBED, MemberState.JOINING) else -1
        self.member_id = self.member.member_id

    # -- reconciliation ----------------------------------------------------------------------------------
    async def _reconcile(self) -> None:
        """Apply the member's target: commit and revoke what left, add what came, report it."""
        target = self.member.target
        if target is None:
            return
        started = time.monotonic()
        names = self._resolve(target)
        if len(names) < len(target):
            # New topic ids (a new topic matched the regex, or metadata is behind): look them up once,
            # with the subscribed names (a regex subscription has every topic tracked already).
            try:
                await cv.refresh_metadata(self._client, set(self._subs.subscription) or None,
                                          self._m.request_timeout)
            except Errors.KafkaError as exc:
                log.debug("group %r: metadata for the assigned topics failed: %s", self.group_id, exc)
            names = self._resolve(target)
        new = {TopicPartition(names[tid], p) for tid, ps in target.items() if tid in names for p in ps}
        owned = self._subs.assigned_partitions()
        revoked, added = owned - new, new - owned
        if revoked and not await self._m.commit_then_revoke(revoked):
            return  # fenced while committing: the next round hands everything over as lost instead
        if added:
            self._subs.add_assigned(added)
            await call_listener(self._subs.listener, "on_partitions_assigned", added)
        held = {tid: ps for tid, ps in target.items() if tid in names}
        self.member.reconciled(target, held, complete=len(names) == len(target))
        self._sync_generation()
        self._driver.wake()
        if revoked or added:
            self._m.metrics.rebalances += 1
            self._m.metrics.last_rebalance = time.monotonic()
            self._m.metrics.rebalance_latency.record(time.monotonic() - started)
        log.info("group %r epoch %s: owns %s (revoked %d, added %d)", self.group_id, self.member.epoch,
                 sorted(new), len(revoked), len(added))

    def still_member(self) -> bool:
        return self.member.state is MemberState.RECONCILING  # not fenced, failed or left meanwhile

    def _resolve(self, target: dict[uuid.UUID, frozenset[int]]) -> dict[uuid.UUID, str]:
        out: dict[uuid.UUID, str] = {}
        for tid in target:
            name = cv.topic_name(self._client, tid)
            if name is not None:
                out[tid] = name
        return out

    # -- the heartbeat: the shared driver, and what this protocol adds to it ---------------------------
    async def heartbeat_version(self, node: int) -> int:
        return await heartbeat_version(
            self._client, node, ConsumerGroupHeartbeatRequest, f"group {self.group_id!r}",
            "group_protocol='consumer' needs ConsumerGroupHeartbeat (KIP-848, Kafka 4.0 or later)",
            "; use group_protocol='classic' with this broker")

    def send_timeout(self, interval: float) -> float:
        return max(interval, self._m.request_timeout)

    def before_turn(self) -> None:
        pass

    def longest_idle(self) -> float:
        return float("inf")

    async def hold(self, now: float) -> bool:
        if now < self._not_before:
            await asyncio.sleep(self._not_before - now)
            return True
        if self.member.state is not MemberState.JOINING and self._m.poll_overdue():
            await self._poll_timeout()
            return True
        if self._leave_task is not None and not self._leave_task.done():
            await asyncio.wait([self._leave_task])  # an unsubscribe's leave goes before a join
            return True
        return False

    async def answered(self, outcome: Outcome, resp: Any) -> None:
        m = self.member
        self._sync_generation()
        self._m.metrics.heartbeats += 1
        self._m.metrics.last_heartbeat = time.monotonic()
        if resp.error_code:
            log.info("group %r: heartbeat of member %s answered %s", self.group_id, m.member_id,
                     Errors.for_code(resp.error_code).message)
        if outcome is Outcome.LOST:
            self._not_before = time.monotonic() + self.session.backoff.delay(1)
            self._m.kick()
        elif outcome is Outcome.RECONCILE:
            self._m.kick()
        elif outcome is Outcome.FATAL and m.fatal_error is not None:
            self._m.fail(m.fatal_error)

    def failed(self, exc: BaseException) -> bool:
        self._m.fail(exc)
        return True

    async def _poll_timeout(self) -> None:
        """poll() overdue by max_poll_interval_ms: leave so a live member gets the partitions (as Java)."""
        self._m.warn_poll_overdue()
        req = self.member.poll_timeout()
        self._sync_generation()
        if req is not None:
            await self._send_leave(req, time.monotonic() + self._m.request_timeout)
        self._m.kick()

    def leave_in_background(self, reason: str) -> None:
        """unsubscribe(): the member is out at once (a subscribe() right after joins afresh); the leave
        heartbeat goes out before any join (the heartbeat task waits for it)."""
        self._m.forget_lost()
        req = self.member.leave()
        self._sync_generation()
        if req is not None:
            self._leave_task = asyncio.get_running_loop().create_task(
                self._leave_then_forget(req, reason), name="aiokafka_lite-leave-group")

    async def _leave_then_forget(self, req: ConsumerGroupHeartbeatRequest, reason: str) -> None:
        await self._send_leave(req, time.monotonic() + self._m.request_timeout)
        log.info("group %r: member %s left (%s)", self.group_id, self.member.member_id, reason)
        self.member.left()
        self._sync_generation()

    async def leave(self, reason: str, deadline: float) -> None:
        """Leave with epoch -1 (a static member: -2, so the coordinator keeps its partitions for it)."""
        req = self.member.leave()
        try:
            if req is not None:
                await self._send_leave(req, deadline)
                log.info("group %r: member %s left (%s)", self.group_id, self.member.member_id, reason)
        finally:
            self.member.left()
            self._sync_generation()

    async def _send_leave(self, req: ConsumerGroupHeartbeatRequest, deadline: float) -> None:
        await self.session.leave(ConsumerGroupHeartbeatRequest, lambda _version: req, deadline,
                                 self.heartbeat_version)

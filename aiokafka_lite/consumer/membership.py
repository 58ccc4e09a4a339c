"""Group membership as every consumer group protocol has it (classic and KIP-848), written once: the
lifecycle (start, close), what ``poll()`` does, the membership task, commits and auto-commit, and the one
path that gives partitions up (commit, then revoke; or lose them when the membership is over).

The division of work follows the Java 4 consumer's background thread (and aiokafka's coordination task). A
heartbeat task (the member's :class:`~.group_session.GroupSession` runs the one
:class:`~.heartbeat_driver.HeartbeatDriver`) keeps the session alive and notices rebalances, expired
generations and a missed ``max_poll_interval_ms``; a membership task
(:meth:`GroupMembership.membership_round`) does what changes what the application owns: revoking
(committing first, with auto-commit), joining or reconciling, installing the assignment, and the rebalance
listener's callbacks. So a consumer that is started but not polling still gets its assignment
(``Consumer.wait_for_assignment``) and follows rebalances, until ``max_poll_interval_ms`` after its last
``poll()``: then it leaves the group and does no group work until the application polls again, as
Java's. ``poll()`` (:meth:`GroupMembership.poll`) only raises what the membership task ran into, wakes
it, and auto-commits the positions of records handed out before (at-least-once).

What each protocol does differently is a small strategy the membership holds, behind the narrow
:class:`GroupProtocol`: :class:`.coordinator.ClassicProtocol` (JoinGroup/SyncGroup, client-side assignors)
or :class:`.group848.KIP848Protocol` (targets from the coordinator's heartbeat answers). A strategy owns its
member's identity (generation or epoch, member id), its rounds and its leave; it gives partitions up only
through :meth:`GroupMembership.commit_then_revoke` and :meth:`GroupMembership.lose_partitions`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

from .. import errors as Errors
from .._tasks import cancel_and_wait
from ..structs import TopicPartition
from . import cluster_view as cv
from .committer import Committer
from .group_session import GroupSession
from .listener import call_listener
from .metrics import ConsumerMetrics
from .subscription import SubscriptionState

log = logging.getLogger("aiokafka_lite.consumer.coordinator")

__all__ = ["GroupMembership", "GroupProtocol"]


class GroupProtocol(Protocol):
    """What the membership asks of its group protocol (classic, KIP-848): the member's identity, the
    rounds that change what it owns, and its leave. Everything else is the membership's, written once."""

    #: The classic generation; in KIP-848 the member epoch while it has one. -1: none.
    generation: int
    member_id: str

    async def check_broker(self, timeout: float) -> None:
        """At the consumer's start(): fail now, within ``timeout``, when the coordinator cannot serve this
        protocol (KIP-848 needs ConsumerGroupHeartbeat) rather than at the first poll()."""

    def start(self) -> None:
        """Start the protocol's background tasks (the heartbeat task first)."""

    def work_due(self) -> bool:
        """Does the membership task have something to do (poll()'s fast path is closed meanwhile)?"""

    def has_assignment(self) -> bool:
        """The group's assignment for the current subscription is installed (listener called) and no
        rebalance is pending: what ``Consumer.wait_for_assignment`` waits for."""

    async def membership_round(self, deadline: float | None = None) -> None:
        """Group work due now (the membership task's round)."""

    def still_member(self) -> bool:
        """The membership that owns the partitions being revoked is still current."""

    def commit_identity(self) -> tuple[int, str]:
        """(generation or member epoch, member id) a commit carries."""

    def request_rejoin(self, reason: str) -> None: ...

    def member_error(self, code: int) -> None:
        """A commit or a heartbeat answer found the membership over (group_rules): what was owned is
        lost; rejoin."""

    def leave_in_background(self, reason: str) -> None:
        """unsubscribe(): leave now so the group rebalances; a later subscribe() joins afresh."""

    async def leave(self, reason: str, deadline: float) -> None:
        """close(): leave the group, if this member leaves at all (a static classic member does not)."""

    async def before_close(self) -> None:
        """The first step of close() (KIP-848: no heartbeat may go out after the leave heartbeat)."""

    async def end_round(self) -> None:
        """close(): end a rebalance round under way before committing and leaving."""

    def tasks(self) -> tuple[asyncio.Task[Any] | None, ...]:
        """The protocol's long-running tasks, which raise_if_failed() watches."""

    def tasks_to_end(self) -> tuple[asyncio.Task[Any] | None, ...]:
        """The tasks close() ends (the long-running ones, a round and a leave under way)."""

    def commit_must_wait(self) -> bool:
        """An auto-commit now would queue behind a request the coordinator holds (classic JoinGroup)."""


class ProtocolParts:
    """What each protocol strategy keeps of the membership it serves, set once: the references both
    strategies read on every round, and their identity before a first join."""

    def __init__(self, membership: GroupMembership, client: cv.ConsumerClient,
                 subscription: SubscriptionState) -> None:
        self._m = membership
        self._client = client
        self._subs = subscription
        self.session = membership.session
        self.group_id = membership.group_id
        #: The generation (classic) or member epoch (KIP-848) commits carry. -1: none.
        self.generation = -1
        self._leave_task: asyncio.Task[None] | None = None


class GroupMembership:
    """One consumer's membership in one group, whatever its protocol (``self.protocol``)."""

    def __init__(self, client: cv.ConsumerClient, subscription: SubscriptionState, config: Any,
                 metrics: ConsumerMetrics, on_revoke: Callable[[set[TopicPartition]], None],
                 protocol: Callable[[GroupMembership], GroupProtocol]) -> None:
        self._client = client
        self._subs = subscription
        self.metrics = metrics
        self._on_revoke = on_revoke
        self.group_id: str = config.group_id
        self.group_instance_id: str | None = config.group_instance_id
        self.client_rack: str | None = getattr(config, "client_rack", None)
        self._max_poll_interval = config.max_poll_interval_ms / 1000.0
        self.rebalance_timeout_ms: int = config.rebalance_timeout_ms or config.max_poll_interval_ms
        self.request_timeout = config.request_timeout_ms / 1000.0
        self._auto_commit: bool = config.enable_auto_commit
        self._auto_commit_interval = config.auto_commit_interval_ms / 1000.0
        self.committer = Committer(client, self, self.group_id, config.isolation_level == "read_committed",
                                   config.retry_backoff_ms, config.retry_backoff_max_ms)
        #: The coordinator, the heartbeat task and the leave: what every group protocol shares.
        self.session = GroupSession(client, self.group_id, f"group {self.group_id!r}", config)
        #: Partitions owned in a generation that ended behind our back (lost, not revoked): changed only
        #: by mark_lost(), forget_lost() and the two ways out, _revoke() and lose_partitions().
        self._lost: set[TopicPartition] = set()
        self._auto_commit_task: asyncio.Task[None] | None = None
        #: One commit at a time, in the order asked (aiokafka's commit lock): an auto-commit started by a
        #: poll never lands after, and overwrites, a commit() the application made after that poll.
        self._commit_lock = asyncio.Lock()
        self._commits = 0  # commits made; _committed_at: the partition's last one
        self._committed_at: dict[TopicPartition, int] = {}
        self._failure: BaseException | None = None
        self._last_poll = time.monotonic()
        self._next_auto_commit = time.monotonic() + self._auto_commit_interval
        self._last_committed: dict[TopicPartition, Any] = {}
        #: Set as close() begins: a poll() resuming after an await must not touch the join state.
        self._closing = False
        #: Set when the membership task finished a round or failed: a waiting poll() looks again.
        self.wakeup = asyncio.Event()
        #: Set when the membership task has work (rejoin, lost partitions, a new subscription).
        self._work = asyncio.Event()
        self._membership_task: asyncio.Task[None] | None = None
        #: The protocol's strategy, made last: it may read everything above.
        self.protocol = protocol(self)

    # -- what the protocol owns ------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        return self.protocol.generation

    @property
    def member_id(self) -> str:
        return self.protocol.member_id

    def work_due(self) -> bool:
        return self.protocol.work_due()

    def has_assignment(self) -> bool:
        return self.protocol.has_assignment()

    async def membership_round(self, deadline: float | None = None) -> None:
        await self.protocol.membership_round(deadline)

    def request_rejoin(self, reason: str) -> None:
        self.protocol.request_rejoin(reason)

    def member_error(self, code: int) -> None:
        self.protocol.member_error(code)

    def leave_in_background(self, reason: str) -> None:
        self.protocol.leave_in_background(reason)

    # -- partitions lost, waiting for the membership task to hand them over ------------------------------
    @property
    def lost(self) -> frozenset[TopicPartition]:
        """Partitions marked lost that the membership task has not handed over yet (lose_partitions)."""
        return frozenset(self._lost)

    def mark_lost(self, partitions: AbstractSet[TopicPartition]) -> None:
        """The generation that owned ``partitions`` ended behind our back (a heartbeat or a commit found
        it over, or the poll deadline passed): the membership task hands them over as lost, not revoked."""
        self._lost |= partitions

    def forget_lost(self) -> None:
        """Nothing is to be reported lost any more: a new generation's assignment superseded it, or the
        member left (unsubscribe)."""
        self._lost = set()

    # -- lifecycle ---------------------------------------------------------------------------------------
    async def check_broker(self, timeout: float) -> None:
        """The consumer's start(): a coordinator that cannot serve the group protocol fails it now."""
        await self.protocol.check_broker(timeout)

    @property
    def closing(self) -> bool:
        """close() has begun: a round resuming after an await must not touch the join state."""
        return self._closing

    @property
    def coordinator_id(self) -> int | None:
        return self.session.coordinator_id

    def start(self) -> None:
        self._last_poll = time.monotonic()  # max_poll_interval_ms counts from start() until the first poll
        self.protocol.start()
        if self._membership_task is None:
            self._membership_task = asyncio.get_running_loop().create_task(
                self._membership_loop(), name="aiokafka_lite-group-membership")
            self._work.set()

    async def close(self, commit: bool, timeout: float) -> None:
        """Auto-commit (if on), give partitions back through the listener, leave the group, stop tasks."""
        await self.protocol.before_close()
        self._closing = True
        self.wakeup.set()
        self._work.set()
        deadline = time.monotonic() + timeout
        membership = self._membership_task
        if membership is not None and not membership.done() and membership is not asyncio.current_task():
            # A rebalance in progress (maybe inside the listener) ends here; close() hands back what is owned.
            await cancel_and_wait(membership, quiet=True)
        await self.protocol.end_round()
        try:
            if commit and self._auto_commit and self._subs.assigned_partitions():
                await self._commit_consumed(None, max(0.1, deadline - time.monotonic()), "on close")
            if self._subs.partitions_auto_assigned and self.generation >= 0:
                assigned = self._subs.assigned_partitions()
                if assigned:
                    await call_listener(self._subs.listener, "on_partitions_revoked", assigned)
            await self.protocol.leave("the consumer is closing", deadline)
        finally:
            await self.session.close()
            await cancel_and_wait(*self.protocol.tasks_to_end(), self._auto_commit_task,
                                  self._membership_task, quiet=True)

    def raise_if_failed(self) -> None:
        if self._failure is not None:
            exc, self._failure = self._failure, None
            self._work.set()  # the membership task waited for the application to learn it; go on
            raise exc
        for task in (self.session.heartbeat_task, *self.protocol.tasks(), self._membership_task):
            if task is not None and task.done() and not self.session.closed:
                exc2 = task.exception() if not task.cancelled() else None
                raise Errors.KafkaError(f"the group task {task.get_name()} ended unexpectedly: {exc2!r}") \
                    from exc2

    def fail(self, exc: BaseException) -> None:
        """A background task failed: the next poll() raises ``exc``."""
        self._failure = exc
        self.wakeup.set()

    def kick(self) -> None:
        """Group work is due (a rejoin, lost partitions, a new subscription): wake the membership task."""
        self._work.set()
        self.wakeup.set()

    # -- coordinator discovery (the session's) ------------------------------------------------------------
    async def ensure_coordinator(self, deadline: float) -> int:
        """The coordinator's node id, looked up (once for all concurrent callers) when unknown."""
        return await self.session.ensure_coordinator(deadline)

    def coordinator_dead(self, reason: BaseException) -> None:
        self.session.coordinator_dead(reason)

    # -- what commits ask ---------------------------------------------------------------------------------
    def commit_identity(self) -> tuple[int, str]:
        if self._subs.partitions_auto_assigned:
            return self.protocol.commit_identity()
        return -1, ""  # a "simple" consumer group: assign() plus commits

    # -- what poll() does, and the membership task -------------------------------------------------------
    def note_poll(self) -> None:
        self._last_poll = time.monotonic()
        self.metrics.last_poll = self._last_poll

    def quick_poll(self) -> bool:
        """The poll-time work when there is none but auto-commit: True if nothing else is due."""
        if self._failure is not None or self.work_due():
            return False
        self.note_poll()
        self._maybe_auto_commit()
        return True

    def poll(self) -> None:
        """The application polled: raise what the membership task ran into, wake it if work is due (after
        a poll timeout it waits for this), auto-commit what earlier polls handed out."""
        self.raise_if_failed()
        self.note_poll()
        self.wakeup.clear()
        if self.work_due():
            self._work.set()
        self._maybe_auto_commit()

    def poll_overdue(self) -> bool:
        """poll() was not called for max_poll_interval_ms (counted from start() before the first poll)."""
        return time.monotonic() - self._last_poll > self._max_poll_interval

    def warn_poll_overdue(self) -> None:
        log.warning("group %r: poll() was not called for over %.0f s (max_poll_interval_ms); leaving the "
                    "group so its partitions go to a live member", self.group_id, self._max_poll_interval)

    async def _membership_loop(self) -> None:
        """Rounds of group work whenever some is due, until close(). A round's failure waits for the
        application to learn it (the next poll() raises it), then the work resumes: one try per poll, as
        when poll() did the work itself."""
        while not self._closing:
            await self._work.wait()
            self._work.clear()
            if self._closing:
                return
            if self._failure is not None or self.poll_overdue() or not self.work_due():
                continue
            try:
                await self.membership_round()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._closing:
                    return
                log.info("group %r: rebalance failed: %r", self.group_id, exc)
                self.fail(exc)
            else:
                self.wakeup.set()
                if not self._work.is_set() and self.work_due():
                    # Not finished (a KIP-848 target naming topics metadata does not know yet): again soon.
                    await asyncio.sleep(self.session.backoff.delay(1))
                    self._work.set()

    # -- giving partitions up: commit, then revoke; or lose them ---------------------------------------
    async def commit_then_revoke(self, revoked: set[TopicPartition]) -> bool:
        """The one path that gives partitions up on a rebalance (classic eager or cooperative, KIP-848):
        with auto-commit, commit what was consumed from them first (the next owner starts there); then
        revoke them and call the listener. False, with nothing revoked, when the membership is over (maybe
        the commit just found out): the caller hands them over as lost instead (group_rules)."""
        if self._auto_commit and self.generation >= 0 and self.protocol.still_member():
            await self._commit_consumed(revoked, self.request_timeout, "before revoking")
        if not self.protocol.still_member():
            return False
        await self._revoke(revoked)
        return True

    async def _commit_consumed(self, partitions: set[TopicPartition] | None, timeout: float,
                               when: str) -> None:
        """Auto-commit what was consumed from ``partitions`` (None: from all) before they are given up (on a
        rebalance or on close): their next owner starts there. A failure is logged, never raised: the
        partitions are given up anyway."""
        consumed = self._subs.all_consumed()
        if partitions is not None:
            consumed = {tp: om for tp, om in consumed.items() if tp in partitions}
        try:
            await self.commit_sync(consumed, timeout)
        except Errors.KafkaError as exc:
            log.warning("group %r: auto-commit %s failed: %s", self.group_id, when, exc)

    async def _revoke(self, revoked: set[TopicPartition]) -> None:
        self._lost -= revoked
        await self._give_up(revoked, "on_partitions_revoked")

    async def lose_partitions(self, extra: AbstractSet[TopicPartition] = frozenset()) -> None:
        """Hand what was marked lost, and ``extra`` (each as far as still assigned), over as lost: no commit,
        the listener's on_partitions_lost."""
        lost = (self._lost | extra) & self._subs.assigned_partitions()
        self._lost = set()
        if not lost:
            return
        log.info("group %r: partitions lost: %s", self.group_id, sorted(lost))
        await self._give_up(lost, "on_partitions_lost")

    async def _give_up(self, partitions: set[TopicPartition], callback: str) -> None:
        """Revoked or lost: no more records from ``partitions`` reach poll(); the listener is told, and
        they leave the assignment whatever it does."""
        self._subs.mark_pending_revocation(partitions)
        try:
            await call_listener(self._subs.listener, callback, partitions)
        finally:
            self._subs.remove_assigned(partitions)
            self._on_revoke(partitions)

    # -- commits -----------------------------------------------------------------------------------------
    def _still_held(self, offsets: dict[TopicPartition, Any]) -> Callable[[], None]:
        """The check the committer runs before every attempt of a commit asked now (by commit(), or by the
        poll that starts an auto-commit). A partition held now and given up by then may already be read by
        its next owner from the offset committed then: committing it would repeat or skip records (a retry
        carries the new generation, which the broker accepts), so the commit fails instead. That holds for
        a partition given up and assigned back too (the eager protocol does so on every rebalance): its
        new assignment started from the offset committed then, so the check asks for the very state the
        partition had when the commit was asked, not only that it is assigned now."""
        held = {tp: st for tp in offsets if (st := self._subs.state_or_none(tp)) is not None} \
            if self._subs.partitions_auto_assigned else {}

        def still_held() -> None:
            lost = [tp for tp, st in held.items() if not self._subs.holds(tp, st)]
            if lost:
                raise Errors.CommitFailedError(
                    f"commit of {lost[0].topic}[{lost[0].partition}] failed: the group rebalanced meanwhile "
                    "and the partition was given up; poll() again")

        return still_held

    async def commit_sync(self, offsets: dict[TopicPartition, Any], timeout: float) -> None:
        """Commit ``offsets`` after any commit already under way; KafkaTimeoutError after ``timeout``;
        CommitFailedError (before any attempt) once a partition held now has been given up, even if it
        was assigned back since."""
        deadline = time.monotonic() + timeout
        still_held = self._still_held(offsets)
        try:
            await asyncio.wait_for(self._commit_lock.acquire(), timeout)
        except TimeoutError:
            raise Errors.KafkaTimeoutError(f"commit waited {timeout:.1f}s for the commit before it") from None
        try:
            await self._commit_now(offsets, max(0.0, deadline - time.monotonic()), still_held)
        finally:
            self._commit_lock.release()

    async def _commit_now(self, offsets: dict[TopicPartition, Any], timeout: float,
                          before_each: Callable[[], None] | None = None) -> None:
        await self.committer.commit(offsets, timeout, before_each)
        self._last_committed.update(offsets)
        self._commits += 1
        self._committed_at.update(dict.fromkeys(offsets, self._commits))

    def _maybe_auto_commit(self) -> None:
        if not self._auto_commit or time.monotonic() < self._next_auto_commit:
            return
        if self.protocol.commit_must_wait():
            return  # it would queue behind the JoinGroup on the coordinator's connection
        if self._auto_commit_task is not None and not self._auto_commit_task.done():
            return
        self._next_auto_commit = time.monotonic() + self._auto_commit_interval
        pending = {tp: om for tp, om in self._subs.all_consumed().items()
                   if self._last_committed.get(tp) != om}
        if not pending:
            return
        if self._subs.partitions_auto_assigned and self.generation < 0:
            return
        self._auto_commit_task = asyncio.get_running_loop().create_task(
            self._auto_commit_once(pending, self._commits, self._still_held(pending)),
            name="aiokafka_lite-auto-commit")

    async def _auto_commit_once(self, offsets: dict[TopicPartition, Any], since: int,
                                still_held: Callable[[], None]) -> None:
        """Commit what the poll that started it had handed out before, in turn with commit(); a partition
        committed since that poll keeps the newer commit, and one given up since fails it, as commit()."""
        try:
            async with self._commit_lock:
                offsets = {tp: om for tp, om in offsets.items() if self._committed_at.get(tp, 0) <= since}
                if offsets:
                    await self._commit_now(offsets, self.request_timeout, still_held)
        except Errors.KafkaError as exc:
            log.warning("group %r: auto-commit failed: %s", self.group_id, exc)

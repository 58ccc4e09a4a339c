"""What the consumer reads: subscribed topics or pattern, assigned partitions and their positions.

This is sans-I/O state shared by the fetcher, the group coordinator and the public methods. The single source
of truth for "may this partition be fetched now" lives here (:meth:`SubscriptionState.fetchable_partitions`),
so that pause, seek, a pending offset reset or a pending revocation all stop fetching the same way.

A partition's ``position`` is the offset of the next record to hand to the application; it moves only when
records are handed out (or on seek/reset), never when they are merely fetched and buffered.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import IllegalStateError
from ..structs import OffsetAndMetadata, TopicPartition


class SubscriptionType(enum.Enum):
    NONE = 0
    AUTO_TOPICS = 1
    AUTO_PATTERN = 2
    USER_ASSIGNED = 3


class OffsetResetStrategy(enum.IntEnum):
    """Where a partition without a valid position starts; values are ListOffsets timestamps."""

    LATEST = -1
    EARLIEST = -2
    NONE = 0

    @classmethod
    def from_setting(cls, name: str) -> OffsetResetStrategy:
        return {"latest": cls.LATEST, "earliest": cls.EARLIEST, "none": cls.NONE}[name]


class PartitionState:
    """Per assigned partition: position, pause flag, pending reset and the last known watermarks."""

    __slots__ = (
        "high_watermark",
        "last_fetch_ms",
        "last_stable_offset",
        "leader_epoch",
        "log_start_offset",
        "paused",
        "pending_revocation",
        "position",
        "reset_strategy",
    )

    def __init__(self) -> None:
        self.position: int | None = None
        self.leader_epoch: int = -1
        self.paused = False
        self.pending_revocation = False
        self.reset_strategy: OffsetResetStrategy | None = None
        self.high_watermark: int = -1
        self.last_stable_offset: int = -1
        self.log_start_offset: int = -1
        self.last_fetch_ms: int = -1  # wall clock of the last good fetch answer (last_poll_timestamp)

    @property
    def has_valid_position(self) -> bool:
        return self.position is not None and self.reset_strategy is None

    @property
    def fetchable(self) -> bool:
        return (not self.paused and not self.pending_revocation and self.position is not None
                and self.reset_strategy is None)

    def seek(self, offset: int, leader_epoch: int = -1) -> None:
        self.position = offset
        self.leader_epoch = leader_epoch
        self.reset_strategy = None

    def __repr__(self) -> str:
        return (f"PartitionState(position={self.position}, paused={self.paused}, "
                f"reset={self.reset_strategy}, hw={self.high_watermark})")


class SubscriptionState:
    """Subscription and assignment bookkeeping (the Java client's SubscriptionState, for asyncio).

    ``on_change`` is called after every change that may make a partition fetchable (assignment, seek,
    resume, reset done); the fetcher passes a callback that wakes its task.
    """

    def __init__(self, default_reset: str = "latest") -> None:
        self.default_reset = OffsetResetStrategy.from_setting(default_reset)
        self.subscription_type = SubscriptionType.NONE
        self.subscription: frozenset[str] = frozenset()
        self.pattern: re.Pattern[str] | None = None
        #: Topics of the whole group (the leader needs metadata for all of them to assign).
        self.group_subscription: set[str] = set()
        self.listener: Any = None
        #: Call the listener's on_partitions_revoked before every JoinGroup, even with nothing owned (as
        #: aiokafka does; the native default follows Java: only when something is revoked).
        self.revoke_before_every_join = False
        self._assignment: dict[TopicPartition, PartitionState] = {}
        #: Bumped on every assignment change so that stale work (a fetch, a commit) can tell.
        self.assignment_id = 0
        #: Bumped on every change that may call for a position lookup (assignment, seek, reset).
        self.version = 0
        #: Set when the subscription changed and the group must rebalance.
        self.needs_rejoin = False
        self._listeners: list[Callable[[], None]] = []

    # -- listeners ---------------------------------------------------------------------------------------
    def add_change_listener(self, callback: Callable[[], None]) -> None:
        self._listeners.append(callback)

    def _changed(self) -> None:
        for cb in self._listeners:
            cb()

    # -- subscribing -------------------------------------------------------------------------------------
    def _set_type(self, kind: SubscriptionType) -> None:
        if self.subscription_type not in (SubscriptionType.NONE, kind):
            raise IllegalStateError(
                "subscribe() (topics or pattern) and assign() exclude each other; call unsubscribe() first")
        self.subscription_type = kind

    def subscribe(self, topics: Iterable[str], listener: Any = None) -> bool:
        """Subscribe to exactly ``topics``; returns True when the set changed (a rebalance is needed)."""
        topics = frozenset(topics)
        for t in topics:
            if not isinstance(t, str) or not t:
                raise ValueError(f"topic names must be non-empty strings, got {t!r}")
        self._set_type(SubscriptionType.AUTO_TOPICS)
        self.listener = listener
        return self.change_subscription(topics)

    def subscribe_pattern(self, pattern: str | re.Pattern[str], listener: Any = None) -> None:
        """Subscribe to every topic whose name matches ``pattern`` (``re.match``, as aiokafka does)."""
        self._set_type(SubscriptionType.AUTO_PATTERN)
        self.pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
        self.listener = listener
        self.needs_rejoin = True

    def matches_pattern(self, topic: str) -> bool:
        return self.pattern is not None and self.pattern.match(topic) is not None

    def change_subscription(self, topics: Iterable[str]) -> bool:
        topics = frozenset(topics)
        if topics == self.subscription:
            return False
        self.subscription = topics
        self.group_subscription |= topics
        self.needs_rejoin = True
        return True

    def assign_from_user(self, partitions: Iterable[TopicPartition]) -> None:
        """Manual assignment (no group); keeps the state of partitions that stay assigned."""
        parts = set(partitions)
        for tp in parts:
            if not isinstance(tp, TopicPartition):
                raise ValueError(f"assign() takes TopicPartition objects, got {tp!r}")
        self._set_type(SubscriptionType.USER_ASSIGNED)
        self._replace_assignment(parts)

    def unsubscribe(self) -> None:
        self.subscription = frozenset()
        self.group_subscription = set()
        self.pattern = None
        self.listener = None
        self.revoke_before_every_join = False
        self.subscription_type = SubscriptionType.NONE
        self._replace_assignment(set())

    @property
    def partitions_auto_assigned(self) -> bool:
        return self.subscription_type in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN)

    # -- assignment --------------------------------------------------------------------------------------
    def _replace_assignment(self, partitions: set[TopicPartition]) -> None:
        old = self._assignment
        self._assignment = {tp: old.get(tp) or PartitionState() for tp in sorted(partitions)}
        self.assignment_id += 1
        self.version += 1
        self._changed()

    def assign_from_subscribed(self, partitions: Iterable[TopicPartition]) -> None:
        """Install the assignment the group gave us; states of retained partitions survive."""
        if not self.partitions_auto_assigned:
            raise IllegalStateError("assignment from the group without a subscription")
        parts = set(partitions)
        if self.subscription_type is SubscriptionType.AUTO_TOPICS:
            foreign = {tp for tp in parts if tp.topic not in self.subscription}
            if foreign:
                # A leader with a different view assigned topics we do not want; keep the rest.
                parts -= foreign
        self._replace_assignment(parts)

    def add_assigned(self, partitions: Iterable[TopicPartition]) -> None:
        """Cooperative rebalancing: add partitions, keeping the others as they are."""
        self._replace_assignment(set(self._assignment) | set(partitions))

    def remove_assigned(self, partitions: Iterable[TopicPartition]) -> None:
        self._replace_assignment(set(self._assignment) - set(partitions))

    def assigned_partitions(self) -> set[TopicPartition]:
        return set(self._assignment)

    def is_assigned(self, tp: TopicPartition) -> bool:
        return tp in self._assignment

    def state(self, tp: TopicPartition) -> PartitionState:
        try:
            return self._assignment[tp]
        except KeyError:
            raise IllegalStateError(f"partition {tp.topic}[{tp.partition}] is not assigned") from None

    def state_or_none(self, tp: TopicPartition) -> PartitionState | None:
        return self._assignment.get(tp)

    def holds(self, tp: TopicPartition, state: PartitionState) -> bool:
        """``tp`` has been assigned the whole time since ``state`` was its state: a partition given up and
        assigned back gets a fresh state, so this tells "held throughout" from "assigned now"."""
        return self._assignment.get(tp) is state

    def mark_pending_revocation(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            st = self._assignment.get(tp)
            if st is not None:
                st.pending_revocation = True

    # -- positions ---------------------------------------------------------------------------------------
    def seek(self, tp: TopicPartition, offset: int, leader_epoch: int = -1) -> None:
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise ValueError(f"offset must be a non-negative int, got {offset!r}")
        self.state(tp).seek(offset, leader_epoch)
        self.version += 1
        self._changed()

    def position(self, tp: TopicPartition) -> int | None:
        return self.state(tp).position

    def request_reset(self, tp: TopicPartition, strategy: OffsetResetStrategy | None = None) -> None:
        st = self.state(tp)
        st.reset_strategy = self.default_reset if strategy is None else strategy
        self.version += 1

    def reset_done(self, tp: TopicPartition, offset: int, leader_epoch: int = -1) -> None:
        st = self._assignment.get(tp)
        if st is not None and st.reset_strategy is not None:
            st.seek(offset, leader_epoch)
            self.version += 1
            self._changed()

    def partitions_needing_reset(self) -> dict[TopicPartition, OffsetResetStrategy]:
        return {tp: st.reset_strategy for tp, st in self._assignment.items()
                if st.reset_strategy is not None and st.reset_strategy is not OffsetResetStrategy.NONE}

    def missing_positions(self) -> set[TopicPartition]:
        """Assigned partitions with neither a position nor a pending reset (need the committed offset)."""
        return {tp for tp, st in self._assignment.items()
                if st.position is None and st.reset_strategy is None}

    def has_all_positions(self) -> bool:
        return all(st.has_valid_position for st in self._assignment.values())

    # -- pause -------------------------------------------------------------------------------------------
    def pause(self, tp: TopicPartition) -> None:
        self.state(tp).paused = True

    def resume(self, tp: TopicPartition) -> None:
        self.state(tp).paused = False
        self._changed()

    def paused_partitions(self) -> set[TopicPartition]:
        return {tp for tp, st in self._assignment.items() if st.paused}

    # -- for the fetcher and commits ---------------------------------------------------------------------
    def fetchable_partitions(self) -> list[TopicPartition]:
        return [tp for tp, st in self._assignment.items() if st.fetchable]

    def is_fetchable(self, tp: TopicPartition) -> bool:
        st = self._assignment.get(tp)
        return st is not None and st.fetchable

    def all_consumed(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """Positions to commit: every assigned partition with a valid position."""
        return {tp: OffsetAndMetadata(st.position, "", st.leader_epoch)
                for tp, st in self._assignment.items()
                if st.position is not None and st.reset_strategy is None}

    def lead(self, tp: TopicPartition) -> int | None:
        """Records between the log start and the position (None until a fetch told the log start)."""
        st = self._assignment.get(tp)
        if st is None or st.position is None or st.log_start_offset < 0:
            return None
        return max(0, st.position - st.log_start_offset)

    def lag(self, tp: TopicPartition) -> int | None:
        st = self._assignment.get(tp)
        if st is None or st.position is None or st.high_watermark < 0:
            return None
        return max(0, st.high_watermark - st.position)

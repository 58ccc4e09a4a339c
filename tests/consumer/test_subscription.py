"""Subscription state: what is fetchable, positions, pause, resets, and the subscribe/assign exclusivity."""

from __future__ import annotations

import pytest

from aiokafka_lite.consumer.subscription import OffsetResetStrategy, SubscriptionState
from aiokafka_lite.errors import IllegalStateError
from aiokafka_lite.structs import TopicPartition as TP

A, B = TP("t", 0), TP("t", 1)


def test_fetchable_needs_position_not_paused_not_resetting() -> None:
    s = SubscriptionState("earliest")
    changes = []
    s.add_change_listener(lambda: changes.append(1))
    s.assign_from_user([A, B])
    assert s.fetchable_partitions() == []
    assert s.missing_positions() == {A, B}
    s.seek(A, 5)
    assert s.fetchable_partitions() == [A]
    s.request_reset(B)
    assert s.partitions_needing_reset() == {B: OffsetResetStrategy.EARLIEST}
    assert s.missing_positions() == set()
    s.reset_done(B, 0)
    assert s.fetchable_partitions() == [A, B]
    s.pause(A)
    assert s.fetchable_partitions() == [B] and s.paused_partitions() == {A}
    s.resume(A)
    assert s.fetchable_partitions() == [A, B]
    s.mark_pending_revocation([B])
    assert s.fetchable_partitions() == [A]
    assert changes, "the fetcher must be woken by changes"
    assert s.all_consumed()[A].offset == 5


def test_reassignment_keeps_state_of_retained_partitions() -> None:
    s = SubscriptionState()
    s.subscribe(["t"])
    s.assign_from_subscribed([A, B])
    s.seek(A, 10)
    s.pause(A)
    aid = s.assignment_id
    s.assign_from_subscribed([A, TP("t", 2), TP("other", 0)])
    assert s.assignment_id > aid
    assert s.position(A) == 10 and s.paused_partitions() == {A}
    assert s.assigned_partitions() == {A, TP("t", 2)}  # a topic we did not subscribe to is refused
    with pytest.raises(IllegalStateError):
        s.position(B)


def test_subscribe_and_assign_are_exclusive() -> None:
    s = SubscriptionState()
    s.subscribe(["t"])
    with pytest.raises(IllegalStateError):
        s.assign_from_user([A])
    s.unsubscribe()
    s.assign_from_user([A])
    with pytest.raises(IllegalStateError):
        s.subscribe_pattern("t.*")


def test_bad_input() -> None:
    s = SubscriptionState()
    s.assign_from_user([A])
    with pytest.raises(ValueError):
        s.seek(A, -1)
    with pytest.raises(ValueError):
        s.assign_from_user([("t", 0, 1)])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        SubscriptionState().subscribe([""])


def test_pattern_matches_like_aiokafka() -> None:
    s = SubscriptionState()
    s.subscribe_pattern("^ev.*")
    assert s.matches_pattern("events") and not s.matches_pattern("xevents")


def test_lag() -> None:
    s = SubscriptionState()
    s.assign_from_user([A])
    assert s.lag(A) is None
    s.seek(A, 3)
    s.state(A).high_watermark = 10
    assert s.lag(A) == 7


def test_holds_tells_held_throughout_from_given_up_and_assigned_back() -> None:
    """What the commit rule asks (membership._still_held): a partition kept across assignment changes
    keeps its state; one given up and assigned back has a new one."""
    s = SubscriptionState()
    s.subscribe(["t"])
    s.assign_from_subscribed([A, B])
    a_state, b_state = s.state(A), s.state(B)
    s.remove_assigned([B])
    s.add_assigned([B, TP("t", 2)])
    assert s.holds(A, a_state) and s.is_assigned(B)
    assert not s.holds(B, b_state)

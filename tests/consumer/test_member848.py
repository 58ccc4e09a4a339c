"""The KIP-848 member state machine from values alone: what each heartbeat carries, what each answer
means. The end-to-end counterpart (mock cluster, confluent-kafka peers) is test_group848.py; the cases
here the mock cannot produce are a remote assignor, UNRELEASED_INSTANCE_ID from a live duplicate, and
GROUP_MAX_SIZE_REACHED (rdkafka_mock_cgrp.c has none of them)."""

from __future__ import annotations

import uuid

import pytest

from aiokafka_lite import errors as Errors
from aiokafka_lite.consumer.member848 import ConsumerGroupMember, MemberState, Outcome
from aiokafka_lite.protocol.messages.consumer_group_heartbeat import (
    Assignment,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatResponseTopicPartitions,
)

T1, T2 = uuid.uuid4(), uuid.uuid4()


def answer(epoch: int, assignment: dict[uuid.UUID, list[int]] | None = None, error: int = 0,
           interval: int = 400) -> ConsumerGroupHeartbeatResponse:
    asg = None if assignment is None else Assignment(topic_partitions=[
        ConsumerGroupHeartbeatResponseTopicPartitions(topic_id=t, partitions=ps)
        for t, ps in assignment.items()])
    return ConsumerGroupHeartbeatResponse(error_code=error, member_epoch=epoch,
                                          heartbeat_interval_ms=interval, assignment=asg)


def member(**kw: object) -> ConsumerGroupMember:
    m = ConsumerGroupMember("g", rebalance_timeout_ms=300000, **kw)  # type: ignore[arg-type]
    m.subscribe(("b", "a"))
    return m


def joined(m: ConsumerGroupMember, assignment: dict[uuid.UUID, list[int]]) -> None:
    m.heartbeat_request()
    assert m.on_response(answer(5, assignment)) is Outcome.RECONCILE
    target = m.target
    assert target is not None
    m.reconciled(target, target)
    m.heartbeat_request()
    assert m.on_response(answer(5)) is Outcome.NOTHING
    assert m.state is MemberState.STABLE


def test_join_is_a_full_heartbeat_with_a_client_made_member_id() -> None:
    m = member(instance_id="i1", rack_id="r1", server_assignor="uniform")
    req = m.heartbeat_request()
    assert len(m.member_id) == 22 and req.member_id == m.member_id  # KIP-1082: the client makes it
    assert req.member_epoch == 0 and req.rebalance_timeout_ms == 300000
    assert req.subscribed_topic_names == ["a", "b"] and req.subscribed_topic_regex == ""  # both, always
    assert (req.instance_id, req.rack_id, req.server_assignor) == ("i1", "r1", "uniform")
    assert req.topic_partitions == []


def test_regex_subscription_goes_as_regex_with_empty_names() -> None:
    m = ConsumerGroupMember("g", rebalance_timeout_ms=1000)
    m.subscribe((), "^orders-.*")
    req = m.heartbeat_request()
    assert req.subscribed_topic_names == [] and req.subscribed_topic_regex == "^orders-.*"


def test_assignment_is_reconciled_then_acknowledged_then_only_changes_are_sent() -> None:
    m = member()
    m.heartbeat_request()
    assert m.on_response(answer(3, {T1: [0, 1]})) is Outcome.RECONCILE
    assert m.epoch == 3 and m.heartbeat_interval_ms == 400 and m.state is MemberState.RECONCILING
    target = m.target
    assert target == {T1: frozenset({0, 1})}
    # A heartbeat while poll() has not applied it yet reports the old ownership (nothing changed).
    mid = m.heartbeat_request()
    assert mid.member_epoch == 3 and mid.topic_partitions is None and mid.subscribed_topic_names is None
    m.on_response(answer(3))
    m.reconciled(target, target)
    assert m.state is MemberState.ACKNOWLEDGING and m.urgent()
    ack = m.heartbeat_request()
    assert ack.topic_partitions is not None
    assert [(tp.topic_id, tp.partitions) for tp in ack.topic_partitions] == [(T1, [0, 1])]
    assert ack.rebalance_timeout_ms == -1 and ack.subscribed_topic_names is None
    m.on_response(answer(3))
    assert m.state is MemberState.STABLE and not m.urgent()
    quiet = m.heartbeat_request()
    assert quiet.topic_partitions is None and quiet.subscribed_topic_names is None


def test_a_target_that_arrives_during_reconciliation_stays_due() -> None:
    m = member()
    m.heartbeat_request()
    m.on_response(answer(3, {T1: [0, 1]}))
    first = m.target
    assert first is not None
    m.heartbeat_request()
    m.on_response(answer(3, {T1: [0]}))  # the coordinator changed its mind while poll() applied `first`
    m.reconciled(first, first)
    assert m.state is MemberState.RECONCILING and m.target == {T1: frozenset({0})}


def test_unknown_topic_ids_keep_the_reconciliation_due() -> None:
    m = member()
    m.heartbeat_request()
    m.on_response(answer(3, {T1: [0], T2: [1]}))
    target = m.target
    assert target is not None
    m.reconciled(target, {T1: target[T1]}, complete=False)
    assert m.state is MemberState.RECONCILING and m.owned == {T1: frozenset({0})}


def test_subscription_change_is_sent_at_once() -> None:
    m = member()
    joined(m, {T1: [0]})
    m.subscribe(("c",))
    assert m.urgent()
    req = m.heartbeat_request()
    assert req.subscribed_topic_names == ["c"] and req.subscribed_topic_regex == ""


@pytest.mark.parametrize("cls", [Errors.FencedMemberEpochError, Errors.UnknownMemberIdError])
def test_fenced_member_loses_everything_and_rejoins_at_epoch_zero_with_its_id(cls: type) -> None:
    m = member()
    joined(m, {T1: [0, 1]})
    member_id = m.member_id
    m.heartbeat_request()
    assert m.on_response(answer(-1, error=cls.errno)) is Outcome.LOST
    assert m.state is MemberState.FENCED and not m.wants_heartbeat()
    m.rejoin()
    req = m.heartbeat_request()
    assert (req.member_id, req.member_epoch, req.topic_partitions) == (member_id, 0, [])
    assert req.subscribed_topic_names == ["a", "b"] and req.rebalance_timeout_ms == 300000


@pytest.mark.parametrize(("cls", "says"), [
    (Errors.UnreleasedInstanceIdError, "group_instance_id 'i1' is still a member"),
    (Errors.GroupMaxSizeReachedError, "group.consumer.max.size"),
    (Errors.UnsupportedAssignorError, "group_remote_assignor 'fancy'"),
    (Errors.GroupAuthorizationFailedError, "ConsumerGroupHeartbeat of member"),
    (Errors.InvalidRegularExpressionError, "ConsumerGroupHeartbeat of member"),
])
def test_errors_no_retry_fixes_are_fatal_and_say_why(cls: type, says: str) -> None:
    m = member(instance_id="i1", server_assignor="fancy")
    m.heartbeat_request()
    assert m.on_response(answer(0, error=cls.errno)) is Outcome.FATAL
    assert isinstance(m.fatal_error, cls) and says in str(m.fatal_error)
    assert m.state is MemberState.FATAL and not m.wants_heartbeat()


@pytest.mark.parametrize(("cls", "outcome"), [
    (Errors.NotCoordinatorError, Outcome.COORDINATOR_MOVED),
    (Errors.CoordinatorNotAvailableError, Outcome.COORDINATOR_MOVED),
    (Errors.CoordinatorLoadInProgressError, Outcome.RETRY)])
def test_coordinator_trouble_keeps_the_membership_and_resends_everything(cls: type, outcome: Outcome) -> None:
    m = member()
    joined(m, {T1: [0]})
    m.heartbeat_request()
    assert m.on_response(answer(0, error=cls.errno)) is outcome
    assert m.state is MemberState.STABLE and m.owned == {T1: frozenset({0})} and m.epoch == 5
    req = m.heartbeat_request()
    assert req.subscribed_topic_names == ["a", "b"] and req.topic_partitions is not None
    assert req.member_epoch == 5


def test_lost_request_makes_the_next_heartbeat_full() -> None:
    m = member()
    joined(m, {T1: [0]})
    m.heartbeat_request()
    m.request_failed()
    req = m.heartbeat_request()
    assert req.topic_partitions is not None and req.rebalance_timeout_ms == 300000


@pytest.mark.parametrize(("instance_id", "epoch"), [(None, -1), ("i1", -2)])
def test_leave_sends_minus_one_or_minus_two_for_static(instance_id: str | None, epoch: int) -> None:
    m = member(instance_id=instance_id)
    joined(m, {T1: [0]})
    req = m.leave()
    assert req is not None and req.member_epoch == epoch and req.instance_id == instance_id
    m.heartbeat_request() if m.wants_heartbeat() else None
    assert m.on_response(answer(5, {T1: [0, 1]})) is Outcome.NOTHING  # an answer in flight is moot now
    m.left()
    assert m.state is MemberState.UNSUBSCRIBED and m.owned == {} and m.epoch == 0


def test_leave_before_joining_sends_nothing() -> None:
    m = member()
    assert m.leave() is None and m.state is MemberState.UNSUBSCRIBED


def test_poll_timeout_leaves_and_waits_for_poll_to_rejoin() -> None:
    m = member()
    joined(m, {T1: [0]})
    req = m.poll_timeout()
    assert req is not None and req.member_epoch == -1
    assert m.state is MemberState.FENCED and not m.wants_heartbeat()
    m.rejoin()
    assert m.state is MemberState.JOINING and m.heartbeat_request().member_epoch == 0


def test_epoch_zero_answer_keeps_sending_full_heartbeats() -> None:
    # librdkafka's mock answers epoch 0 to a member it cannot assign anything yet (rdkafka_mock_cgrp.c).
    m = member()
    m.heartbeat_request()
    m.on_response(answer(0))
    req = m.heartbeat_request()
    assert req.member_epoch == 0 and req.rebalance_timeout_ms == 300000 and req.subscribed_topic_names

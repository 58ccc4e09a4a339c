"""Share consumer state machines, sans-I/O: membership (share_member.py) and acknowledgements
(share_acks.py), with the real generated codecs."""

from __future__ import annotations

import uuid

import pytest

from aiokafka_lite import errors as Errors
from aiokafka_lite.consumer.share_acks import ACCEPT, GAP, REJECT, RELEASE, AckBook, ack_batches
from aiokafka_lite.consumer.share_member import Outcome, ShareGroupMember
from aiokafka_lite.protocol.messages.share_fetch import AcknowledgementBatch
from aiokafka_lite.protocol.messages.share_group_heartbeat import (
    Assignment,
    ShareGroupHeartbeatResponse,
    TopicPartitions,
)
from aiokafka_lite.structs import TopicPartition as TP

TID = uuid.uuid4()


def _answer(epoch: int = 1, error: int = 0, parts: list[int] | None = None) -> ShareGroupHeartbeatResponse:
    assignment = None if parts is None else Assignment(topic_partitions=[TopicPartitions(topic_id=TID,
                                                                                         partitions=parts)])
    return ShareGroupHeartbeatResponse(throttle_time_ms=0, error_code=error, error_message=None,
                                       member_id=None, member_epoch=epoch, heartbeat_interval_ms=300,
                                       assignment=assignment)


def test_join_sends_everything_then_only_changes() -> None:
    m = ShareGroupMember("g", rack_id="r1")
    assert not m.wants_heartbeat()
    m.subscribe(("b", "a"))
    assert m.urgent()
    req = m.heartbeat_request()
    assert (req.member_epoch, req.rack_id, req.subscribed_topic_names) == (0, "r1", ["a", "b"])
    assert m.on_response(_answer(3, parts=[0, 1])) is Outcome.ASSIGNED
    assert m.assignment == {TID: frozenset({0, 1})} and m.heartbeat_interval_ms == 300
    assert not m.urgent()
    req = m.heartbeat_request()
    assert (req.member_epoch, req.rack_id, req.subscribed_topic_names) == (3, None, None)
    assert m.on_response(_answer(3, parts=[0, 1])) is Outcome.NOTHING  # same assignment again
    m.subscribe(("a",))
    assert m.urgent() and m.heartbeat_request().subscribed_topic_names == ["a"]


def test_fenced_or_unknown_rejoins_with_the_same_id() -> None:
    m = ShareGroupMember("g")
    m.subscribe(("t",))
    m.heartbeat_request()
    m.on_response(_answer(5))
    for err in (Errors.FencedMemberEpochError, Errors.UnknownMemberIdError):
        member_id = m.member_id
        m.heartbeat_request()
        assert m.on_response(_answer(error=err.errno)) is Outcome.REJOIN
        req = m.heartbeat_request()
        assert (req.member_epoch, req.member_id, req.subscribed_topic_names) == (0, member_id, ["t"])
        m.on_response(_answer(7))


def test_coordinator_moves_retries_and_fatal_errors() -> None:
    m = ShareGroupMember("g")
    m.subscribe(("t",))
    m.heartbeat_request()
    assert m.on_response(_answer(error=Errors.NotCoordinatorError.errno)) is Outcome.COORDINATOR_MOVED
    m.heartbeat_request()
    assert m.on_response(_answer(error=Errors.CoordinatorLoadInProgressError.errno)) is Outcome.RETRY
    m.heartbeat_request()
    assert m.on_response(_answer(error=Errors.GroupMaxSizeReachedError.errno)) is Outcome.FATAL
    assert isinstance(m.fatal_error, Errors.GroupMaxSizeReachedError) and not m.wants_heartbeat()


def test_leave_only_when_joined() -> None:
    m = ShareGroupMember("g")
    m.subscribe(("t",))
    assert m.leave_request() is None
    m = ShareGroupMember("g")
    m.subscribe(("t",))
    m.heartbeat_request()
    m.on_response(_answer(2, parts=[0]))
    req = m.leave_request()
    assert req is not None and req.member_epoch == -1 and m.assignment == {}
    assert m.on_response(_answer(3, parts=[0])) is Outcome.NOTHING  # an answer in flight while leaving


def test_acknowledgements_become_batches() -> None:
    acks = {5: ACCEPT, 6: ACCEPT, 7: ACCEPT, 9: RELEASE, 10: REJECT, 12: GAP}
    batches = ack_batches(acks, AcknowledgementBatch)
    got = [(b.first_offset, b.last_offset, b.acknowledge_types) for b in batches]
    assert got == [(5, 7, [ACCEPT]), (9, 10, [RELEASE, REJECT]), (12, 12, [GAP])]


def test_fresh_acquisitions_once_per_delivery() -> None:
    book, tp = AckBook(), TP("t", 0)
    assert book.acquired(tp, [(0, 4, 1)]) == {o: 1 for o in range(5)}
    assert book.acquired(tp, [(0, 4, 1), (5, 5, 1)]) == {5: 1}  # a broker listing what we hold again
    book.delivered(tp, range(6))
    book.acknowledge(tp, 0, RELEASE)
    with pytest.raises(Errors.IllegalStateError):
        book.acknowledge(tp, 0, ACCEPT)  # twice
    with pytest.raises(Errors.IllegalStateError):
        book.acknowledge(tp, 99, ACCEPT)  # never delivered
    assert book.acquired(tp, [(0, 0, 1)]) == {}  # acknowledged, not sent yet: not fresh
    assert book.unacknowledged() == 5
    book.accept_delivered()
    sent = book.take_pending([tp])
    assert sent == {tp: {0: RELEASE, **{o: ACCEPT for o in range(1, 6)}}}
    assert book.acquired(tp, [(0, 0, 2)]) == {0: 2}  # released, then delivered again
    assert book.acquired(tp, [(1, 1, 2)]) == {1: 2}  # a lock that ran out: a new delivery


def test_gaps_and_lost_sessions() -> None:
    book, tp = AckBook(), TP("t", 0)
    book.acquired(tp, [(0, 3, 1)])
    book.gaps(tp, [1, 2])
    book.delivered(tp, [0, 3])
    lost = book.forget([tp])
    assert lost == {tp: {0: ACCEPT, 3: ACCEPT, 1: GAP, 2: GAP}}
    assert not book.has_pending() and book.unacknowledged() == 0

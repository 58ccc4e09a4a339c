"""Error classes: codes, names and retriable flags follow Kafka's table."""

from __future__ import annotations

import pytest

from aiokafka_lite import errors


@pytest.mark.parametrize(
    ("code", "name", "retriable"),
    [
        (-1, "UNKNOWN_SERVER_ERROR", False),
        (1, "OFFSET_OUT_OF_RANGE", False),
        (6, "NOT_LEADER_OR_FOLLOWER", True),
        (7, "REQUEST_TIMED_OUT", True),
        (10, "MESSAGE_TOO_LARGE", False),
        (15, "COORDINATOR_NOT_AVAILABLE", True),
        (35, "UNSUPPORTED_VERSION", False),
        (45, "OUT_OF_ORDER_SEQUENCE_NUMBER", False),
        (47, "INVALID_PRODUCER_EPOCH", False),
        (51, "CONCURRENT_TRANSACTIONS", True),
        (79, "MEMBER_ID_REQUIRED", False),
        (90, "PRODUCER_FENCED", False),
    ],
)
def test_codes(code: int, name: str, retriable: bool) -> None:
    cls = errors.for_code(code)
    assert cls.errno == code
    assert cls.message == name
    assert cls.retriable is retriable
    assert issubclass(cls, errors.KafkaError)


def test_every_code_is_unique_and_named() -> None:
    assert len(errors.ERROR_CLASSES) >= 120
    names = {cls.message for cls in errors.ERROR_CLASSES.values()}
    assert len(names) == len(errors.ERROR_CLASSES)


def test_unknown_code_still_raises_a_kafka_error() -> None:
    with pytest.raises(errors.BrokerResponseError) as info:
        errors.raise_for_code(4242, "odd")
    assert "4242" in str(info.value)
    errors.raise_for_code(0)


def test_special_classes() -> None:
    assert errors.for_code(90) is errors.ProducerFenced
    assert errors.for_code(6).invalid_metadata
    assert issubclass(errors.ConfigError, ValueError)
    assert "MESSAGE_TOO_LARGE" in str(errors.MessageTooLargeError("over 1 MiB"))


def test_each_error_class_says_what_it_means_for_the_caller() -> None:
    """One classification (errors.py): call sites ask the class, none lists error numbers."""
    from aiokafka_lite import errors as E

    moved = {c for c, cls in E.ERROR_CLASSES.items() if cls.coordinator_moved}
    assert moved == {E.CoordinatorNotAvailableError.errno, E.NotCoordinatorError.errno} == {15, 16}
    assert E.coordinator_moved(16) and not E.coordinator_moved(0) and not E.coordinator_moved(6)
    unusable = {c for c, cls in E.ERROR_CLASSES.items() if cls.topic_unusable}
    assert unusable == {17, 29}
    # May have taken effect: an idempotent producer resends only under the same sequence.
    for cls in (E.KafkaTimeoutError, E.KafkaConnectionError, E.RequestTimedOutError, E.NetworkError):
        assert cls.unknown_outcome and cls.retriable, cls
    assert not E.NodeNotReadyError.unknown_outcome  # nothing was sent
    assert not E.NotLeaderOrFollowerError.unknown_outcome
    for cls in (E.NotLeaderOrFollowerError, E.UnknownTopicOrPartitionError, E.NotControllerError,
                E.LeaderNotAvailableError, E.KafkaConnectionError):
        assert cls.invalid_metadata, cls
    assert not E.NotCoordinatorError.invalid_metadata

"""Every public name aiokafka code imports has a counterpart in aiokafka_lite.compat (checked against
the installed aiokafka itself), with the same error code where aiokafka's has one."""

from __future__ import annotations

import inspect

import aiokafka
import aiokafka.errors

import aiokafka_lite
import aiokafka_lite.compat as compat
from aiokafka_lite import errors


def test_every_aiokafka_error_name_exists_with_the_same_code() -> None:
    names = [n for n, v in vars(aiokafka.errors).items() if inspect.isclass(v) and issubclass(v, Exception)]
    assert len(names) > 100
    missing = [n for n in names if not hasattr(compat.errors, n)]
    assert missing == []
    for n in names:
        theirs, ours = getattr(aiokafka.errors, n), getattr(errors, n)
        assert issubclass(ours, Exception)
        if getattr(theirs, "errno", None) is not None and n != "KafkaError":
            assert ours.errno == theirs.errno, n


def test_client_names() -> None:
    for name in ("AIOKafkaProducer", "AIOKafkaConsumer", "AIOKafkaAdminClient", "ConsumerRebalanceListener",
                 "TopicPartition", "OffsetAndMetadata", "OffsetAndTimestamp", "RecordMetadata"):
        assert hasattr(compat, name), name
    for name in ("AIOKafkaProducer", "AIOKafkaConsumer", "ConsumerRebalanceListener", "TopicPartition",
                 "OffsetAndMetadata", "OffsetAndTimestamp"):
        assert hasattr(aiokafka, name), name  # names aiokafka itself exports at top level
    assert aiokafka_lite.ConsumerRebalanceListener is compat.ConsumerRebalanceListener


def test_errors_name_their_class_once() -> None:
    """A traceback prints "ConfigError: <message>"; the message must not repeat the class name."""
    exc = errors.ConfigError("setting 'linger_ms' must be >= 0")
    assert str(exc) == "setting 'linger_ms' must be >= 0"
    assert f"{type(exc).__name__}: {exc}".count("ConfigError") == 1
    too_large = errors.MessageTooLargeError("produce to t[0]")
    assert str(too_large).startswith("[Error 10] MESSAGE_TOO_LARGE: produce to t[0] (")
    try:
        aiokafka_lite.Producer(linger_ms=-1)
    except errors.ConfigError as e:
        assert "ConfigError" not in str(e)

"""Every error the client raises, rooted at :class:`KafkaError`.

Broker error codes map one-to-one onto :class:`BrokerResponseError` subclasses (``errno``, ``message``
and ``retriable`` follow Kafka's ``Errors`` table), so callers can catch a precise class or test
``err.retriable`` before deciding to retry. Client-side failures (timeouts, connections, corrupt bytes,
bad settings) have their own classes below.
"""

from __future__ import annotations

from typing import Any


class KafkaError(Exception):
    """Root of every error raised by aiokafka_lite."""

    retriable: bool = False
    #: True when the failure invalidates cached cluster metadata (a leader moved, a topic vanished).
    invalid_metadata: bool = False
    #: True when the request may still have taken effect (no answer came, or the broker timed out
    #: after writing): an idempotent producer resends such a batch only under its own sequence.
    unknown_outcome: bool = False
    #: True when the group or transaction coordinator moved or is not there yet: find it again, retry.
    coordinator_moved: bool = False
    #: True when a topic cannot be used at all (invalid name, not authorized): waiting does not help.
    topic_unusable: bool = False
    #: True when the broker says the client's view of the cluster is beyond repair (KIP-1102):
    #: forget the known brokers and bootstrap again from ``bootstrap_servers``.
    rebootstrap: bool = False
    #: True when the group coordinator no longer knows this member or its epoch (KIP-848): what it owned
    #: is lost (another member may have it now) and it rejoins from epoch 0.
    member_fenced: bool = False
    #: True when a commit carried an older member epoch than the coordinator's (KIP-848): the membership
    #: learns the new epoch from its next heartbeat, then the commit is retried.
    member_epoch_stale: bool = False

    def __str__(self) -> str:
        # Only the message: tracebacks and f"{type(e).__name__}: {e}" already name the class.
        if not self.args:
            return self.__class__.__name__
        return super().__str__()


class IllegalStateError(KafkaError):
    """A call made in a state that does not allow it (e.g. commit_transaction with none begun)."""


class IllegalArgumentError(KafkaError, ValueError):
    """An argument that can never be valid."""


class ConfigError(KafkaError, ValueError):
    """An unknown, ill-typed or out-of-range setting; the message names the setting."""


class KafkaTimeoutError(KafkaError):
    """An operation did not finish within its deadline (max_block_ms, request_timeout_ms, ...)."""

    retriable = True
    unknown_outcome = True


class KafkaConnectionError(KafkaError):
    """A broker could not be reached, or the connection broke while requests were in flight."""

    retriable = True
    invalid_metadata = True
    unknown_outcome = True


class NodeNotReadyError(KafkaConnectionError):
    """The connection to a node is in reconnect backoff."""

    unknown_outcome = False  # nothing was sent


class ProtocolError(KafkaError):
    """The peer sent bytes that do not follow the Kafka protocol (bad frame, wrong correlation id)."""


class CorruptRecordError(KafkaError):
    """A record batch failed validation: bad CRC, truncated data, impossible lengths, unknown codec.

    Raised by a consumer, it says where: ``topic``, ``partition``, ``offset`` (the bad batch's) and
    ``next_offset`` (seek there to skip it); None when raised outside a consumer.
    """

    topic: str | None = None
    partition: int | None = None
    offset: int | None = None
    next_offset: int | None = None


class AuthenticationFailedError(KafkaError):
    """TLS or SASL authentication failed; the message says which mechanism and why."""


class CommitFailedError(KafkaError):
    """An offset commit cannot succeed because the group rebalanced; the partitions were reassigned."""


class RecordTooLargeError(KafkaError, ValueError):
    """A record is larger than max_request_size or buffer_memory; it was refused before sending."""


class ClientClosedError(IllegalStateError):
    """The client was stopped: a call that waited on it, or was made after ``stop()``, cannot complete.

    Not retriable, so a retry loop ends at once instead of at its deadline. The network layer raises the
    subclass its owner names: :class:`ProducerClosedError` or :class:`ConsumerStoppedError`. An
    ``IllegalStateError``, as Java's clients raise ``IllegalStateException`` once closed.
    """


class ProducerClosedError(ClientClosedError):
    """The producer was stopped before the record could be delivered, or before the call was made."""


class ConsumerStoppedError(ClientClosedError):
    """The consumer was stopped while a call was waiting, or before the call was made."""


class NoOffsetForPartitionError(KafkaError):
    """No committed offset and auto_offset_reset='none'."""


class SerializationError(KafkaError):
    """A key or value serializer/deserializer raised; the original error is chained."""


class BrokerResponseError(KafkaError):
    """An error code returned by a broker; subclasses carry ``errno`` and ``message``."""

    errno: int = -1
    message: str = "UNKNOWN"
    description: str = ""

    def __str__(self) -> str:
        base = f"[Error {self.errno}] {self.message}"
        hint = getattr(self, "hint", "")
        if self.args:
            base = f"{base}: {Exception.__str__(self)}"
        size = getattr(self, "batch_bytes", None)
        if size is not None:
            records = getattr(self, "batch_records", None)
            base = f"{base}: the refused batch held {records} record(s) in {size} bytes"
        return f"{base} ({hint})" if hint else base


# The table of broker error classes lives in its own module; it needs BrokerResponseError above.
from ._broker_errors import *  # noqa: E402, F403
from ._broker_errors import (  # noqa: E402
    NotLeaderOrFollowerError,
    UnknownServerError,
    UnsupportedSaslMechanismError,
    UnsupportedVersionError,
)

#: Codes that mean cached metadata is stale: a leader, a topic or the controller (41) moved.
_INVALID_METADATA_CODES = {3, 5, 6, 9, 41, 74, 75, 100, 103}

ERROR_CLASSES: dict[int, type[BrokerResponseError]] = {}
for _cls in list(globals().values()):
    if isinstance(_cls, type) and issubclass(_cls, BrokerResponseError) and _cls is not BrokerResponseError:
        ERROR_CLASSES[_cls.errno] = _cls
        if _cls.errno in _INVALID_METADATA_CODES:
            _cls.invalid_metadata = True
del _cls

# Names used by aiokafka and kafka-python, so that moving to aiokafka_lite is a change of import.
NotLeaderForPartitionError = NotLeaderOrFollowerError
UnknownError = UnknownServerError
KafkaProtocolError = ProtocolError

# Client-side names: the class we raise in the same situation.
NoBrokersAvailable = KafkaConnectionError
KafkaUnavailableError = KafkaConnectionError
CorrelationIdError = ProtocolError
IncompatibleBrokerVersion = UnsupportedVersionError
AuthenticationMethodNotSupported = UnsupportedSaslMechanismError
KafkaConfigurationError = ConfigError
IllegalOperation = IllegalStateError
ProducerClosed = ProducerClosedError


class NoError(KafkaError):
    """aiokafka's name for code 0 (success); never raised."""

    errno = 0


# aiokafka raises these in situations this client has no counterpart for (its own request queueing,
# metadata and codec handling); they exist so that ``except`` clauses written for aiokafka import, and
# are never raised here.
class Cancelled(KafkaError):
    """aiokafka's; never raised by aiokafka_lite."""


class TooManyInFlightRequests(KafkaError):
    """aiokafka's; never raised by aiokafka_lite (requests are pipelined without that limit)."""


class StaleMetadata(KafkaError):
    """aiokafka's; never raised by aiokafka_lite (metadata is refreshed and retried)."""


class MetadataEmptyBrokerList(KafkaError):
    """aiokafka's; never raised by aiokafka_lite (an empty broker list raises KafkaConnectionError)."""


class UnrecognizedBrokerVersion(KafkaError):
    """aiokafka's; never raised by aiokafka_lite (versions are negotiated with ApiVersions)."""


class UnsupportedCodecError(KafkaError):
    """aiokafka's; never raised by aiokafka_lite (every codec is built in)."""


class QuotaViolationError(KafkaError):
    """aiokafka's; never raised by aiokafka_lite (throttling is honoured, not raised)."""



class UnknownErrorCodeError(BrokerResponseError):
    """A broker error code this client does not know."""


def for_code(code: int) -> type[BrokerResponseError]:
    """The class for a broker error code (never for 0, which is success)."""
    cls = ERROR_CLASSES.get(code)
    if cls is not None:
        return cls
    attrs = {"errno": code, "message": f"UNKNOWN_CODE_{code}"}
    return type(f"BrokerError{code}", (UnknownErrorCodeError,), attrs)


def coordinator_moved(code: int) -> bool:
    """Does broker error ``code`` mean the coordinator must be found again?"""
    return bool(code) and for_code(code).coordinator_moved


def raise_for_code(code: int, detail: Any = None) -> None:
    """Raise the error for ``code`` unless it is 0 (no error)."""
    if code:
        if detail is None:
            raise for_code(code)()
        raise for_code(code)(detail)

"""One class per broker error code (``errno``, ``message``, ``retriable``, as Kafka's ``Errors`` table has
them), plus what each code means for a caller where that is more than ``retriable`` (``unknown_outcome``,
``coordinator_moved``, ``topic_unusable``). Import them from :mod:`aiokafka_lite.errors`, which also
holds the client-side errors and the rest of the classification.
"""

from __future__ import annotations

from .errors import BrokerResponseError

__all__ = [
    "BrokerIdNotRegisteredError",
    "BrokerNotAvailableError",
    "ClusterAuthorizationFailedError",
    "ConcurrentTransactions",
    "ConcurrentTransactionsError",
    "CoordinatorLoadInProgressError",
    "CoordinatorNotAvailableError",
    "CorruptMessageError",
    "CorruptRecordException",
    "DelegationTokenAuthDisabled",
    "DelegationTokenAuthDisabledError",
    "DelegationTokenAuthorizationFailed",
    "DelegationTokenAuthorizationFailedError",
    "DelegationTokenExpired",
    "DelegationTokenExpiredError",
    "DelegationTokenNotFound",
    "DelegationTokenNotFoundError",
    "DelegationTokenOwnerMismatch",
    "DelegationTokenOwnerMismatchError",
    "DelegationTokenRequestNotAllowed",
    "DelegationTokenRequestNotAllowedError",
    "DuplicateBrokerRegistrationError",
    "DuplicateResourceError",
    "DuplicateSequenceNumber",
    "DuplicateSequenceNumberError",
    "DuplicateVoterError",
    "ElectionNotNeededError",
    "EligibleLeadersNotAvailableError",
    "FeatureUpdateFailedError",
    "FencedInstanceIdError",
    "FencedLeaderEpochError",
    "FencedMemberEpochError",
    "FencedStateEpochError",
    "FetchSessionIdNotFound",
    "FetchSessionIdNotFoundError",
    "FetchSessionTopicIdError",
    "GroupAuthorizationFailedError",
    "GroupCoordinatorNotAvailableError",
    "GroupIdNotFound",
    "GroupIdNotFoundError",
    "GroupLoadInProgressError",
    "GroupMaxSizeReachedError",
    "GroupSubscribedToTopicError",
    "IllegalGenerationError",
    "IllegalSaslStateError",
    "InconsistentClusterIdError",
    "InconsistentGroupProtocolError",
    "InconsistentTopicIdError",
    "InconsistentVoterSetError",
    "IneligibleReplicaError",
    "InvalidCommitOffsetSizeError",
    "InvalidConfigError",
    "InvalidConfigurationError",
    "InvalidFetchRequestError",
    "InvalidFetchSessionEpoch",
    "InvalidFetchSessionEpochError",
    "InvalidFetchSizeError",
    "InvalidGroupIdError",
    "InvalidMessageError",
    "InvalidPartitionsError",
    "InvalidPrincipalType",
    "InvalidPrincipalTypeError",
    "InvalidProducerEpoch",
    "InvalidProducerEpochError",
    "InvalidProducerIdMapping",
    "InvalidProducerIdMappingError",
    "InvalidRecordError",
    "InvalidRecordStateError",
    "InvalidRegistrationError",
    "InvalidRegularExpressionError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidRequestError",
    "InvalidRequiredAcksError",
    "InvalidSessionTimeoutError",
    "InvalidShareSessionEpochError",
    "InvalidTimestampError",
    "InvalidTopicError",
    "InvalidTransactionTimeout",
    "InvalidTransactionTimeoutError",
    "InvalidTxnState",
    "InvalidTxnStateError",
    "InvalidUpdateVersionError",
    "InvalidVoterKeyError",
    "KafkaStorageError",
    "LeaderNotAvailableError",
    "ListenerNotFound",
    "ListenerNotFoundError",
    "LogDirNotFound",
    "LogDirNotFoundError",
    "MemberIdRequired",
    "MemberIdRequiredError",
    "MessageSizeTooLargeError",
    "MessageTooLargeError",
    "MismatchedEndpointTypeError",
    "NetworkError",
    "NewLeaderElectedError",
    "NoReassignmentInProgressError",
    "NonEmptyGroup",
    "NonEmptyGroupError",
    "NotControllerError",
    "NotCoordinatorError",
    "NotCoordinatorForGroupError",
    "NotEnoughReplicasAfterAppendError",
    "NotEnoughReplicasError",
    "NotLeaderOrFollowerError",
    "OffsetMetadataTooLargeError",
    "OffsetMovedToTieredStorageError",
    "OffsetNotAvailableError",
    "OffsetOutOfRangeError",
    "OperationNotAttempted",
    "OperationNotAttemptedError",
    "OutOfOrderSequenceNumber",
    "OutOfOrderSequenceNumberError",
    "PolicyViolationError",
    "PositionOutOfRangeError",
    "PreferredLeaderNotAvailableError",
    "PrincipalDeserializationFailureError",
    "ProducerFenced",
    "ReassignmentInProgress",
    "ReassignmentInProgressError",
    "RebalanceInProgressError",
    "RebootstrapRequiredError",
    "RecordListTooLargeError",
    "ReplicaNotAvailableError",
    "RequestTimedOutError",
    "ResourceNotFoundError",
    "SaslAuthenticationFailed",
    "SaslAuthenticationFailedError",
    "SecurityDisabled",
    "SecurityDisabledError",
    "ShareSessionNotFoundError",
    "SnapshotNotFoundError",
    "StaleBrokerEpochError",
    "StaleControllerEpochError",
    "StaleLeaderEpochCodeError",
    "StaleMemberEpochError",
    "TelemetryTooLargeError",
    "ThrottlingQuotaExceededError",
    "TopicAlreadyExistsError",
    "TopicAuthorizationFailedError",
    "TopicDeletionDisabledError",
    "TransactionAbortableError",
    "TransactionCoordinatorFenced",
    "TransactionCoordinatorFencedError",
    "TransactionalIdAuthorizationFailed",
    "TransactionalIdAuthorizationFailedError",
    "TransactionalIdNotFoundError",
    "UnacceptableCredentialError",
    "UnknownControllerIdError",
    "UnknownLeaderEpochError",
    "UnknownMemberIdError",
    "UnknownProducerId",
    "UnknownProducerIdError",
    "UnknownServerError",
    "UnknownSubscriptionIdError",
    "UnknownTopicIdError",
    "UnknownTopicOrPartitionError",
    "UnreleasedInstanceIdError",
    "UnstableOffsetCommitError",
    "UnsupportedAssignorError",
    "UnsupportedCompressionTypeError",
    "UnsupportedEndpointTypeError",
    "UnsupportedForMessageFormatError",
    "UnsupportedSaslMechanismError",
    "UnsupportedVersionError",
    "VoterNotFoundError",
]

#: What to check when a batch is refused as too large, appended to the message: the broker's answer names
#: no size or setting.
_TOO_LARGE_HINT = (
    "the broker refused a record batch larger than the topic's max.message.bytes (broker-wide "
    "message.max.bytes, 1 MiB by default); a batch of several records was split and retried first, so a "
    "single record is this large: make it smaller, compress it (compression_type), or raise "
    "max.message.bytes; this producer's batch_size and max_request_size bound what it sends")


class _BatchTooLarge(BrokerResponseError):
    """A produce answer refusing a batch as too large (two codes, one meaning for the producer)."""

    #: Set by the producer: the refused batch's size in bytes and its record count.
    batch_bytes: int | None = None
    batch_records: int | None = None
    hint = _TOO_LARGE_HINT


class UnknownServerError(BrokerResponseError):
    errno = -1
    message = "UNKNOWN_SERVER_ERROR"
    retriable = False


class OffsetOutOfRangeError(BrokerResponseError):
    errno = 1
    message = "OFFSET_OUT_OF_RANGE"
    retriable = False


class CorruptMessageError(BrokerResponseError):
    errno = 2
    message = "CORRUPT_MESSAGE"
    retriable = True


class UnknownTopicOrPartitionError(BrokerResponseError):
    errno = 3
    message = "UNKNOWN_TOPIC_OR_PARTITION"
    retriable = True


class InvalidFetchSizeError(BrokerResponseError):
    errno = 4
    message = "INVALID_FETCH_SIZE"
    retriable = False


class LeaderNotAvailableError(BrokerResponseError):
    errno = 5
    message = "LEADER_NOT_AVAILABLE"
    retriable = True


class NotLeaderOrFollowerError(BrokerResponseError):
    errno = 6
    message = "NOT_LEADER_OR_FOLLOWER"
    retriable = True


class RequestTimedOutError(BrokerResponseError):
    errno = 7
    message = "REQUEST_TIMED_OUT"
    retriable = True
    unknown_outcome = True


class BrokerNotAvailableError(BrokerResponseError):
    errno = 8
    message = "BROKER_NOT_AVAILABLE"
    retriable = False


class ReplicaNotAvailableError(BrokerResponseError):
    errno = 9
    message = "REPLICA_NOT_AVAILABLE"
    retriable = True


class MessageTooLargeError(_BatchTooLarge):
    errno = 10
    message = "MESSAGE_TOO_LARGE"
    retriable = False


class StaleControllerEpochError(BrokerResponseError):
    errno = 11
    message = "STALE_CONTROLLER_EPOCH"
    retriable = False


class OffsetMetadataTooLargeError(BrokerResponseError):
    errno = 12
    message = "OFFSET_METADATA_TOO_LARGE"
    retriable = False


class NetworkError(BrokerResponseError):
    errno = 13
    message = "NETWORK_EXCEPTION"
    retriable = True
    unknown_outcome = True


class CoordinatorLoadInProgressError(BrokerResponseError):
    errno = 14
    message = "COORDINATOR_LOAD_IN_PROGRESS"
    retriable = True


class CoordinatorNotAvailableError(BrokerResponseError):
    errno = 15
    message = "COORDINATOR_NOT_AVAILABLE"
    retriable = True
    coordinator_moved = True


class NotCoordinatorError(BrokerResponseError):
    errno = 16
    message = "NOT_COORDINATOR"
    retriable = True
    coordinator_moved = True


class InvalidTopicError(BrokerResponseError):
    errno = 17
    message = "INVALID_TOPIC_EXCEPTION"
    retriable = False
    topic_unusable = True


class RecordListTooLargeError(_BatchTooLarge):
    errno = 18
    message = "RECORD_LIST_TOO_LARGE"
    retriable = False


class NotEnoughReplicasError(BrokerResponseError):
    errno = 19
    message = "NOT_ENOUGH_REPLICAS"
    retriable = True


class NotEnoughReplicasAfterAppendError(BrokerResponseError):
    errno = 20
    message = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
    retriable = True


class InvalidRequiredAcksError(BrokerResponseError):
    errno = 21
    message = "INVALID_REQUIRED_ACKS"
    retriable = False


class IllegalGenerationError(BrokerResponseError):
    errno = 22
    message = "ILLEGAL_GENERATION"
    retriable = False


class InconsistentGroupProtocolError(BrokerResponseError):
    errno = 23
    message = "INCONSISTENT_GROUP_PROTOCOL"
    retriable = False


class InvalidGroupIdError(BrokerResponseError):
    errno = 24
    message = "INVALID_GROUP_ID"
    retriable = False


class UnknownMemberIdError(BrokerResponseError):
    errno = 25
    message = "UNKNOWN_MEMBER_ID"
    retriable = False
    member_fenced = True


class InvalidSessionTimeoutError(BrokerResponseError):
    errno = 26
    message = "INVALID_SESSION_TIMEOUT"
    retriable = False


class RebalanceInProgressError(BrokerResponseError):
    errno = 27
    message = "REBALANCE_IN_PROGRESS"
    retriable = False


class InvalidCommitOffsetSizeError(BrokerResponseError):
    errno = 28
    message = "INVALID_COMMIT_OFFSET_SIZE"
    retriable = False


class TopicAuthorizationFailedError(BrokerResponseError):
    errno = 29
    message = "TOPIC_AUTHORIZATION_FAILED"
    retriable = False
    topic_unusable = True


class GroupAuthorizationFailedError(BrokerResponseError):
    errno = 30
    message = "GROUP_AUTHORIZATION_FAILED"
    retriable = False


class ClusterAuthorizationFailedError(BrokerResponseError):
    errno = 31
    message = "CLUSTER_AUTHORIZATION_FAILED"
    retriable = False


class InvalidTimestampError(BrokerResponseError):
    errno = 32
    message = "INVALID_TIMESTAMP"
    retriable = False


class UnsupportedSaslMechanismError(BrokerResponseError):
    errno = 33
    message = "UNSUPPORTED_SASL_MECHANISM"
    retriable = False


class IllegalSaslStateError(BrokerResponseError):
    errno = 34
    message = "ILLEGAL_SASL_STATE"
    retriable = False


class UnsupportedVersionError(BrokerResponseError):
    errno = 35
    message = "UNSUPPORTED_VERSION"
    retriable = False


class TopicAlreadyExistsError(BrokerResponseError):
    errno = 36
    message = "TOPIC_ALREADY_EXISTS"
    retriable = False


class InvalidPartitionsError(BrokerResponseError):
    errno = 37
    message = "INVALID_PARTITIONS"
    retriable = False


class InvalidReplicationFactorError(BrokerResponseError):
    errno = 38
    message = "INVALID_REPLICATION_FACTOR"
    retriable = False


class InvalidReplicaAssignmentError(BrokerResponseError):
    errno = 39
    message = "INVALID_REPLICA_ASSIGNMENT"
    retriable = False


class InvalidConfigError(BrokerResponseError):
    errno = 40
    message = "INVALID_CONFIG"
    retriable = False


class NotControllerError(BrokerResponseError):
    errno = 41
    message = "NOT_CONTROLLER"
    retriable = True


class InvalidRequestError(BrokerResponseError):
    errno = 42
    message = "INVALID_REQUEST"
    retriable = False


class UnsupportedForMessageFormatError(BrokerResponseError):
    errno = 43
    message = "UNSUPPORTED_FOR_MESSAGE_FORMAT"
    retriable = False


class PolicyViolationError(BrokerResponseError):
    errno = 44
    message = "POLICY_VIOLATION"
    retriable = False


class OutOfOrderSequenceNumberError(BrokerResponseError):
    errno = 45
    message = "OUT_OF_ORDER_SEQUENCE_NUMBER"
    retriable = False


class DuplicateSequenceNumberError(BrokerResponseError):
    errno = 46
    message = "DUPLICATE_SEQUENCE_NUMBER"
    retriable = False


class InvalidProducerEpochError(BrokerResponseError):
    errno = 47
    message = "INVALID_PRODUCER_EPOCH"
    retriable = False


class InvalidTxnStateError(BrokerResponseError):
    errno = 48
    message = "INVALID_TXN_STATE"
    retriable = False


class InvalidProducerIdMappingError(BrokerResponseError):
    errno = 49
    message = "INVALID_PRODUCER_ID_MAPPING"
    retriable = False


class InvalidTransactionTimeoutError(BrokerResponseError):
    errno = 50
    message = "INVALID_TRANSACTION_TIMEOUT"
    retriable = False


class ConcurrentTransactionsError(BrokerResponseError):
    errno = 51
    message = "CONCURRENT_TRANSACTIONS"
    retriable = True


class TransactionCoordinatorFencedError(BrokerResponseError):
    errno = 52
    message = "TRANSACTION_COORDINATOR_FENCED"
    retriable = False


class TransactionalIdAuthorizationFailedError(BrokerResponseError):
    errno = 53
    message = "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    retriable = False


class SecurityDisabledError(BrokerResponseError):
    errno = 54
    message = "SECURITY_DISABLED"
    retriable = False


class OperationNotAttemptedError(BrokerResponseError):
    errno = 55
    message = "OPERATION_NOT_ATTEMPTED"
    retriable = False


class KafkaStorageError(BrokerResponseError):
    errno = 56
    message = "KAFKA_STORAGE_ERROR"
    retriable = True


class LogDirNotFoundError(BrokerResponseError):
    errno = 57
    message = "LOG_DIR_NOT_FOUND"
    retriable = False


class SaslAuthenticationFailedError(BrokerResponseError):
    errno = 58
    message = "SASL_AUTHENTICATION_FAILED"
    retriable = False


class UnknownProducerIdError(BrokerResponseError):
    errno = 59
    message = "UNKNOWN_PRODUCER_ID"
    retriable = False


class ReassignmentInProgressError(BrokerResponseError):
    errno = 60
    message = "REASSIGNMENT_IN_PROGRESS"
    retriable = False


class DelegationTokenAuthDisabledError(BrokerResponseError):
    errno = 61
    message = "DELEGATION_TOKEN_AUTH_DISABLED"
    retriable = False


class DelegationTokenNotFoundError(BrokerResponseError):
    errno = 62
    message = "DELEGATION_TOKEN_NOT_FOUND"
    retriable = False


class DelegationTokenOwnerMismatchError(BrokerResponseError):
    errno = 63
    message = "DELEGATION_TOKEN_OWNER_MISMATCH"
    retriable = False


class DelegationTokenRequestNotAllowedError(BrokerResponseError):
    errno = 64
    message = "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"
    retriable = False


class DelegationTokenAuthorizationFailedError(BrokerResponseError):
    errno = 65
    message = "DELEGATION_TOKEN_AUTHORIZATION_FAILED"
    retriable = False


class DelegationTokenExpiredError(BrokerResponseError):
    errno = 66
    message = "DELEGATION_TOKEN_EXPIRED"
    retriable = False


class InvalidPrincipalTypeError(BrokerResponseError):
    errno = 67
    message = "INVALID_PRINCIPAL_TYPE"
    retriable = False


class NonEmptyGroupError(BrokerResponseError):
    errno = 68
    message = "NON_EMPTY_GROUP"
    retriable = False


class GroupIdNotFoundError(BrokerResponseError):
    errno = 69
    message = "GROUP_ID_NOT_FOUND"
    retriable = False


class FetchSessionIdNotFoundError(BrokerResponseError):
    errno = 70
    message = "FETCH_SESSION_ID_NOT_FOUND"
    retriable = True


class InvalidFetchSessionEpochError(BrokerResponseError):
    errno = 71
    message = "INVALID_FETCH_SESSION_EPOCH"
    retriable = True


class ListenerNotFoundError(BrokerResponseError):
    errno = 72
    message = "LISTENER_NOT_FOUND"
    retriable = True


class TopicDeletionDisabledError(BrokerResponseError):
    errno = 73
    message = "TOPIC_DELETION_DISABLED"
    retriable = False


class FencedLeaderEpochError(BrokerResponseError):
    errno = 74
    message = "FENCED_LEADER_EPOCH"
    retriable = True


class UnknownLeaderEpochError(BrokerResponseError):
    errno = 75
    message = "UNKNOWN_LEADER_EPOCH"
    retriable = True


class UnsupportedCompressionTypeError(BrokerResponseError):
    errno = 76
    message = "UNSUPPORTED_COMPRESSION_TYPE"
    retriable = False


class StaleBrokerEpochError(BrokerResponseError):
    errno = 77
    message = "STALE_BROKER_EPOCH"
    retriable = False


class OffsetNotAvailableError(BrokerResponseError):
    errno = 78
    message = "OFFSET_NOT_AVAILABLE"
    retriable = True


class MemberIdRequiredError(BrokerResponseError):
    errno = 79
    message = "MEMBER_ID_REQUIRED"
    retriable = False


class PreferredLeaderNotAvailableError(BrokerResponseError):
    errno = 80
    message = "PREFERRED_LEADER_NOT_AVAILABLE"
    retriable = True


class GroupMaxSizeReachedError(BrokerResponseError):
    errno = 81
    message = "GROUP_MAX_SIZE_REACHED"
    retriable = False


class FencedInstanceIdError(BrokerResponseError):
    errno = 82
    message = "FENCED_INSTANCE_ID"
    retriable = False


class EligibleLeadersNotAvailableError(BrokerResponseError):
    errno = 83
    message = "ELIGIBLE_LEADERS_NOT_AVAILABLE"
    retriable = True


class ElectionNotNeededError(BrokerResponseError):
    errno = 84
    message = "ELECTION_NOT_NEEDED"
    retriable = True


class NoReassignmentInProgressError(BrokerResponseError):
    errno = 85
    message = "NO_REASSIGNMENT_IN_PROGRESS"
    retriable = False


class GroupSubscribedToTopicError(BrokerResponseError):
    errno = 86
    message = "GROUP_SUBSCRIBED_TO_TOPIC"
    retriable = False


class InvalidRecordError(BrokerResponseError):
    errno = 87
    message = "INVALID_RECORD"
    retriable = False


class UnstableOffsetCommitError(BrokerResponseError):
    errno = 88
    message = "UNSTABLE_OFFSET_COMMIT"
    retriable = True


class ThrottlingQuotaExceededError(BrokerResponseError):
    errno = 89
    message = "THROTTLING_QUOTA_EXCEEDED"
    retriable = True


class ProducerFenced(BrokerResponseError):
    errno = 90
    message = "PRODUCER_FENCED"
    retriable = False


class ResourceNotFoundError(BrokerResponseError):
    errno = 91
    message = "RESOURCE_NOT_FOUND"
    retriable = False


class DuplicateResourceError(BrokerResponseError):
    errno = 92
    message = "DUPLICATE_RESOURCE"
    retriable = False


class UnacceptableCredentialError(BrokerResponseError):
    errno = 93
    message = "UNACCEPTABLE_CREDENTIAL"
    retriable = False


class InconsistentVoterSetError(BrokerResponseError):
    errno = 94
    message = "INCONSISTENT_VOTER_SET"
    retriable = False


class InvalidUpdateVersionError(BrokerResponseError):
    errno = 95
    message = "INVALID_UPDATE_VERSION"
    retriable = False


class FeatureUpdateFailedError(BrokerResponseError):
    errno = 96
    message = "FEATURE_UPDATE_FAILED"
    retriable = False


class PrincipalDeserializationFailureError(BrokerResponseError):
    errno = 97
    message = "PRINCIPAL_DESERIALIZATION_FAILURE"
    retriable = False


class SnapshotNotFoundError(BrokerResponseError):
    errno = 98
    message = "SNAPSHOT_NOT_FOUND"
    retriable = False


class PositionOutOfRangeError(BrokerResponseError):
    errno = 99
    message = "POSITION_OUT_OF_RANGE"
    retriable = False


class UnknownTopicIdError(BrokerResponseError):
    errno = 100
    message = "UNKNOWN_TOPIC_ID"
    retriable = True


class DuplicateBrokerRegistrationError(BrokerResponseError):
    errno = 101
    message = "DUPLICATE_BROKER_REGISTRATION"
    retriable = False


class BrokerIdNotRegisteredError(BrokerResponseError):
    errno = 102
    message = "BROKER_ID_NOT_REGISTERED"
    retriable = False


class InconsistentTopicIdError(BrokerResponseError):
    errno = 103
    message = "INCONSISTENT_TOPIC_ID"
    retriable = True


class InconsistentClusterIdError(BrokerResponseError):
    errno = 104
    message = "INCONSISTENT_CLUSTER_ID"
    retriable = False


class TransactionalIdNotFoundError(BrokerResponseError):
    errno = 105
    message = "TRANSACTIONAL_ID_NOT_FOUND"
    retriable = False


class FetchSessionTopicIdError(BrokerResponseError):
    errno = 106
    message = "FETCH_SESSION_TOPIC_ID_ERROR"
    retriable = True


class IneligibleReplicaError(BrokerResponseError):
    errno = 107
    message = "INELIGIBLE_REPLICA"
    retriable = False


class NewLeaderElectedError(BrokerResponseError):
    errno = 108
    message = "NEW_LEADER_ELECTED"
    retriable = False


class OffsetMovedToTieredStorageError(BrokerResponseError):
    errno = 109
    message = "OFFSET_MOVED_TO_TIERED_STORAGE"
    retriable = False


class FencedMemberEpochError(BrokerResponseError):
    errno = 110
    message = "FENCED_MEMBER_EPOCH"
    retriable = False
    member_fenced = True


class UnreleasedInstanceIdError(BrokerResponseError):
    errno = 111
    message = "UNRELEASED_INSTANCE_ID"
    retriable = False


class UnsupportedAssignorError(BrokerResponseError):
    errno = 112
    message = "UNSUPPORTED_ASSIGNOR"
    retriable = False


class StaleMemberEpochError(BrokerResponseError):
    errno = 113
    message = "STALE_MEMBER_EPOCH"
    retriable = False
    member_epoch_stale = True


class MismatchedEndpointTypeError(BrokerResponseError):
    errno = 114
    message = "MISMATCHED_ENDPOINT_TYPE"
    retriable = False


class UnsupportedEndpointTypeError(BrokerResponseError):
    errno = 115
    message = "UNSUPPORTED_ENDPOINT_TYPE"
    retriable = False


class UnknownControllerIdError(BrokerResponseError):
    errno = 116
    message = "UNKNOWN_CONTROLLER_ID"
    retriable = False


class UnknownSubscriptionIdError(BrokerResponseError):
    errno = 117
    message = "UNKNOWN_SUBSCRIPTION_ID"
    retriable = False


class TelemetryTooLargeError(BrokerResponseError):
    errno = 118
    message = "TELEMETRY_TOO_LARGE"
    retriable = False


class InvalidRegistrationError(BrokerResponseError):
    errno = 119
    message = "INVALID_REGISTRATION"
    retriable = False


class TransactionAbortableError(BrokerResponseError):
    errno = 120
    message = "TRANSACTION_ABORTABLE"
    retriable = False


class InvalidRecordStateError(BrokerResponseError):
    errno = 121
    message = "INVALID_RECORD_STATE"
    retriable = False


class ShareSessionNotFoundError(BrokerResponseError):
    errno = 122
    message = "SHARE_SESSION_NOT_FOUND"
    retriable = True


class InvalidShareSessionEpochError(BrokerResponseError):
    errno = 123
    message = "INVALID_SHARE_SESSION_EPOCH"
    retriable = True


class FencedStateEpochError(BrokerResponseError):
    errno = 124
    message = "FENCED_STATE_EPOCH"
    retriable = False


class InvalidVoterKeyError(BrokerResponseError):
    errno = 125
    message = "INVALID_VOTER_KEY"
    retriable = False


class DuplicateVoterError(BrokerResponseError):
    errno = 126
    message = "DUPLICATE_VOTER"
    retriable = False


class VoterNotFoundError(BrokerResponseError):
    errno = 127
    message = "VOTER_NOT_FOUND"
    retriable = False


class InvalidRegularExpressionError(BrokerResponseError):
    """A KIP-848 member's SubscribedTopicRegex does not compile on the broker (RE2/J syntax)."""

    errno = 128
    message = "INVALID_REGULAR_EXPRESSION"
    retriable = False


class RebootstrapRequiredError(BrokerResponseError):
    errno = 129
    message = "REBOOTSTRAP_REQUIRED"
    retriable = False
    description = "Client metadata is stale: the client should rebootstrap to obtain new metadata."
    rebootstrap = True


# aiokafka's other names (aiokafka 0.14's ``aiokafka.errors``). Broker codes alias our class for the same
# code, so ``except MessageSizeTooLargeError`` catches what the broker's MESSAGE_TOO_LARGE raises here.
CorruptRecordException = CorruptMessageError
InvalidMessageError = CorruptMessageError
InvalidFetchRequestError = InvalidFetchSizeError
MessageSizeTooLargeError = MessageTooLargeError
StaleLeaderEpochCodeError = NetworkError  # code 13: aiokafka keeps the old name
GroupLoadInProgressError = CoordinatorLoadInProgressError
GroupCoordinatorNotAvailableError = CoordinatorNotAvailableError
NotCoordinatorForGroupError = NotCoordinatorError
InvalidReplicationAssignmentError = InvalidReplicaAssignmentError
InvalidConfigurationError = InvalidConfigError
OutOfOrderSequenceNumber = OutOfOrderSequenceNumberError
DuplicateSequenceNumber = DuplicateSequenceNumberError
InvalidProducerEpoch = InvalidProducerEpochError
InvalidTxnState = InvalidTxnStateError
InvalidProducerIdMapping = InvalidProducerIdMappingError
InvalidTransactionTimeout = InvalidTransactionTimeoutError
ConcurrentTransactions = ConcurrentTransactionsError
TransactionCoordinatorFenced = TransactionCoordinatorFencedError
TransactionalIdAuthorizationFailed = TransactionalIdAuthorizationFailedError
SecurityDisabled = SecurityDisabledError
OperationNotAttempted = OperationNotAttemptedError
LogDirNotFound = LogDirNotFoundError
SaslAuthenticationFailed = SaslAuthenticationFailedError
UnknownProducerId = UnknownProducerIdError
ReassignmentInProgress = ReassignmentInProgressError
DelegationTokenAuthDisabled = DelegationTokenAuthDisabledError
DelegationTokenNotFound = DelegationTokenNotFoundError
DelegationTokenOwnerMismatch = DelegationTokenOwnerMismatchError
DelegationTokenRequestNotAllowed = DelegationTokenRequestNotAllowedError
DelegationTokenAuthorizationFailed = DelegationTokenAuthorizationFailedError
DelegationTokenExpired = DelegationTokenExpiredError
InvalidPrincipalType = InvalidPrincipalTypeError
NonEmptyGroup = NonEmptyGroupError
GroupIdNotFound = GroupIdNotFoundError
FetchSessionIdNotFound = FetchSessionIdNotFoundError
InvalidFetchSessionEpoch = InvalidFetchSessionEpochError
ListenerNotFound = ListenerNotFoundError
MemberIdRequired = MemberIdRequiredError

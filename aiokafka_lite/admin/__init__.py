"""The Admin client (``aiokafka_lite.Admin``) and the values it takes and returns."""

from ..structs import NewTopic
from .client import Admin
from .types import (
    AbortTransactionSpec,
    AclBinding,
    AclBindingFilter,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ConfigSynonym,
    FencedProducer,
    GroupDescription,
    GroupListing,
    ListOffsetsResult,
    LogDirDescription,
    MemberDescription,
    NewPartitions,
    ProducerState,
    ReplicaInfo,
    TopicDescription,
    TransactionDescription,
    TransactionListing,
)

__all__ = [
    "AbortTransactionSpec",
    "AclBinding",
    "AclBindingFilter",
    "Admin",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSynonym",
    "FencedProducer",
    "GroupDescription",
    "GroupListing",
    "ListOffsetsResult",
    "LogDirDescription",
    "MemberDescription",
    "NewPartitions",
    "NewTopic",
    "ProducerState",
    "ReplicaInfo",
    "TopicDescription",
    "TransactionDescription",
    "TransactionListing",
]

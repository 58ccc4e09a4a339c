"""The Admin client (``aiokafka_lite.Admin``) and the values it takes and returns."""

from ..structs import NewTopic
from .client import Admin
from .types import (
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ConfigSynonym,
    GroupDescription,
    GroupListing,
    ListOffsetsResult,
    MemberDescription,
    NewPartitions,
    TopicDescription,
)

__all__ = [
    "Admin",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSynonym",
    "GroupDescription",
    "GroupListing",
    "ListOffsetsResult",
    "MemberDescription",
    "NewPartitions",
    "NewTopic",
    "TopicDescription",
]

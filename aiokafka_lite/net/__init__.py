"""The network layer: broker connections, the connection pool, cluster metadata, TLS and SASL.

Layers above use :class:`KafkaClient` (one per producer, consumer or admin client) and read
``client.cluster`` (:class:`ClusterMetadata`). :class:`BrokerConnection` is the single connection
underneath, usable on its own (tests, tools).
"""

from ._timeout import run_with_timeout
from .client import KafkaClient, MetadataListener
from .connection import BrokerConnection
from .metadata import ClusterMetadata
from .pool import ConnectionPool, ExponentialBackoff
from .scram import PlainClient, ScramClient
from .settings import ConnectionSettings, choose_version

__all__ = [
    "BrokerConnection",
    "ClusterMetadata",
    "ConnectionPool",
    "ConnectionSettings",
    "ExponentialBackoff",
    "KafkaClient",
    "MetadataListener",
    "PlainClient",
    "ScramClient",
    "choose_version",
    "run_with_timeout",
]

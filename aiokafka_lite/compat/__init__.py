"""aiokafka's API over aiokafka_lite's clients: moving from aiokafka is a change of import.

``from aiokafka_lite.compat import AIOKafkaProducer, AIOKafkaConsumer`` (or ``import aiokafka_lite.compat
as aiokafka``) runs code written for aiokafka 0.x. The submodules mirror aiokafka's layout
(``compat.admin``, ``compat.structs``, ``compat.abc``, ``compat.consumer.consumer``,
``compat.coordinator.assignors.roundrobin`` ...), so code and frameworks that import ``aiokafka.*`` run on
aiokafka_lite after one line, before they are imported::

    import sys, aiokafka_lite.compat
    sys.modules["aiokafka"] = aiokafka_lite.compat

(``_alias.AliasFinder`` then answers ``import aiokafka.x.y`` with compat's module.) Here aiokafka's
contract holds: its argument names and checks, exception types, return types and value types
(``structs``). Defaults and the clients' behaviour are aiokafka_lite's own; docs/migrating-from-aiokafka.md
lists every difference.
"""

from __future__ import annotations

from .. import errors
from ..consumer.assignors import (
    CooperativeStickyAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
)
from ..errors import ConsumerStoppedError, IllegalOperation
from . import abc, admin, consumer, coordinator, helpers, partitioner, producer, structs
from ._alias import install as _install_alias
from .abc import AbstractTokenProvider, ConsumerRebalanceListener
from .admin import AIOKafkaAdminClient
from .consumer import AIOKafkaConsumer
from .helpers import create_ssl_context
from .producer import AIOKafkaProducer, BatchBuilder
from .structs import ConsumerRecord, OffsetAndMetadata, OffsetAndTimestamp, RecordMetadata, TopicPartition

#: The aiokafka release whose public API this layer follows.
__version__ = "0.14.0"

# aiokafka's assignor class names (aiokafka.coordinator.assignors.*).
RoundRobinPartitionAssignor = RoundRobinAssignor
RangePartitionAssignor = RangeAssignor
StickyPartitionAssignor = StickyAssignor
CooperativeStickyPartitionAssignor = CooperativeStickyAssignor

_install_alias()

__all__ = [
    "AIOKafkaAdminClient",
    "AIOKafkaConsumer",
    "AIOKafkaProducer",
    "AbstractTokenProvider",
    "BatchBuilder",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "ConsumerStoppedError",
    "CooperativeStickyPartitionAssignor",
    "IllegalOperation",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "RangePartitionAssignor",
    "RecordMetadata",
    "RoundRobinPartitionAssignor",
    "StickyPartitionAssignor",
    "TopicPartition",
    "abc",
    "admin",
    "consumer",
    "coordinator",
    "create_ssl_context",
    "errors",
    "helpers",
    "partitioner",
    "producer",
    "structs",
]

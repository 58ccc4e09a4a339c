"""aiokafka_lite: an asyncio-native Apache Kafka client.

The clients are imported lazily so that ``import aiokafka_lite`` stays cheap for the protocol and
records layers (used on their own by the PySpark bridge's workers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import errors
from ._settings import AdminSettings, ConsumerSettings, ProducerSettings
from ._version import __version__ as __version__
from .structs import (
    ConsumerRecord,
    NewTopic,
    OffsetAndMetadata,
    RecordMetadata,
    TopicPartition,
)

if TYPE_CHECKING:  # type checkers see the real classes; at run time they are imported on first use
    from .admin import Admin
    from .consumer import Consumer
    from .consumer.listener import ConsumerRebalanceListener
    from .consumer.share_consumer import ShareConsumer
    from .producer import Producer
    from .records import ValueBuffer

_LAZY = {
    "Producer": ("aiokafka_lite.producer", "Producer"),
    "Consumer": ("aiokafka_lite.consumer", "Consumer"),
    "Admin": ("aiokafka_lite.admin", "Admin"),
    "ConsumerRebalanceListener": ("aiokafka_lite.consumer.listener", "ConsumerRebalanceListener"),
    "ShareConsumer": ("aiokafka_lite.consumer.share_consumer", "ShareConsumer"),
    "ValueBuffer": ("aiokafka_lite.records", "ValueBuffer"),
}

__all__ = [
    "Admin",
    "AdminSettings",
    "Consumer",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "ConsumerSettings",
    "NewTopic",
    "OffsetAndMetadata",
    "Producer",
    "ProducerSettings",
    "RecordMetadata",
    "ShareConsumer",
    "TopicPartition",
    "ValueBuffer",
    "errors",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'aiokafka_lite' has no attribute {name!r}")

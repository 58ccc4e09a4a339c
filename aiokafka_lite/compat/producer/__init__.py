"""``aiokafka.producer``."""

from .producer import AIOKafkaProducer, BatchBuilder

__all__ = ["AIOKafkaProducer", "BatchBuilder"]

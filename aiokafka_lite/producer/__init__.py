"""The producer: ``Producer`` and the pieces it is built from (see docs/producer.md)."""

from .bulk import BulkFuture
from .handles import RecordFuture
from .interceptors import ProducerRecord
from .partitioner import murmur2, murmur2_partition
from .producer import Producer

__all__ = ["BulkFuture", "Producer", "ProducerRecord", "RecordFuture", "murmur2", "murmur2_partition"]

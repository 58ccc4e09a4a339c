"""``aiokafka.admin.new_partitions``: the native NewPartitions (same fields)."""

from ...admin import NewPartitions

__all__ = ["NewPartitions"]

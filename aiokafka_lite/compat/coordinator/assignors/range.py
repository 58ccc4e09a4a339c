"""``aiokafka.coordinator.assignors.range``."""

from ....consumer.assignors import RangeAssignor as RangePartitionAssignor

__all__ = ["RangePartitionAssignor"]

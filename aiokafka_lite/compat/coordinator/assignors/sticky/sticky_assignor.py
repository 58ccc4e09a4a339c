"""``aiokafka.coordinator.assignors.sticky.sticky_assignor``."""

from .....consumer.assignors import StickyAssignor as StickyPartitionAssignor

__all__ = ["StickyPartitionAssignor"]

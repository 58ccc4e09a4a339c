"""``aiokafka.coordinator.assignors.roundrobin``."""

from ....consumer.assignors import RoundRobinAssignor as RoundRobinPartitionAssignor

__all__ = ["RoundRobinPartitionAssignor"]

"""``aiokafka.coordinator.assignors.abstract``: the native assignor base under aiokafka's name."""

from ....consumer.assignors import Assignor as AbstractPartitionAssignor

__all__ = ["AbstractPartitionAssignor"]

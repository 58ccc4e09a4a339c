"""``aiokafka.admin.new_topic``: aiokafka's NewTopic, whose partition count and replication factor are
required unless replica assignments are given (then both are -1)."""

from __future__ import annotations

from ...errors import IllegalArgumentError


class NewTopic:
    """A topic for ``create_topics``."""

    def __init__(self, name: str, num_partitions: int, replication_factor: int,
                 replica_assignments: dict[int, list[int]] | None = None,
                 topic_configs: dict[str, str] | None = None) -> None:
        if not ((num_partitions == -1 or replication_factor == -1) ^ (replica_assignments is None)):
            raise IllegalArgumentError(
                "either num_partitions/replication_factor or replica_assignment must be specified")
        self.name = name
        self.num_partitions = num_partitions
        self.replication_factor = replication_factor
        self.replica_assignments = replica_assignments or {}
        self.topic_configs = topic_configs or {}

    def __repr__(self) -> str:
        return f"NewTopic({self.name!r}, {self.num_partitions}, {self.replication_factor})"


__all__ = ["NewTopic"]

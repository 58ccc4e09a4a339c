"""The rebalance listener users implement to commit, flush or load state around partition moves."""

from __future__ import annotations

from ..structs import TopicPartition


class ConsumerRebalanceListener:
    """Called from poll()'s task during a rebalance; the consumer waits for each call to finish.

    ``on_partitions_revoked`` runs before partitions leave (commit what you processed there);
    ``on_partitions_assigned`` after new ones arrive; ``on_partitions_lost`` when they were taken away
    without a chance to commit (session expired, fenced): the default calls on_partitions_revoked, as Java's
    does. Methods may be coroutines or plain functions.
    """

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        return None

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        return None

    async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        await self.on_partitions_revoked(lost)

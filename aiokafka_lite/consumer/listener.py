"""The rebalance listener users implement to commit, flush or load state around partition moves."""

from __future__ import annotations

import inspect
from typing import Any

from ..structs import TopicPartition


class ConsumerRebalanceListener:
    """Called from the consumer's membership task during a rebalance (it runs whether or not the
    application polls); the rebalance waits for each call to finish, and an exception fails it (the next
    poll() raises it).

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


async def call_listener(listener: Any, method: str, partitions: set[TopicPartition]) -> None:
    """Call ``method`` of a user's listener (any object with some of these methods; a coroutine or not).
    A listener without ``on_partitions_lost`` gets ``on_partitions_revoked`` instead, as Java's default."""
    if listener is None:
        return
    fn = getattr(listener, method, None)
    if fn is None and method == "on_partitions_lost":
        fn = getattr(listener, "on_partitions_revoked", None)
    if fn is None:
        return
    result = fn(set(partitions))
    if inspect.isawaitable(result):
        await result

"""Which replica to fetch each partition from (KIP-392, follower fetching); sans-I/O.

The consumer sends its ``client_rack`` in every Fetch (v11+). A leader whose replica selector finds a
better replica (Kafka's RackAwareReplicaSelector: an in-sync one in the consumer's rack that has the
fetch offset) answers with PreferredReadReplica and no records. We then fetch the partition from that
replica until ``metadata_max_age_ms`` passes (then the leader is asked again, as Java's consumer does),
until the replica answers with any error, or until a request to it fails. While the replica is in
reconnect backoff the leader serves the partition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..structs import TopicPartition


class ReadReplicas:
    """The preferred read replica of each partition, with the time (monotonic) it expires."""

    def __init__(self, ttl: float, known: Callable[[int], bool]) -> None:
        self.ttl = ttl
        self._known = known  # is the node in the current metadata?
        self._replica: dict[TopicPartition, tuple[int, float]] = {}

    def node_for(self, tp: TopicPartition, leader: int, now: float, backoff: dict[int, float]) -> int:
        """The node to fetch ``tp`` from: its fresh, known, reachable replica, else the leader."""
        entry = self._replica.get(tp)
        if entry is None:
            return leader
        replica, until = entry
        if until <= now or not self._known(replica):
            del self._replica[tp]  # expired or no longer a broker: ask the leader again
            return leader
        wait = backoff.get(replica)
        return leader if wait is not None and wait > now else replica

    def prefer(self, tp: TopicPartition, replica: int, now: float) -> None:
        """The leader named ``replica`` for ``tp``."""
        self._replica[tp] = (replica, now + self.ttl)

    def is_replica(self, tp: TopicPartition, node: int) -> bool:
        entry = self._replica.get(tp)
        return entry is not None and entry[0] == node

    def leave(self, tps: Iterable[TopicPartition], node: int) -> list[TopicPartition]:
        """``node`` failed: those of ``tps`` fetched from it as a replica go back to their leader."""
        left = [tp for tp in tps if self.is_replica(tp, node)]
        for tp in left:
            del self._replica[tp]
        return left

"""The client's cached view of the cluster, rebuilt from each Metadata response.

One :class:`ClusterMetadata` object lives as long as its :class:`~aiokafka_lite.net.KafkaClient`
(``client.cluster``); every update replaces its tables wholesale, so a reader never sees half an
update, and ``version`` tells a caller whether anything was refreshed since it last looked.
Lookups (``leader_for`` runs once per produced batch) are plain dict reads.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

from ..structs import BrokerInfo, PartitionInfo, TopicPartition

__all__ = ["ClusterMetadata"]

_ZERO_UUID = uuid.UUID(int=0)
_TOPIC_AUTHORIZATION_FAILED = 29


class ClusterMetadata:
    """Brokers, topics, partitions, leaders, leader epochs, controller and cluster id."""

    def __init__(self) -> None:
        self._brokers: dict[int, BrokerInfo] = {}
        #: Brokers learned outside Metadata (FindCoordinator answers); consulted after ``_brokers``.
        self._extra_brokers: dict[int, BrokerInfo] = {}
        self._partitions: dict[str, dict[int, PartitionInfo]] = {}
        self._leaders: dict[TopicPartition, int] = {}
        self._by_broker: dict[int, set[TopicPartition]] = {}
        self._topic_ids: dict[str, uuid.UUID] = {}
        self._topic_names: dict[uuid.UUID, str] = {}
        self._topic_errors: dict[str, int] = {}
        self.internal_topics: frozenset[str] = frozenset()
        self.unauthorized_topics: frozenset[str] = frozenset()
        self.controller_id: int | None = None
        self.cluster_id: str | None = None
        #: Incremented by every successful update (0: never updated).
        self.version = 0
        #: ``time.monotonic()`` of the last successful update.
        self.last_update = 0.0
        self._need_update = False

    # -- queries ----------------------------------------------------------------------------------

    def brokers(self) -> set[BrokerInfo]:
        """Every broker in the last Metadata response."""
        return set(self._brokers.values())

    def broker(self, node_id: int) -> BrokerInfo | None:
        """The broker with ``node_id`` (also coordinators learned from FindCoordinator), or None."""
        info = self._brokers.get(node_id)
        return info if info is not None else self._extra_brokers.get(node_id)

    def topics(self, exclude_internal: bool = False) -> set[str]:
        """Topics with partitions in the cache."""
        if exclude_internal:
            return set(self._partitions) - self.internal_topics
        return set(self._partitions)

    def partitions_for(self, topic: str) -> set[int] | None:
        """Partition ids of ``topic``; None when the topic is not (yet) known."""
        parts = self._partitions.get(topic)
        return None if parts is None else set(parts)

    def available_partitions_for(self, topic: str) -> set[int]:
        """Partitions of ``topic`` that have a leader right now."""
        parts = self._partitions.get(topic)
        if not parts:
            return set()
        return {p for p, info in parts.items() if info.leader >= 0}

    def partition_info(self, tp: TopicPartition) -> PartitionInfo | None:
        parts = self._partitions.get(tp[0])
        return None if parts is None else parts.get(tp[1])

    def leader_for(self, tp: TopicPartition) -> int | None:
        """The leader's node id; -1 while the partition has no leader; None if the partition is unknown."""
        return self._leaders.get(tp)

    def leader_epoch(self, tp: TopicPartition) -> int:
        """The partition's leader epoch (-1 if unknown or the broker does not report epochs)."""
        info = self.partition_info(tp)
        return -1 if info is None else info.leader_epoch

    def partitions_for_broker(self, node_id: int) -> set[TopicPartition]:
        """Partitions led by ``node_id``."""
        return set(self._by_broker.get(node_id, ()))

    def topic_id(self, topic: str) -> uuid.UUID | None:
        """The topic's id (Metadata v10+); None if unknown or the broker reports none."""
        return self._topic_ids.get(topic)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self._topic_names.get(topic_id)

    def topic_error(self, topic: str) -> int:
        """The error code the last response gave for ``topic`` (0: none or not asked)."""
        return self._topic_errors.get(topic, 0)

    @property
    def need_update(self) -> bool:
        """True after :meth:`mark_stale` until the next successful update."""
        return self._need_update

    def mark_stale(self) -> None:
        self._need_update = True

    def __repr__(self) -> str:
        return (
            f"<ClusterMetadata v{self.version} cluster_id={self.cluster_id!r} brokers={len(self._brokers)} "
            f"topics={len(self._partitions)} controller={self.controller_id}>"
        )

    # -- updates ----------------------------------------------------------------------------------

    def add_broker(self, info: BrokerInfo) -> None:
        """Remember a broker learned outside Metadata (e.g. a coordinator's address)."""
        if info.node_id not in self._brokers:
            self._extra_brokers[info.node_id] = info

    def update(self, response: Any, requested: Iterable[str] | None = None) -> None:
        """Replace the cache with a Metadata response's content.

        ``requested`` lists the topics the request asked for (None: all topics); topics it did not
        ask for are dropped, as are topics that came back with an error and no partitions.
        """
        brokers = {
            b.node_id: BrokerInfo(b.node_id, b.host, b.port, getattr(b, "rack", None))
            for b in response.brokers
        }
        partitions: dict[str, dict[int, PartitionInfo]] = {}
        leaders: dict[TopicPartition, int] = {}
        by_broker: dict[int, set[TopicPartition]] = {}
        topic_ids: dict[str, uuid.UUID] = {}
        errors: dict[str, int] = {}
        internal: set[str] = set()
        unauthorized: set[str] = set()
        for topic in response.topics:
            name = topic.name
            if name is None:
                continue
            if topic.error_code:
                errors[name] = topic.error_code
                if topic.error_code == _TOPIC_AUTHORIZATION_FAILED:
                    unauthorized.add(name)
            if getattr(topic, "is_internal", False):
                internal.add(name)
            tid = getattr(topic, "topic_id", None)
            if tid is not None and tid != _ZERO_UUID:
                topic_ids[name] = tid
            if not topic.partitions:
                continue
            parts: dict[int, PartitionInfo] = {}
            for p in topic.partitions:
                leader = p.leader_id
                info = PartitionInfo(
                    name,
                    p.partition_index,
                    leader,
                    getattr(p, "leader_epoch", -1),
                    tuple(p.replica_nodes),
                    tuple(p.isr_nodes),
                    tuple(getattr(p, "offline_replicas", ()) or ()),
                    p.error_code,
                )
                parts[p.partition_index] = info
                tp = TopicPartition(name, p.partition_index)
                leaders[tp] = leader
                if leader >= 0:
                    by_broker.setdefault(leader, set()).add(tp)
            partitions[name] = parts
        self._brokers = brokers
        self._extra_brokers = {k: v for k, v in self._extra_brokers.items() if k not in brokers}
        self._partitions = partitions
        self._leaders = leaders
        self._by_broker = by_broker
        self._topic_ids = topic_ids
        self._topic_names = {v: k for k, v in topic_ids.items()}
        self._topic_errors = errors
        self.internal_topics = frozenset(internal)
        self.unauthorized_topics = frozenset(unauthorized)
        controller = getattr(response, "controller_id", -1)
        self.controller_id = controller if controller is not None and controller >= 0 else None
        self.cluster_id = getattr(response, "cluster_id", None)
        self.version += 1
        self.last_update = time.monotonic()
        self._need_update = False

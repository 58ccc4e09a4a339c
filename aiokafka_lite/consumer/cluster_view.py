"""The few things the consumer asks of the network layer (:class:`~aiokafka_lite.net.KafkaClient`).

The fetcher, offset lookups and the group coordinator reach the cluster only through these functions, so
the consumer's logic reads in its own terms (leader of a partition, send to a node) and the network
client's API is bound in this one place. :class:`ConsumerClient` is that API as a Protocol: what the
consumer's parts take, what KafkaClient provides (mypy checks it where the consumer builds its parts),
and what a test's scripted client must offer.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable
from typing import Any, Protocol

from ..errors import KafkaTimeoutError
from ..structs import BrokerInfo, PartitionInfo, TopicPartition


class ClusterView(Protocol):
    """The metadata cache, read-only."""

    last_update: float

    def broker(self, node_id: int) -> BrokerInfo | None: ...
    def brokers(self) -> set[BrokerInfo]: ...
    def topics(self, exclude_internal: bool = False) -> set[str]: ...
    def partitions_for(self, topic: str) -> set[int] | None: ...
    def partition_info(self, tp: TopicPartition) -> PartitionInfo | None: ...
    def leader_for(self, tp: TopicPartition) -> int | None: ...
    def leader_epoch(self, tp: TopicPartition) -> int: ...
    def topic_id(self, topic: str) -> uuid.UUID | None: ...
    def topic_name(self, topic_id: uuid.UUID) -> str | None: ...


class ConsumerClient(Protocol):
    """The network client as the consumer uses it."""

    @property
    def cluster(self) -> ClusterView: ...
    @property
    def started(self) -> bool: ...
    async def start(self) -> None: ...
    async def close(self) -> None: ...
    def add_topics(self, topics: Iterable[str]) -> bool: ...
    def track_all_topics(self, enabled: bool = True) -> None: ...
    def request_metadata_update(self) -> asyncio.Future[Any]: ...
    async def refresh_metadata(self, topics: Iterable[str] | None = None) -> Any: ...
    def is_ready(self, node_id: int, request_cls: Any = None) -> bool: ...
    async def ready(self, node_id: int, request_cls: Any = None) -> None: ...
    def api_version(self, node_id: int, request_cls: Any, max_version: int | None = None) -> int: ...
    async def send(self, node_id: int, request: Any, *, version: int | None = None,
                   max_version: int | None = None, expect_response: bool = True,
                   timeout_ms: int | None = None) -> Any: ...
    async def any_ready_node(self) -> int: ...
    async def find_coordinator(self, key: str, key_type: int = 0, *,
                               timeout_ms: int | None = None) -> int: ...
    def close_connection(self, node_id: int, request_cls: Any = None) -> None: ...

_ZERO_UUID = uuid.UUID(int=0)


def leader_for(client: ConsumerClient, tp: TopicPartition) -> int | None:
    """The leader's node id; None or -1 while unknown."""
    leader: int | None = client.cluster.leader_for(tp)
    return leader


def broker_known(client: ConsumerClient, node: int) -> bool:
    """Is ``node`` among the brokers of the last metadata (a preferred read replica must be)?"""
    return client.cluster.broker(node) is not None


def leader_epoch(client: ConsumerClient, tp: TopicPartition) -> int:
    return int(client.cluster.leader_epoch(tp))


def topic_id(client: ConsumerClient, topic: str) -> uuid.UUID | None:
    tid: uuid.UUID | None = client.cluster.topic_id(topic)
    if tid is None or tid == _ZERO_UUID:
        return None
    return tid


def topic_name(client: ConsumerClient, tid: uuid.UUID) -> str | None:
    """The name of the topic with id ``tid``, from cached metadata (None while unknown)."""
    name: str | None = client.cluster.topic_name(tid)
    return name


def node_name(client: ConsumerClient, node: int) -> str:
    """A node as people know it: its broker id and address."""
    info = client.cluster.broker(node)
    return f"broker {node} at {info.host}:{info.port}" if info is not None else f"broker {node}"


def partitions_for(client: ConsumerClient, topic: str) -> set[int] | None:
    parts: set[int] | None = client.cluster.partitions_for(topic)
    return parts


def metadata_updated_at(client: ConsumerClient) -> float:
    """time.monotonic() of the last metadata answer."""
    at: float = client.cluster.last_update
    return at


def topics(client: ConsumerClient, exclude_internal: bool = False) -> set[str]:
    return set(client.cluster.topics(exclude_internal=exclude_internal))


def track_topics(client: ConsumerClient, topic_names: Iterable[str]) -> None:
    """Make the client's periodic metadata refresh cover these topics too."""
    if client.add_topics(topic_names) and client.started:
        client.request_metadata_update()


def track_all_topics(client: ConsumerClient, enabled: bool) -> None:
    client.track_all_topics(enabled)


def close_connection(client: ConsumerClient, node: int, request_cls: Any = None) -> None:
    """Close our connection to ``node`` that ``request_cls`` travels on (requests in flight on it fail);
    the next send reconnects."""
    client.close_connection(node, request_cls)


def request_metadata_update(client: ConsumerClient) -> None:
    """Ask for a metadata refresh soon, without waiting for it."""
    client.request_metadata_update()


async def refresh_metadata(client: ConsumerClient, topic_names: Iterable[str] | None, timeout: float) -> None:
    """Refresh metadata (for the tracked topics plus ``topic_names``) and wait, at most ``timeout`` s."""
    try:
        await asyncio.wait_for(client.refresh_metadata(None if topic_names is None else set(topic_names)),
                               max(timeout, 0.001))
    except asyncio.TimeoutError:
        raise KafkaTimeoutError(f"metadata refresh took over {timeout:.1f}s") from None


async def refresh_all_topics(client: ConsumerClient, timeout: float, keep_tracking: bool) -> None:
    """Metadata for every topic in the cluster (pattern subscriptions, topics())."""
    client.track_all_topics(True)
    try:
        await refresh_metadata(client, None, timeout)
    finally:
        if not keep_tracking:
            client.track_all_topics(False)


async def api_version(client: ConsumerClient, node: int, request_cls: Any,
                      max_version: int | None = None) -> int:
    """The version to send ``request_cls`` to ``node`` in (highest both sides know); connects if needed."""
    if not client.is_ready(node, request_cls):
        await client.ready(node, request_cls)
    return int(client.api_version(node, request_cls, max_version))


async def send(client: ConsumerClient, node: int, request: Any, version: int,
               timeout_ms: float | None = None) -> Any:
    return await client.send(node, request, version=version,
                             timeout_ms=None if timeout_ms is None else int(timeout_ms))


async def find_coordinator(client: ConsumerClient, group_id: str) -> int:
    """The node id of the group's coordinator. Group requests travel on a connection of their own
    (net/lanes.py): a broker holds JoinGroup until the rebalance completes, which on a shared connection
    would stall fetching and metadata for that long."""
    return int(await client.find_coordinator(group_id))

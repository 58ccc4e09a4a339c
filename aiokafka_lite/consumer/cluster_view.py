"""The few things the consumer asks of the network layer (:class:`~aiokafka_lite.net.KafkaClient`).

The fetcher, offset lookups and the group coordinator reach the cluster only through these functions, so
the consumer's logic reads in its own terms (leader of a partition, send to a node) and the network
client's API is bound in this one place.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable
from typing import Any

from ..errors import KafkaTimeoutError
from ..structs import BrokerInfo, TopicPartition

_ZERO_UUID = uuid.UUID(int=0)


def leader_for(client: Any, tp: TopicPartition) -> int | None:
    """The leader's node id; None or -1 while unknown."""
    leader: int | None = client.cluster.leader_for(tp)
    return leader


def broker_known(client: Any, node: int) -> bool:
    """Is ``node`` among the brokers of the last metadata (a preferred read replica must be)?"""
    return client.cluster.broker(node) is not None


def leader_epoch(client: Any, tp: TopicPartition) -> int:
    return int(client.cluster.leader_epoch(tp))


def topic_id(client: Any, topic: str) -> uuid.UUID | None:
    tid: uuid.UUID | None = client.cluster.topic_id(topic)
    if tid is None or tid == _ZERO_UUID:
        return None
    return tid


def topic_name(client: Any, tid: uuid.UUID) -> str | None:
    """The name of the topic with id ``tid``, from cached metadata (None while unknown)."""
    name: str | None = client.cluster.topic_name(tid)
    return name


def node_name(client: Any, node: int) -> str:
    """A node as people know it: its broker id (not our group connection's id) and address."""
    info = client.cluster.broker(node)
    real = COORDINATOR_NODE_BASE - node if node > COORDINATOR_NODE_BASE // 2 else node
    return f"broker {real} at {info.host}:{info.port}" if info is not None else f"broker {real}"


def partitions_for(client: Any, topic: str) -> set[int] | None:
    parts: set[int] | None = client.cluster.partitions_for(topic)
    return parts


def metadata_updated_at(client: Any) -> float:
    """time.monotonic() of the last metadata answer."""
    at: float = client.cluster.last_update
    return at


def topics(client: Any, exclude_internal: bool = False) -> set[str]:
    return set(client.cluster.topics(exclude_internal=exclude_internal))


def track_topics(client: Any, topic_names: Iterable[str]) -> None:
    """Make the client's periodic metadata refresh cover these topics too."""
    if client.add_topics(topic_names) and client.started:
        client.request_metadata_update()


def track_all_topics(client: Any, enabled: bool) -> None:
    client.track_all_topics(enabled)


def close_connection(client: Any, node: int) -> None:
    """Close our connection to ``node`` (requests in flight on it fail); the next send reconnects."""
    client.close_connection(node)


def request_metadata_update(client: Any) -> None:
    """Ask for a metadata refresh soon, without waiting for it."""
    client.request_metadata_update()


async def refresh_metadata(client: Any, topic_names: Iterable[str] | None, timeout: float) -> None:
    """Refresh metadata (for the tracked topics plus ``topic_names``) and wait, at most ``timeout`` s."""
    try:
        await asyncio.wait_for(client.refresh_metadata(None if topic_names is None else set(topic_names)),
                               max(timeout, 0.001))
    except asyncio.TimeoutError:
        raise KafkaTimeoutError(f"metadata refresh took over {timeout:.1f}s") from None


async def refresh_all_topics(client: Any, timeout: float, keep_tracking: bool) -> None:
    """Metadata for every topic in the cluster (pattern subscriptions, topics())."""
    client.track_all_topics(True)
    try:
        await refresh_metadata(client, None, timeout)
    finally:
        if not keep_tracking:
            client.track_all_topics(False)


async def api_version(client: Any, node: int, request_cls: Any, max_version: int | None = None) -> int:
    """The version to send ``request_cls`` to ``node`` in (highest both sides know); connects if needed."""
    if not client.is_ready(node):
        await client.ready(node)
    return int(client.api_version(node, request_cls, max_version))


async def send(client: Any, node: int, request: Any, version: int, timeout_ms: float | None = None) -> Any:
    return await client.send(node, request, version=version,
                             timeout_ms=None if timeout_ms is None else int(timeout_ms))


#: Group requests go to node ``COORDINATOR_NODE_BASE - coordinator id``: that broker, own connection.
COORDINATOR_NODE_BASE = 2**31 - 1


async def find_coordinator(client: Any, group_id: str) -> int:
    """A node id reaching the group's coordinator over a connection of its own.

    A broker answers the requests of one connection in order, and holds a JoinGroup until the rebalance
    completes; on the fetch connection that would stall fetching (and the heartbeat) for that long. So,
    as the Java client and librdkafka do, group traffic gets its own connection, under a node id derived
    from the coordinator's.
    """
    node = int(await client.find_coordinator(group_id))
    info = client.cluster.broker(node)
    if info is None:
        return node
    dedicated = COORDINATOR_NODE_BASE - node
    client.cluster.add_broker(BrokerInfo(dedicated, info.host, info.port, info.rack))
    return dedicated

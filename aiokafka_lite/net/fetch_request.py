"""The one builder of Fetch requests, and the one-byte Fetch that reads partitions' high watermarks.

The consumer's fetcher (with fetch sessions), the Spark reader (one partition, no session) and the
offset probes of the CLI and of Spark all build their Fetch here, so the rules are written once: topic
ids from Fetch v13 on only when every topic's id is known (else the request stays at v12, which names
topics), and a sessionless request is session 0, epoch -1.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .. import errors as Errors
from ..protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic, ForgottenTopic
from ..structs import TopicPartition

__all__ = ["REFRESH_METADATA", "FetchAt", "build_fetch", "fetch_version", "high_watermarks"]

#: Fetch partition errors after which fresh metadata (a moved leader, a new topic) may fix the request:
#: refresh, then fetch again.
REFRESH_METADATA = frozenset({
    Errors.NotLeaderOrFollowerError.errno, Errors.FencedLeaderEpochError.errno,
    Errors.UnknownLeaderEpochError.errno, Errors.LeaderNotAvailableError.errno,
    Errors.ReplicaNotAvailableError.errno, Errors.UnknownTopicOrPartitionError.errno,
    Errors.UnknownTopicIdError.errno, Errors.InconsistentTopicIdError.errno,
    Errors.FetchSessionTopicIdError.errno, Errors.KafkaStorageError.errno,
    Errors.NotEnoughReplicasError.errno, Errors.OffsetNotAvailableError.errno,
})

ZERO_UUID = uuid.UUID(int=0)
#: Fetch v13 names topics by id only.
FIRST_ID_VERSION = 13


class FetchAt(NamedTuple):
    """One partition of a Fetch: where to read and how much (leader epochs -1 when not tracked)."""

    offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1


def fetch_version(version: int, topic_ids: Iterable[uuid.UUID | None]) -> int:
    """``version`` (the highest both sides know), or 12 when some topic's id is unknown."""
    if version >= FIRST_ID_VERSION and any(t is None or t == ZERO_UUID for t in topic_ids):
        return FIRST_ID_VERSION - 1
    return version


def build_fetch(version: int, parts: Mapping[TopicPartition, FetchAt], topic_id: Any, *,
                max_wait_ms: int, min_bytes: int, max_bytes: int, isolation: int, session_id: int = 0,
                session_epoch: int = -1, rack_id: str = "",
                forgotten: Iterable[TopicPartition] = ()) -> FetchRequest:
    """A Fetch of ``parts``; ``topic_id(name)`` gives a topic's id (used from v13 on)."""
    def tid(name: str) -> uuid.UUID:
        return (topic_id(name) or ZERO_UUID) if version >= FIRST_ID_VERSION else ZERO_UUID

    topics: dict[str, list[FetchPartition]] = {}
    for tp, at in parts.items():
        topics.setdefault(tp.topic, []).append(FetchPartition(
            partition=tp.partition, current_leader_epoch=at.current_leader_epoch, fetch_offset=at.offset,
            last_fetched_epoch=at.last_fetched_epoch, log_start_offset=-1, partition_max_bytes=at.max_bytes))
    gone: dict[str, list[int]] = {}
    for tp in forgotten:
        gone.setdefault(tp.topic, []).append(tp.partition)
    return FetchRequest(
        replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=max_bytes,
        isolation_level=isolation, session_id=session_id, session_epoch=session_epoch, rack_id=rack_id,
        topics=[FetchTopic(topic=t, topic_id=tid(t), partitions=ps) for t, ps in topics.items()],
        forgotten_topics_data=[ForgottenTopic(topic=t, topic_id=tid(t), partitions=ps)
                               for t, ps in gone.items()])


async def high_watermarks(client: Any, node: int, at: Mapping[TopicPartition, int],
                          read_committed: bool = False) -> dict[TopicPartition, int]:
    """The high watermark (last stable offset with ``read_committed``) of each partition led by ``node``,
    from a one-byte Fetch at ``at``'s offsets: Tansu 0.6 answers ListOffsets(latest) short of the true end,
    a Fetch tells it. Partitions answered with an error are left out."""
    await client.ready(node, FetchRequest)
    version = fetch_version(int(client.api_version(node, FetchRequest)),
                            (client.cluster.topic_id(tp.topic) for tp in at))
    # min_bytes=0 lets Kafka answer at once; Tansu answers max_wait_ms=0 with no partitions at all.
    req = build_fetch(version, {tp: FetchAt(off, 1) for tp, off in at.items()}, client.cluster.topic_id,
                      max_wait_ms=10, min_bytes=0, max_bytes=1, isolation=1 if read_committed else 0)
    resp = await client.send(node, req, version=version)
    out: dict[TopicPartition, int] = {}
    for topic in resp.responses:
        name = topic.topic if version < FIRST_ID_VERSION else client.cluster.topic_name(topic.topic_id)
        for p in topic.partitions:
            if p.error_code == 0 and name:
                committed = read_committed and p.last_stable_offset >= 0
                out[TopicPartition(name, p.partition_index)] = \
                    p.last_stable_offset if committed else p.high_watermark
    return out

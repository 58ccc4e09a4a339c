"""End offsets the CLI can trust, and offsets by timestamp, over an Admin client's connections.

Tansu 0.6 answers ListOffsets(latest) with the *base* offset of the partition's last batch plus one,
so ``consume -e`` stopped short and ``groups describe`` showed negative lag. The Spark source
(``spark/_source_client.py``, ``latest_offsets``) corrects this with a Fetch of at most one byte from
the listed offset, whose high watermark is the true end; the CLI may not import ``spark``, so the same
approach is repeated here over the network client the Admin already holds. Kafka and noida-db answer
both alike, so there the Fetch changes nothing.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from .. import errors
from ..protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from ..structs import TopicPartition

_ZERO_UUID = uuid.UUID(int=0)


async def end_offsets(admin: Any, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
    """Each partition's end (high watermark): ListOffsets(latest), raised to what a Fetch reports."""
    wanted = sorted(set(tps))
    if not wanted:
        return {}
    listed = {tp: r.offset for tp, r in (await admin.list_offsets({tp: "latest" for tp in wanted})).items()}
    client = admin.client
    by_node: dict[int, dict[TopicPartition, int]] = {}
    for tp, off in listed.items():
        leader = client.cluster.leader_for(tp)
        if leader is not None and leader >= 0 and off >= 0:
            by_node.setdefault(leader, {})[tp] = off
    answers = await asyncio.gather(*(_high_watermarks(client, node, at) for node, at in by_node.items()),
                                   return_exceptions=True)
    for answer in answers:
        if isinstance(answer, errors.KafkaError):
            continue  # ListOffsets's answer stands
        if isinstance(answer, BaseException):
            raise answer
        for tp, end in answer.items():
            if end > listed[tp]:
                listed[tp] = end
    return listed


async def _high_watermarks(client: Any, node: int,
                           at: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
    await client.ready(node)
    version = int(client.api_version(node, FetchRequest))

    def topic_id(name: str) -> uuid.UUID:
        return client.cluster.topic_id(name) or _ZERO_UUID

    if version >= 13 and any(topic_id(tp.topic) == _ZERO_UUID for tp in at):
        version = 12  # topic ids unknown: stay on the name-based versions
    topics: dict[str, list[FetchPartition]] = {}
    for tp, off in at.items():
        topics.setdefault(tp.topic, []).append(FetchPartition(
            partition=tp.partition, current_leader_epoch=-1, fetch_offset=off, last_fetched_epoch=-1,
            log_start_offset=-1, partition_max_bytes=1))
    # min_bytes=0 lets Kafka answer at once; Tansu answers max_wait_ms=0 with no partitions at all.
    request = FetchRequest(replica_id=-1, max_wait_ms=10, min_bytes=0, max_bytes=1, isolation_level=0,
                           session_id=0, session_epoch=-1,
                           topics=[FetchTopic(topic=t, topic_id=topic_id(t) if version >= 13 else _ZERO_UUID,
                                              partitions=ps) for t, ps in topics.items()],
                           forgotten_topics_data=[])
    response = await client.send(node, request, version=version)
    out: dict[TopicPartition, int] = {}
    for topic in response.responses:
        name = topic.topic if version < 13 else client.cluster.topic_name(topic.topic_id)
        for p in topic.partitions:
            if p.error_code == 0 and name:
                out[TopicPartition(name, p.partition_index)] = p.high_watermark
    return out

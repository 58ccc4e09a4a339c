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
from collections.abc import Iterable
from typing import Any

from .. import errors
from ..net.fetch_request import high_watermarks
from ..structs import TopicPartition


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
    answers = await asyncio.gather(*(high_watermarks(client, node, at) for node, at in by_node.items()),
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

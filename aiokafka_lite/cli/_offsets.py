"""End offsets the CLI can trust, over an Admin client's connections (net/list_offsets.py's
``latest_offsets``: Tansu's ListOffsets(latest) answer falls short of the true end)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..net.list_offsets import ListedOffset, latest_offsets
from ..structs import TopicPartition


async def end_offsets(admin: Any, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
    """Each partition's end (high watermark), with the Admin's settings; the first partition's error is
    raised (as ``Admin.list_offsets`` does: a topic the cluster does not list fails at once)."""
    config = admin.config
    outcomes = await latest_offsets(
        admin.client, tps, timeout=config.request_timeout_ms / 1000, missing_topics_final=True,
        max_disconnects=3, retry_backoff_ms=config.retry_backoff_ms,
        retry_backoff_max_ms=config.retry_backoff_max_ms)
    for answer in outcomes.values():
        if not isinstance(answer, ListedOffset):
            raise answer
    return {tp: answer.offset for tp, answer in outcomes.items() if isinstance(answer, ListedOffset)}

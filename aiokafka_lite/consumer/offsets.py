"""ListOffsets lookups: earliest / latest / by timestamp, per partition leader, retried through leader moves.

Used to reset positions (``auto_offset_reset``, ``seek_to_beginning/end``) and by ``beginning_offsets``,
``end_offsets`` and ``offsets_for_times``. Requests go to each partition's leader in parallel; partitions
whose leader moved or is unknown are retried after a metadata refresh until the deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

from .. import errors as Errors
from ..protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from ..structs import TopicPartition
from . import cluster_view as cv

log = logging.getLogger(__name__)

EARLIEST = -2
LATEST = -1

_RETRIABLE = frozenset({
    Errors.NotLeaderOrFollowerError.errno, Errors.FencedLeaderEpochError.errno,
    Errors.UnknownLeaderEpochError.errno, Errors.LeaderNotAvailableError.errno,
    Errors.UnknownTopicOrPartitionError.errno, Errors.OffsetNotAvailableError.errno,
    Errors.KafkaStorageError.errno, Errors.ReplicaNotAvailableError.errno,
    Errors.RequestTimedOutError.errno, Errors.NotEnoughReplicasError.errno,
    Errors.UnknownTopicIdError.errno,
})


class OffsetAndTimestamp(NamedTuple):
    """What ``offsets_for_times`` returns per partition (as aiokafka's)."""

    offset: int
    timestamp: int
    leader_epoch: int = -1


class OffsetLookup:
    """Sends ListOffsets for many partitions at once and gathers the answers."""

    def __init__(self, client: Any, isolation_level: str, retry_backoff_ms: int) -> None:
        self._client = client
        self._isolation = 1 if isolation_level == "read_committed" else 0
        self._retry_backoff = retry_backoff_ms / 1000.0

    async def list_offsets(self, timestamps: Mapping[TopicPartition, int],
                           timeout: float) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """Offset per partition for each timestamp (EARLIEST, LATEST or ms); None where none exists.

        Raises :class:`KafkaTimeoutError` naming the partitions still unanswered at the deadline.
        """
        deadline = time.monotonic() + timeout
        remaining = dict(timestamps)
        result: dict[TopicPartition, OffsetAndTimestamp | None] = {}
        last_error: BaseException | None = None
        while remaining:
            by_node: dict[int, dict[TopicPartition, int]] = {}
            for tp, ts in remaining.items():
                leader = cv.leader_for(self._client, tp)
                if leader is None or leader < 0:
                    continue
                by_node.setdefault(leader, {})[tp] = ts
            if by_node:
                outcomes = await asyncio.gather(
                    *(self._send(node, parts, deadline) for node, parts in by_node.items()),
                    return_exceptions=True)
                for outcome in outcomes:
                    if isinstance(outcome, BaseException):
                        if not isinstance(outcome, Errors.KafkaError):
                            raise outcome
                        last_error = outcome
                        continue
                    for tp, value in outcome.items():
                        if isinstance(value, BaseException):
                            last_error = value
                            continue
                        result[tp] = value
                        remaining.pop(tp, None)
            if not remaining:
                break
            now = time.monotonic()
            if now >= deadline:
                detail = f" (last error: {last_error})" if last_error else ""
                raise Errors.KafkaTimeoutError(
                    f"no offsets for {sorted(remaining)[:5]} within {timeout:.1f}s{detail}")
            await cv.refresh_metadata(self._client, {tp.topic for tp in remaining},
                                      max(0.0, deadline - time.monotonic()))
            await asyncio.sleep(min(self._retry_backoff, max(0.0, deadline - time.monotonic())))
        return result

    async def _send(self, node: int, parts: Mapping[TopicPartition, int],
                    deadline: float) -> dict[TopicPartition, OffsetAndTimestamp | BaseException | None]:
        topics: dict[str, list[ListOffsetsPartition]] = {}
        for tp, ts in parts.items():
            topics.setdefault(tp.topic, []).append(ListOffsetsPartition(
                partition_index=tp.partition, current_leader_epoch=cv.leader_epoch(self._client, tp),
                timestamp=ts))
        req = ListOffsetsRequest(replica_id=-1, isolation_level=self._isolation,
                                 topics=[ListOffsetsTopic(name=t, partitions=ps) for t, ps in topics.items()],
                                 timeout_ms=max(1, int((deadline - time.monotonic()) * 1000)))
        version = await cv.api_version(self._client, node, ListOffsetsRequest)
        try:
            resp = await cv.send(self._client, node, req, version)
        except Errors.KafkaError as exc:
            if exc.invalid_metadata or exc.retriable:
                cv.request_metadata_update(self._client)
                return {tp: exc for tp in parts}
            raise
        out: dict[TopicPartition, OffsetAndTimestamp | BaseException | None] = {}
        for t in resp.topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                if tp not in parts:
                    continue
                code = p.error_code
                if code == 0:
                    out[tp] = (None if p.offset < 0
                               else OffsetAndTimestamp(p.offset, p.timestamp, p.leader_epoch))
                elif code == Errors.UnsupportedForMessageFormatError.errno:
                    out[tp] = None  # timestamps unsupported by this topic's message format
                elif code in _RETRIABLE:
                    cv.request_metadata_update(self._client)
                    out[tp] = Errors.for_code(code)(f"ListOffsets for {tp.topic}[{tp.partition}]")
                else:
                    raise Errors.for_code(code)(f"ListOffsets for {tp.topic}[{tp.partition}]")
        return out

"""Partition offset operations of the Admin client, each sent to the partition's leader."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import errors
from ..net.list_offsets import EARLIEST, LATEST, MAX_TIMESTAMP, ListedOffset, list_offsets
from ..protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from ..structs import TopicPartition
from ._core import AdminCore, broker_error, by_topic, check_tp, describe_tp
from .types import ListOffsetsResult

#: ListOffsets' special timestamps.
OFFSET_SPECS = {"latest": LATEST, "earliest": EARLIEST, "max_timestamp": MAX_TIMESTAMP}
_ISOLATION = {"read_uncommitted": 0, "read_committed": 1}


class OffsetOps(AdminCore):
    """list_offsets and delete_records."""

    async def list_offsets(
        self, specs: Mapping[TopicPartition, str | int], *, isolation_level: str = "read_uncommitted",
    ) -> dict[TopicPartition, ListOffsetsResult]:
        """Offsets by spec: ``"earliest"``, ``"latest"``, ``"max_timestamp"`` or a timestamp in ms
        (the first offset whose timestamp is at or after it; offset -1 when there is none)."""
        if isolation_level not in _ISOLATION:
            raise errors.IllegalArgumentError(
                f"isolation_level must be 'read_uncommitted' or 'read_committed', got {isolation_level!r}")
        wanted: dict[TopicPartition, int] = {}
        for tp, spec in specs.items():
            tp = check_tp(tp)
            if isinstance(spec, str) and spec in OFFSET_SPECS:
                wanted[tp] = OFFSET_SPECS[spec]
            elif isinstance(spec, int) and not isinstance(spec, bool) and spec >= 0:
                wanted[tp] = spec
            else:
                raise errors.IllegalArgumentError(
                    f"{describe_tp(tp)}: offset spec must be 'earliest', 'latest', 'max_timestamp' or a "
                    f"timestamp in ms >= 0, got {spec!r}")
        # The admin client reports what the cluster says: a topic it does not list fails at once.
        outcomes = await list_offsets(
            self.client, wanted, timeout=self._timeout, read_committed=isolation_level == "read_committed",
            missing_topics_final=True, max_disconnects=3, retry_backoff_ms=self.config.retry_backoff_ms,
            retry_backoff_max_ms=self.config.retry_backoff_max_ms)
        self._raise_first(outcomes, list(wanted))
        return {tp: ListOffsetsResult(*answer) for tp, answer in outcomes.items()
                if isinstance(answer, ListedOffset)}

    async def delete_records(self, offsets: Mapping[TopicPartition, int], *,
                             timeout_ms: int | None = None) -> dict[TopicPartition, int]:
        """Delete records before ``offset`` in each partition (-1: up to the high watermark);
        returns each partition's new low watermark."""
        wanted: dict[TopicPartition, int] = {}
        for tp, offset in offsets.items():
            tp = check_tp(tp)
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < -1:
                raise errors.IllegalArgumentError(
                    f"{describe_tp(tp)}: delete_records takes an offset >= 0 (or -1 for the high "
                    f"watermark), got {offset!r}")
            wanted[tp] = offset
        wait, answer_within = self._broker_wait(timeout_ms)

        async def call(node: int, batch: dict[TopicPartition, int]) -> dict[TopicPartition, Any]:
            request = DeleteRecordsRequest(timeout_ms=wait, topics=[
                DeleteRecordsTopic(name=t, partitions=[
                    DeleteRecordsPartition(partition_index=tp.partition, offset=batch[tp]) for tp in tps])
                for t, tps in by_topic(batch).items()])
            response = await self._send(node, request, timeout_ms=answer_within)
            out: dict[TopicPartition, Any] = {}
            for t in response.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.name, p.partition_index)
                    out[tp] = broker_error(p.error_code, describe_tp(tp)) if p.error_code else p.low_watermark
            return out

        results = await self._per_leader(wanted, "DeleteRecords", call)
        return {tp: results[tp] for tp in wanted}

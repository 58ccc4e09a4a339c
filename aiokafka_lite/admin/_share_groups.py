"""Share groups (KIP-932) from outside: describe_share_groups (ShareGroupDescribe),
list_share_group_offsets (DescribeShareGroupOffsets), alter_share_group_offsets (AlterShareGroupOffsets)
and delete_share_group_offsets (DeleteShareGroupOffsets). Each goes to the group's coordinator, found
with FindCoordinator as for any group, and is sent again to a new one when the answer says it moved.

A share group has no committed offset per consumer: its "offset" for a partition is the share-partition
start offset, below which every record is done with. Kafka refuses to alter or delete it while the group
has members (NON_EMPTY_GROUP)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .. import errors
from ..protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsRequestPartition,
    AlterShareGroupOffsetsRequestTopic,
)
from ..protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsRequestTopic,
)
from ..protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequestGroup,
    DescribeShareGroupOffsetsRequestTopic,
)
from ..protocol.messages.share_group_describe import ShareGroupDescribeRequest
from ..structs import OffsetAndMetadata, TopicPartition
from ._core import broker_error, by_topic, check_group, check_tp, describe_tp, partition_errors
from ._group_offsets import GroupOffsetOps
from .types import ACL_OPERATIONS, ShareGroupDescription, ShareMemberDescription, acl_name

__all__ = ["ShareGroupOps"]

#: AuthorizedOperations when the broker was not asked for them (or cannot tell).
_NO_OPERATIONS = -(2**31)


def _operations(bits: int) -> tuple[str, ...] | None:
    if bits == _NO_OPERATIONS:
        return None
    return tuple(acl_name(ACL_OPERATIONS, code) for code in range(32) if bits & (1 << code))


def _description(g: Any) -> ShareGroupDescription:
    members = [ShareMemberDescription(
        member_id=m.member_id, client_id=m.client_id, client_host=m.client_host, member_epoch=m.member_epoch,
        rack_id=m.rack_id, subscription=list(m.subscribed_topic_names),
        assignment=sorted(TopicPartition(t.topic_name, p) for t in m.assignment.topic_partitions
                          for p in t.partitions))
        for m in g.members]
    return ShareGroupDescription(group_id=g.group_id, state=g.group_state, group_epoch=g.group_epoch,
                                 assignment_epoch=g.assignment_epoch, assignor=g.assignor_name,
                                 members=members, authorized_operations=_operations(g.authorized_operations))


def _retry_round(out: Mapping[Any, Any]) -> Any:
    """A per-item answer that the coordinator moved or is loading sends the whole round again."""
    return next((e for e in out.values() if isinstance(e, errors.KafkaError) and (
        e.coordinator_moved or isinstance(e, errors.CoordinatorLoadInProgressError))), None)


class ShareGroupOps(GroupOffsetOps):
    """describe_share_groups, list_share_group_offsets, alter_share_group_offsets,
    delete_share_group_offsets."""

    async def describe_share_groups(self, group_ids: Iterable[str], *,
                                    include_authorized_operations: bool = False
                                    ) -> list[ShareGroupDescription]:
        """State, epochs, assignor and members (with their assignments) of each share group, in the order
        asked; raises the first group's error, naming it (GroupIdNotFoundError for an unknown group and,
        from Kafka, for a group that is not a share group; UnsupportedVersionError from a broker without
        ShareGroupDescribe)."""
        groups = list(dict.fromkeys(check_group(g) for g in group_ids))
        if not groups:
            return []

        async def ask(node: int, batch: list[str]) -> dict[str, Any]:
            response = await self._send(node, ShareGroupDescribeRequest(
                group_ids=batch, include_authorized_operations=include_authorized_operations))
            return {g.group_id: broker_error(g.error_code, f"share group {g.group_id!r}", g.error_message)
                    if g.error_code else _description(g) for g in response.groups}

        return list((await self._per_coordinator(groups, "ShareGroupDescribe", ask)).values())

    async def list_share_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None = None
                                       ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The share group's start offset of each partition (every partition it has state for, or just
        ``partitions``); a partition without one (never consumed by the group) is left out. Raises the
        group's error, or the first partition's, naming it."""
        group = check_group(group_id)
        wanted = None if partitions is None else sorted({check_tp(tp) for tp in partitions})
        topics = None if wanted is None else [
            DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=[tp.partition for tp in tps])
            for t, tps in by_topic(wanted).items()]

        async def send(node: int) -> Any:
            response = await self._send(node, DescribeShareGroupOffsetsRequest(groups=[
                DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=topics)]))
            if len(response.groups) != 1:
                return errors.ProtocolError(
                    f"DescribeShareGroupOffsets for one group answered {len(response.groups)}")
            body = response.groups[0]
            if body.error_code:
                return broker_error(body.error_code, f"share group {group!r}", body.error_message)
            out: dict[TopicPartition, Any] = {}
            for t in body.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.topic_name, p.partition_index)
                    if p.error_code:
                        out[tp] = broker_error(p.error_code, f"share group {group!r} {describe_tp(tp)}",
                                               p.error_message)
                    elif p.start_offset >= 0:
                        out[tp] = OffsetAndMetadata(p.start_offset, "", p.leader_epoch)
            retry = _retry_round(out)
            return retry if retry is not None else out

        results = await self._group_request(group, "DescribeShareGroupOffsets", send)
        self._raise_first(results, sorted(results))
        return {tp: results[tp] for tp in sorted(results)}

    async def alter_share_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Set the share group's start offset of each partition (the group must have no members);
        raises the first partition's error, naming it."""
        group = check_group(group_id)
        wanted: dict[TopicPartition, int] = {}
        for raw, offset in offsets.items():
            tp = check_tp(raw)
            if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
                raise errors.IllegalArgumentError(
                    f"{describe_tp(tp)}: expected an offset >= 0, got {offset!r}")
            wanted[tp] = offset
        if not wanted:
            return
        request = AlterShareGroupOffsetsRequest(group_id=group, topics=[
            AlterShareGroupOffsetsRequestTopic(topic_name=t, partitions=[
                AlterShareGroupOffsetsRequestPartition(partition_index=tp.partition, start_offset=wanted[tp])
                for tp in tps]) for t, tps in by_topic(wanted).items()])

        async def send(node: int) -> Any:
            response = await self._send(node, request)
            if response.error_code:
                return broker_error(response.error_code, f"share group {group!r}", response.error_message)
            out = partition_errors(response.responses, f"share group {group!r}", topic_field="topic_name")
            retry = _retry_round(out)
            return retry if retry is not None else out

        results = await self._group_request(group, "AlterShareGroupOffsets", send)
        self._raise_first(results, list(wanted))

    async def delete_share_group_offsets(self, group_id: str, topics: Iterable[str]) -> None:
        """Delete the share group's state (start offsets and in-flight records) for every partition of
        ``topics`` (the group must have no members); raises the first topic's error, naming it."""
        group = check_group(group_id)
        names = list(dict.fromkeys(topics))
        if not all(isinstance(t, str) and t for t in names):
            raise errors.IllegalArgumentError(f"topic names must be non-empty str, got {names!r}")
        if not names:
            return
        request = DeleteShareGroupOffsetsRequest(group_id=group, topics=[
            DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in names])

        async def send(node: int) -> Any:
            response = await self._send(node, request)
            if response.error_code:
                return broker_error(response.error_code, f"share group {group!r}", response.error_message)
            out = {t.topic_name: (broker_error(t.error_code, f"share group {group!r} topic {t.topic_name!r}",
                                               t.error_message) if t.error_code else None)
                   for t in response.responses}
            retry = _retry_round(out)
            return retry if retry is not None else out

        results = await self._group_request(group, "DeleteShareGroupOffsets", send)
        self._raise_first(results, names)

"""A group's committed offsets changed from outside the group: alter_consumer_group_offsets
(OffsetCommit with no generation, as Java's Admin does), delete_consumer_group_offsets (OffsetDelete),
and remove_members_from_consumer_group (LeaveGroup on the members' behalf). Each goes to the group's
coordinator. A group with active members refuses the first two for partitions it consumes
(UNKNOWN_MEMBER_ID / GROUP_SUBSCRIBED_TO_TOPIC): stop or remove its members first."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .. import errors
from ..protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from ..protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from ..protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from ..structs import OffsetAndMetadata, TopicPartition
from ._core import broker_error, by_topic, check_group, check_tp, describe_tp, partition_errors
from ._groups import GroupOps

__all__ = ["GroupOffsetOps"]

_OFFSET_COMMIT_MAX = 9  # v10 names topics by id only
_LEAVE_GROUP_BATCH = 3  # LeaveGroup v3 (KIP-345) names several members, by instance id or member id


class GroupOffsetOps(GroupOps):
    """alter_consumer_group_offsets, delete_consumer_group_offsets, remove_members_from_consumer_group."""

    async def _group_request(self, group: str, what: str, send: Any) -> Any:
        """``send(node)`` on the group's coordinator, re-finding it when it moves."""

        async def attempt(pending: list[str]) -> dict[str, Any]:
            by_node, out = await self._coordinators(pending)
            for node in by_node:
                out[group] = await send(node)
            return out

        results = await self._retrying([group], attempt, what=what)
        answer = results[group]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def alter_consumer_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata | int],
    ) -> None:
        """Commit ``offsets`` for a group that has no active member (or none consuming these
        partitions); raises the first partition's error, naming it."""
        group = check_group(group_id)
        wanted: dict[TopicPartition, OffsetAndMetadata] = {}
        for raw, value in offsets.items():
            tp = check_tp(raw)
            om = OffsetAndMetadata(value) if isinstance(value, int) and not isinstance(value, bool) else value
            if not isinstance(om, OffsetAndMetadata) or om.offset < 0:
                raise errors.IllegalArgumentError(
                    f"{describe_tp(tp)}: expected an offset >= 0 or OffsetAndMetadata, got {value!r}")
            wanted[tp] = om
        if not wanted:
            return

        async def send(node: int) -> Any:
            request = OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                                          topics=[OffsetCommitRequestTopic(name=t, partitions=[
                                              OffsetCommitRequestPartition(
                                                  partition_index=tp.partition,
                                                  committed_offset=wanted[tp].offset,
                                                  committed_leader_epoch=wanted[tp].leader_epoch,
                                                  committed_metadata=wanted[tp].metadata)
                                              for tp in tps]) for t, tps in by_topic(wanted).items()])
            response = await self._send(node, request, max_version=_OFFSET_COMMIT_MAX)
            out = partition_errors(response.topics, f"group {group!r}")
            # A retriable partition answer (the coordinator moved) sends the whole commit round again.
            retry = next((e for e in out.values() if isinstance(e, errors.KafkaError) and e.retriable), None)
            return retry if retry is not None else out

        results = await self._group_request(group, "OffsetCommit", send)
        self._raise_first(results, list(wanted))

    async def delete_consumer_group_offsets(self, group_id: str,
                                            partitions: Iterable[TopicPartition]) -> None:
        """Delete the group's committed offsets of ``partitions`` (OffsetDelete); raises the first
        partition's error, naming it (GROUP_SUBSCRIBED_TO_TOPIC while a member consumes the topic)."""
        group = check_group(group_id)
        wanted = list(dict.fromkeys(check_tp(tp) for tp in partitions))
        if not wanted:
            return

        async def send(node: int) -> Any:
            response = await self._send(node, OffsetDeleteRequest(group_id=group, topics=[
                OffsetDeleteRequestTopic(name=t, partitions=[
                    OffsetDeleteRequestPartition(partition_index=tp.partition) for tp in tps])
                for t, tps in by_topic(wanted).items()]))
            if response.error_code:
                return broker_error(response.error_code, f"group {group!r}")
            return partition_errors(response.topics, f"group {group!r}")

        results = await self._group_request(group, "OffsetDelete", send)
        self._raise_first(results, wanted)

    async def remove_members_from_consumer_group(
        self, group_id: str, group_instance_ids: Iterable[str] | None = None, *,
        reason: str | None = None,
    ) -> list[str]:
        """Make members leave the group (LeaveGroup v3+ on their behalf), so it rebalances without
        waiting for their session timeouts: the static members named by ``group_instance_ids``, or
        every current member when None. Returns the member ids removed; raises the first member's
        error (UNKNOWN_MEMBER_ID for an instance id the group does not have), naming it."""
        group = check_group(group_id)
        if group_instance_ids is None:
            (d,) = await self.describe_groups([group])
            members = [MemberIdentity(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                      reason=reason) for m in d.members]
        else:
            ids = list(dict.fromkeys(group_instance_ids))
            if not all(isinstance(i, str) and i for i in ids):
                raise errors.IllegalArgumentError(f"group instance ids must be non-empty str, got {ids!r}")
            members = [MemberIdentity(member_id="", group_instance_id=i, reason=reason) for i in ids]
        if not members:
            return []

        def key(m: Any) -> str:
            return m.group_instance_id or m.member_id

        async def send(node: int) -> Any:
            version = await self._version(node, LeaveGroupRequest)
            if version < _LEAVE_GROUP_BATCH:
                raise errors.UnsupportedVersionError(
                    f"node {node} cannot remove members on their behalf (LeaveGroup v{version}; v3 needed)")
            response = await self._send(node, LeaveGroupRequest(group_id=group, members=members),
                                        version=version)
            if response.error_code:
                return broker_error(response.error_code, f"group {group!r}")
            # Kafka answers the members in the order asked, echoing each identity; noida-db 0.2.3 answers
            # an empty group_instance_id (tests/admin/test_admin_ops.py), so match by position first.
            keys = ([key(m) for m in members] if len(response.members) == len(members)
                    else [key(m) for m in response.members])
            return {k: (broker_error(m.error_code, f"group {group!r} member {k!r}")
                        if m.error_code else m.member_id)
                    for k, m in zip(keys, response.members, strict=True)}

        results = await self._group_request(group, "LeaveGroup", send)
        order = [key(m) for m in members]
        self._raise_first(results, order)
        return [results[k] for k in order if k in results]

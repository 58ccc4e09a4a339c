"""Consumer group operations of the Admin client: each request goes to the group's coordinator,
except ListGroups, which every broker answers for the groups it coordinates."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import errors
from ..protocol import decode_assignment, decode_subscription
from ..protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from ..protocol.messages.delete_groups import DeleteGroupsRequest
from ..protocol.messages.describe_groups import DescribeGroupsRequest
from ..protocol.messages.list_groups import ListGroupsRequest
from ..protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from ..structs import OffsetAndMetadata, TopicPartition
from ._core import AdminCore, broker_error, check_group
from .types import GroupDescription, GroupListing, MemberDescription

_OFFSET_FETCH_MAX = 9  # v10 names topics by id only


def _member(m: Any, protocol_type: str) -> MemberDescription:
    """A member with its consumer-protocol assignment and subscription decoded when they parse."""
    assignment: list[TopicPartition] = []
    subscription: list[str] = []
    if protocol_type == "consumer":
        try:
            if m.member_assignment:
                _, a = decode_assignment(m.member_assignment)
                assignment = sorted(TopicPartition(t.topic, p) for t in a.assigned_partitions
                                    for p in t.partitions)
            if m.member_metadata:
                _, s = decode_subscription(m.member_metadata)
                subscription = list(s.topics)
        except errors.KafkaError:
            pass  # another client's bytes we cannot read: the raw bytes are still there
    return MemberDescription(
        member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
        client_host=m.client_host, assignment=assignment, subscription=subscription,
        raw_metadata=bytes(m.member_metadata or b""), raw_assignment=bytes(m.member_assignment or b""))


def consumer_group_description(g: Any) -> GroupDescription:
    """A ConsumerGroupDescribe group (KIP-848) in the same shape as a classic one."""
    members = [MemberDescription(
        member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
        client_host=m.client_host, member_epoch=m.member_epoch,
        assignment=sorted(TopicPartition(t.topic_name, p) for t in m.assignment.topic_partitions
                          for p in t.partitions),
        subscription=list(m.subscribed_topic_names) or ([m.subscribed_topic_regex]
                                                        if m.subscribed_topic_regex else []))
        for m in g.members]
    return GroupDescription(group_id=g.group_id, state=g.group_state, protocol_type="consumer",
                            protocol=g.assignor_name, members=members, group_type="consumer",
                            group_epoch=g.group_epoch)


def _is_consumer_group(g: Any) -> bool:
    """A ConsumerGroupDescribe answer that describes a KIP-848 group. Kafka answers GROUP_ID_NOT_FOUND for
    other groups; Tansu 0.6 offers the API without such groups and answers every id with no error, state
    "Empty" or "Unknown" and epoch -1 (tests/admin/test_admin_group_types.py); a real group's epoch is
    at least 1."""
    return not g.error_code and g.group_epoch > 0


class GroupOps(AdminCore):
    """list_groups, describe_groups, delete_groups, list_consumer_group_offsets."""

    async def list_groups(self) -> list[GroupListing]:
        """Every group on every broker, sorted by id."""

        async def ask(node: int) -> Any:
            response = await self._send(node, ListGroupsRequest())
            if response.error_code:
                return broker_error(response.error_code, f"ListGroups on node {node}")
            return [GroupListing(g.group_id, g.protocol_type, getattr(g, "group_state", ""),
                                 (getattr(g, "group_type", "") or "").lower()) for g in response.groups]

        results = await self._every_broker("ListGroups", ask)
        merged = {g.group_id: g for listings in results.values() for g in listings}
        return [merged[k] for k in sorted(merged)]

    async def describe_groups(self, group_ids: Iterable[str]) -> list[GroupDescription]:
        """State, protocol and members of each group (in the order asked), with consumer
        members' assignments and subscriptions decoded. An unknown group comes back in state "Dead"
        (older brokers) or raises GroupIdNotFoundError naming it.

        Groups of either protocol: DescribeGroups first (every broker has it); a group it does not know
        (Kafka 4 answers a KIP-848 group so) is asked again with ConsumerGroupDescribe where the
        coordinator offers it, and described from that answer when it is a KIP-848 group
        (``group_type == "consumer"``)."""
        groups = list(dict.fromkeys(check_group(g) for g in group_ids))
        if not groups:
            return []

        async def ask(node: int, batch: list[str]) -> dict[str, Any]:
            response = await self._send(node, DescribeGroupsRequest(groups=batch))
            out: dict[str, Any] = {}
            unknown: list[str] = []
            for g in response.groups:
                if g.error_code == errors.GroupIdNotFoundError.errno or (
                        not g.error_code and g.group_state == "Dead"):
                    unknown.append(g.group_id)
                if g.error_code:
                    out[g.group_id] = broker_error(g.error_code, f"group {g.group_id!r}",
                                                   getattr(g, "error_message", None))
                    continue
                out[g.group_id] = GroupDescription(
                    group_id=g.group_id, state=g.group_state, protocol_type=g.protocol_type,
                    protocol=g.protocol_data, members=[_member(m, g.protocol_type) for m in g.members])
            if unknown and await self._offers(node, ConsumerGroupDescribeRequest):
                answer = await self._send(node, ConsumerGroupDescribeRequest(group_ids=unknown))
                for cg in answer.groups:
                    if _is_consumer_group(cg):
                        out[cg.group_id] = consumer_group_description(cg)
            return out

        return list((await self._per_coordinator(groups, "DescribeGroups", ask)).values())

    async def describe_consumer_groups(self, group_ids: Iterable[str]) -> list[GroupDescription]:
        """Java's name for :meth:`describe_groups`, which describes groups of both protocols (classic
        with DescribeGroups, KIP-848 with ConsumerGroupDescribe)."""
        return await self.describe_groups(group_ids)

    async def _offers(self, node: int, request_cls: Any) -> bool:
        try:
            await self._version(node, request_cls)
        except errors.UnsupportedVersionError:
            return False
        return True

    async def delete_groups(self, group_ids: Iterable[str]) -> None:
        """Delete groups (they must have no members); raises the first group's error, naming it."""
        groups = list(dict.fromkeys(check_group(g) for g in group_ids))
        if not groups:
            return

        async def ask(node: int, batch: list[str]) -> dict[str, Any]:
            response = await self._send(node, DeleteGroupsRequest(groups_names=batch))
            return {r.group_id: broker_error(r.error_code, f"group {r.group_id!r}") if r.error_code else None
                    for r in response.results}

        await self._per_coordinator(groups, "DeleteGroups", ask)

    async def list_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None, *,
        require_stable: bool = False,
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The group's committed offsets (every partition it committed, or just ``partitions``).

        Partitions without a committed offset are left out.
        """
        group = check_group(group_id)
        wanted = None if partitions is None else sorted(set(partitions))
        topics: dict[str, list[int]] = {}
        for tp in wanted or ():
            topics.setdefault(tp.topic, []).append(tp.partition)

        async def attempt(pending: list[str]) -> dict[str, Any]:
            by_node, failed = await self._coordinators(pending)
            out: dict[str, Any] = dict(failed)
            for node in by_node:
                version = await self._version(node, OffsetFetchRequest, _OFFSET_FETCH_MAX)
                if version >= 8:
                    request = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(
                        group_id=group, topics=None if wanted is None else [
                            OffsetFetchRequestTopics(name=t, partition_indexes=ps)
                            for t, ps in topics.items()])],
                        require_stable=require_stable)
                else:
                    if wanted is None and version < 2:
                        raise errors.UnsupportedVersionError(
                            f"node {node} cannot list all of a group's offsets (OffsetFetch v{version})")
                    request = OffsetFetchRequest(group_id=group, topics=None if wanted is None else [
                        OffsetFetchRequestTopic(name=t, partition_indexes=ps) for t, ps in topics.items()])
                    if version >= 7:
                        request.require_stable = require_stable
                response = await self._send(node, request, version=version)
                out[group] = self._offsets(response, version, group)
            return out

        results = await self._retrying([group], attempt, what="OffsetFetch")
        self._raise_first(results, [group])
        offsets: dict[TopicPartition, OffsetAndMetadata] = results[group]
        return offsets

    @staticmethod
    def _offsets(response: Any, version: int, group: str) -> Any:
        if version >= 8:
            if len(response.groups) != 1:
                return errors.ProtocolError(f"OffsetFetch for one group answered {len(response.groups)}")
            body = response.groups[0]
            code, topics = body.error_code, body.topics
        else:
            code, topics = getattr(response, "error_code", 0), response.topics
        if code:
            return broker_error(code, f"group {group!r}")
        out: dict[TopicPartition, OffsetAndMetadata] = {}
        for t in topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                if p.error_code:
                    return broker_error(p.error_code,
                                        f"group {group!r} partition {t.name}[{p.partition_index}]")
                if p.committed_offset >= 0:
                    out[tp] = OffsetAndMetadata(p.committed_offset, p.metadata or "",
                                                getattr(p, "committed_leader_epoch", -1))
        return out

"""Where partitions' replicas live and who leads them: list_partition_reassignments,
alter_partition_reassignments (KIP-455) and elect_leaders (KIP-460). All three are the controller's
to answer, so they go to it (and round again when it moves)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .. import errors
from ..protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from ..protocol.messages.elect_leaders import ElectLeadersRequest, TopicPartitions
from ..protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsTopics,
)
from ..structs import TopicPartition
from ._core import AdminCore, broker_error, by_topic, check_tp, describe_tp, partition_errors
from .types import PartitionReassignment

__all__ = ["ReplicaOps"]

#: ElectLeaders' election types.
ELECTION_TYPES = {"preferred": 0, "unclean": 1}
_ALL = "*"


class ReplicaOps(AdminCore):
    """list_partition_reassignments, alter_partition_reassignments, elect_leaders."""

    async def list_partition_reassignments(self, partitions: Iterable[TopicPartition] | None = None
                                           ) -> dict[TopicPartition, PartitionReassignment]:
        """The reassignments in progress (of ``partitions``, or all when None), asked of the controller."""
        wanted = None if partitions is None else sorted({check_tp(tp) for tp in partitions})
        if wanted == []:
            return {}

        async def ask(node: int, pending: list[str]) -> dict[str, Any]:
            response = await self._send(node, ListPartitionReassignmentsRequest(
                topics=None if wanted is None else [
                    ListPartitionReassignmentsTopics(name=t, partition_indexes=ps)
                    for t, ps in _indexes_by_topic(wanted).items()]))
            if response.error_code:
                return {_ALL: broker_error(response.error_code, "ListPartitionReassignments",
                                           response.error_message)}
            return {_ALL: {TopicPartition(t.name, p.partition_index): PartitionReassignment(
                tuple(p.replicas), tuple(p.adding_replicas), tuple(p.removing_replicas))
                for t in response.topics for p in t.partitions}}

        results = await self._on_controller([_ALL], "ListPartitionReassignments", ask)
        found: dict[TopicPartition, PartitionReassignment] = results[_ALL]
        return dict(sorted(found.items()))

    async def alter_partition_reassignments(
        self, reassignments: Mapping[TopicPartition, Iterable[int] | None], *, timeout_ms: int | None = None,
    ) -> None:
        """Move each partition to the replicas given (broker ids, the first preferred as leader), or
        cancel its reassignment in progress (None). Raises the first partition's error, naming it."""
        wanted: dict[TopicPartition, list[int] | None] = {}
        for raw, replicas in reassignments.items():
            tp = check_tp(raw)
            if replicas is None:
                wanted[tp] = None
                continue
            ids = list(replicas)
            if not ids or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids) \
                    or len(set(ids)) != len(ids):
                raise errors.IllegalArgumentError(
                    f"{describe_tp(tp)}: replicas must be distinct broker ids (or None to cancel), "
                    f"got {ids!r}")
            wanted[tp] = ids
        wait, answer_within = self._broker_wait(timeout_ms)

        async def ask(node: int, pending: list[TopicPartition]) -> dict[TopicPartition, Any]:
            response = await self._send(node, AlterPartitionReassignmentsRequest(timeout_ms=wait, topics=[
                ReassignableTopic(name=t, partitions=[ReassignablePartition(
                    partition_index=tp.partition, replicas=wanted[tp]) for tp in tps])
                for t, tps in by_topic(pending).items()]), timeout_ms=answer_within)
            if response.error_code:
                error = broker_error(response.error_code, "AlterPartitionReassignments",
                                     response.error_message)
                return {tp: error for tp in pending}
            return partition_errors(response.responses, "")

        await self._on_controller(list(wanted), "AlterPartitionReassignments", ask)

    async def elect_leaders(self, partitions: Iterable[TopicPartition] | None = None, *,
                            election_type: str = "preferred", timeout_ms: int | None = None
                            ) -> dict[TopicPartition, bool]:
        """Elect the preferred (or, ``"unclean"``, any live) replica leader of ``partitions`` (every
        partition when None). Returns, per partition, True when its leader changed and False when it
        already was the one (ELECTION_NOT_NEEDED); raises the first other error, naming the partition."""
        if election_type not in ELECTION_TYPES:
            raise errors.IllegalArgumentError(
                f"election_type must be 'preferred' or 'unclean', got {election_type!r}")
        wanted = None if partitions is None else sorted({check_tp(tp) for tp in partitions})
        if wanted == []:
            return {}
        wait, answer_within = self._broker_wait(timeout_ms)

        async def ask(node: int, pending: list[str]) -> dict[str, Any]:
            response = await self._send(node, ElectLeadersRequest(
                election_type=ELECTION_TYPES[election_type], timeout_ms=wait,
                topic_partitions=None if wanted is None else [
                    TopicPartitions(topic=t, partitions=ps) for t, ps in _indexes_by_topic(wanted).items()]),
                timeout_ms=answer_within)
            if response.error_code:
                return {_ALL: broker_error(response.error_code, "ElectLeaders")}
            out: dict[TopicPartition, Any] = {}
            for r in response.replica_election_results:
                for p in r.partition_result:
                    tp = TopicPartition(r.topic, p.partition_id)
                    if p.error_code == errors.ElectionNotNeededError.errno:
                        out[tp] = False
                    else:
                        out[tp] = broker_error(p.error_code, describe_tp(tp), p.error_message) \
                            if p.error_code else True
            return {_ALL: out}

        results = await self._on_controller([_ALL], "ElectLeaders", ask)
        outcome: dict[TopicPartition, Any] = results[_ALL]
        self._raise_first(outcome, sorted(outcome))
        return dict(sorted(outcome.items()))


def _indexes_by_topic(tps: Iterable[TopicPartition]) -> dict[str, list[int]]:
    return {t: [tp.partition for tp in group] for t, group in by_topic(tps).items()}

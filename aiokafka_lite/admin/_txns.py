"""Producer and transaction state (KIP-664): describe_producers (each partition's leader),
list_transactions (every broker), describe_transactions and fence_producers (each transactional id's
coordinator), abort_transaction (the partition's leader).

``abort_transaction`` sends WriteTxnMarkers, which Kafka's transaction coordinators normally send to
partition leaders; Java's Admin sends it from the client to end a *hanging* transaction, one whose
coordinator has forgotten it. An open transaction its coordinator still knows is ended by
``fence_producers`` (InitProducerId with the transactional id aborts it and bumps the epoch).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from typing import Any

from .. import errors
from ..protocol.messages.describe_producers import DescribeProducersRequest, TopicRequest
from ..protocol.messages.describe_transactions import DescribeTransactionsRequest
from ..protocol.messages.init_producer_id import InitProducerIdRequest
from ..protocol.messages.list_transactions import ListTransactionsRequest
from ..protocol.messages.write_txn_markers import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
)
from ..structs import TopicPartition
from ._core import AdminCore, broker_error, check_tp, describe_tp
from .types import (
    AbortTransactionSpec,
    FencedProducer,
    ProducerState,
    TransactionDescription,
    TransactionListing,
)

__all__ = ["TransactionOps"]

#: The transaction states ListTransactions filters on (Java's TransactionState, as the wire spells them).
TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
                      "CompleteAbort", "Dead", "PrepareEpochFence")
_COORDINATOR_TRANSACTION = 1


def state_name(wire: str) -> str:
    """``"PrepareCommit"`` -> ``"prepare_commit"`` (Java's enum names, lower case)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", wire).lower()


def _wire_state(name: str) -> str:
    for s in TRANSACTION_STATES:
        if name in (s, state_name(s)):
            return s
    raise errors.IllegalArgumentError(
        f"unknown transaction state {name!r}; expected one of "
        f"{', '.join(state_name(s) for s in TRANSACTION_STATES)}")


def _check_ids(ids: Iterable[str], what: str) -> list[str]:
    out = list(dict.fromkeys(ids))
    for t in out:
        if not isinstance(t, str) or not t:
            raise errors.IllegalArgumentError(f"a {what} must be a non-empty str, got {t!r}")
    return out


class TransactionOps(AdminCore):
    """describe_producers, list_transactions, describe_transactions, abort_transaction, fence_producers."""

    async def describe_producers(self, partitions: Iterable[TopicPartition]
                                 ) -> dict[TopicPartition, list[ProducerState]]:
        """The active producers of each partition, asked of its leader."""
        wanted = {check_tp(tp): None for tp in partitions}

        async def call(node: int, batch: dict[TopicPartition, None]) -> dict[TopicPartition, Any]:
            topics: dict[str, list[int]] = {}
            for tp in batch:
                topics.setdefault(tp.topic, []).append(tp.partition)
            response = await self._send(node, DescribeProducersRequest(
                topics=[TopicRequest(name=t, partition_indexes=ps) for t, ps in topics.items()]))
            out: dict[TopicPartition, Any] = {}
            for t in response.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.name, p.partition_index)
                    out[tp] = (broker_error(p.error_code, describe_tp(tp), p.error_message) if p.error_code
                               else sorted(ProducerState(
                                   s.producer_id, s.producer_epoch, s.last_sequence, s.last_timestamp,
                                   s.coordinator_epoch, s.current_txn_start_offset)
                                   for s in p.active_producers))
            return out

        if not wanted:
            return {}
        results = await self._per_leader(wanted, "DescribeProducers", call)
        return {tp: results[tp] for tp in wanted}

    async def list_transactions(self, *, states: Iterable[str] = (), producer_ids: Iterable[int] = (),
                                duration_filter_ms: int | None = None) -> list[TransactionListing]:
        """Transactions every broker coordinates, sorted by transactional id; filtered to ``states``
        (``"ongoing"``, ...), ``producer_ids``, and those open longer than ``duration_filter_ms``."""
        wire_states = [_wire_state(s) for s in states]
        pids = [int(p) for p in producer_ids]

        async def ask(node: int) -> Any:
            request = ListTransactionsRequest(state_filters=wire_states, producer_id_filters=pids)
            version = None
            if duration_filter_ms is not None:
                version = await self._version(node, ListTransactionsRequest)
                if version < 1:
                    raise errors.UnsupportedVersionError(
                        f"node {node} cannot filter transactions by duration (ListTransactions v0)")
                request.duration_filter = duration_filter_ms
            response = await self._send(node, request, version=version)
            if response.error_code:
                return broker_error(response.error_code, f"ListTransactions on node {node}")
            return [TransactionListing(t.transactional_id, t.producer_id, state_name(t.transaction_state))
                    for t in response.transaction_states]

        results = await self._every_broker("ListTransactions", ask)
        return sorted(t for listings in results.values() for t in listings)

    async def describe_transactions(self, transactional_ids: Iterable[str]
                                    ) -> dict[str, TransactionDescription]:
        """State, producer and partitions of each transactional id, asked of its coordinator."""
        ids = _check_ids(transactional_ids, "transactional id")

        async def ask(node: int, batch: list[str]) -> dict[str, Any]:
            response = await self._send(node, DescribeTransactionsRequest(transactional_ids=batch))
            return {t.transactional_id: broker_error(t.error_code, f"transactional id {t.transactional_id!r}")
                    if t.error_code else TransactionDescription(
                        t.transactional_id, state_name(t.transaction_state), t.producer_id, t.producer_epoch,
                        t.transaction_timeout_ms, t.transaction_start_time_ms,
                        tuple(sorted(TopicPartition(d.topic, p) for d in t.topics for p in d.partitions)),
                        node)
                    for t in response.transaction_states}

        return await self._per_coordinator(ids, "DescribeTransactions", ask, _COORDINATOR_TRANSACTION)

    async def fence_producers(self, transactional_ids: Iterable[str]) -> dict[str, FencedProducer]:
        """Fence every producer of each transactional id: its coordinator aborts the open transaction
        and bumps the epoch, so the old producer's next request fails with ProducerFencedError."""
        ids = _check_ids(transactional_ids, "transactional id")

        async def one(node: int, tid: str) -> Any:
            try:
                response = await self._send(node, InitProducerIdRequest(
                    transactional_id=tid, transaction_timeout_ms=self.config.request_timeout_ms))
            except errors.KafkaError as exc:
                return exc
            if response.error_code:
                return broker_error(response.error_code, f"transactional id {tid!r}")
            return FencedProducer(response.producer_id, response.producer_epoch)

        async def ask(node: int, batch: list[str]) -> dict[str, Any]:
            return dict(zip(batch, await asyncio.gather(*(one(node, tid) for tid in batch)), strict=True))

        return await self._per_coordinator(ids, "InitProducerId", ask, _COORDINATOR_TRANSACTION)

    async def abort_transaction(self, spec: AbortTransactionSpec) -> None:
        """Write an abort marker for a hanging transaction to the partition's leader (WriteTxnMarkers)."""
        if not isinstance(spec, AbortTransactionSpec):
            raise errors.IllegalArgumentError(
                f"abort_transaction takes an AbortTransactionSpec, got {spec!r}")
        tp = check_tp(spec.partition)

        async def call(node: int, batch: dict[TopicPartition, Any]) -> dict[TopicPartition, Any]:
            s = batch[tp]
            response = await self._send(node, WriteTxnMarkersRequest(markers=[WritableTxnMarker(
                producer_id=s.producer_id, producer_epoch=s.producer_epoch, transaction_result=False,
                topics=[WritableTxnMarkerTopic(name=tp.topic, partition_indexes=[tp.partition])],
                coordinator_epoch=s.coordinator_epoch)]))
            for m in response.markers:
                for t in m.topics:
                    for p in t.partitions:
                        if TopicPartition(t.name, p.partition_index) == tp:
                            return {tp: broker_error(p.error_code, describe_tp(tp)) if p.error_code else None}
            return {tp: errors.ProtocolError(f"WriteTxnMarkers left out {describe_tp(tp)}")}

        await self._per_leader({tp: spec}, "WriteTxnMarkers", call)

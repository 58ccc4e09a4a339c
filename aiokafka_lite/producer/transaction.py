"""Transactions: the transaction coordinator conversation and the client-side state machine.

States follow Java's TransactionManager: UNINITIALIZED -> READY (after InitProducerId) -> IN_TRANSACTION
(begin) -> COMMITTING / ABORTING -> READY. A batch that fails inside a transaction moves it to
ABORTABLE_ERROR (only abort is allowed then); fencing (another producer with the same transactional_id
took over) and authorization failures are FATAL: every later call raises the cause.

Partitions join the transaction lazily: the first record for a partition queues it, the Sender's
:meth:`TransactionManager.poll` sends one AddPartitionsToTxn for everything queued, and the
partition's batches may be drained only after the coordinator answered -- so the coordinator always
knows a partition before it holds transactional data.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import (
    ConcurrentTransactionsError,
    CoordinatorLoadInProgressError,
    IllegalStateError,
    InvalidProducerEpochError,
    KafkaError,
    KafkaTimeoutError,
    OperationNotAttemptedError,
    ProducerFenced,
    UnknownTopicOrPartitionError,
    for_code,
)
from ..protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from ..protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest, AddPartitionsToTxnTopic
from ..protocol.messages.end_txn import EndTxnRequest
from ..protocol.messages.init_producer_id import InitProducerIdRequest
from ..protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from ..structs import OffsetAndMetadata, TopicPartition
from .idempotence import IdempotenceState

if TYPE_CHECKING:
    from ..net import KafkaClient

__all__ = ["TransactionManager", "TxnState", "init_producer_id"]

log = logging.getLogger("aiokafka_lite.producer")

#: v6 adds two-phase commit (KIP-939); nothing here needs it.
INIT_PRODUCER_ID_MAX_VERSION = 5
#: v4+ batches several transactions and is meant for brokers only (KIP-890).
ADD_PARTITIONS_MAX_VERSION = 3
#: v5 makes the coordinator bump the epoch on every EndTxn (KIP-890 part 2); we keep the classic protocol.
END_TXN_MAX_VERSION = 4

_RETRY_SAME = {ConcurrentTransactionsError.errno, CoordinatorLoadInProgressError.errno,
               UnknownTopicOrPartitionError.errno, OperationNotAttemptedError.errno}
_FENCED = {ProducerFenced.errno, InvalidProducerEpochError.errno}


class TxnState(enum.Enum):
    UNINITIALIZED = "uninitialized"
    INITIALIZING = "initializing"
    READY = "ready"
    IN_TRANSACTION = "in transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "abortable error"
    FATAL_ERROR = "fatal error"


async def init_producer_id(client: KafkaClient, transactional_id: str | None, transaction_timeout_ms: int,
                           producer_id: int = -1, producer_epoch: int = -1,
                           node_id: int | None = None) -> tuple[int, int]:
    """One InitProducerId round trip; returns ``(producer_id, epoch)`` or raises the broker's error.

    With an existing id and epoch (v3+, KIP-360) the broker bumps the epoch of that id; older brokers
    hand out a fresh id instead. Without ``node_id`` the least-loaded broker answers (idempotence only).
    """
    node = node_id if node_id is not None else await client.any_ready_node()
    await client.ready(node)
    version = client.api_version(node, InitProducerIdRequest, INIT_PRODUCER_ID_MAX_VERSION)
    request = InitProducerIdRequest(transactional_id=transactional_id,
                                    transaction_timeout_ms=transaction_timeout_ms)
    if version >= 3 and producer_id >= 0:
        request.producer_id = producer_id
        request.producer_epoch = producer_epoch
    response = await client.send(node, request, version=version)
    if response.error_code:
        raise for_code(response.error_code)(
            f"InitProducerId v{version} to node {node}" + (f" for transactional_id {transactional_id!r}"
                                                           if transactional_id else ""))
    return int(response.producer_id), int(response.producer_epoch)


class TransactionManager:
    """The transaction state of one producer; the Producer drives it, the Sender consults it."""

    def __init__(self, client: KafkaClient, idem: IdempotenceState, transactional_id: str, *,
                 transaction_timeout_ms: int, retry_backoff_ms: int, request_timeout_ms: int,
                 wakeup: Callable[[], None]) -> None:
        self.client = client
        self.idem = idem
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self.retry_backoff = retry_backoff_ms / 1000
        self.request_timeout = request_timeout_ms / 1000
        self.wakeup = wakeup
        #: Partitions added or queued for adding in the current transaction; while a transaction is
        #: open, ``sendable`` is this set (the send fast path checks it), else None.
        self._registered: set[TopicPartition] = set()
        self.sendable: set[TopicPartition] | None = None
        self._state = TxnState.UNINITIALIZED
        self.coordinator: int | None = None
        #: Partitions the coordinator knows are in the current transaction.
        self.added: set[TopicPartition] = set()
        #: Partitions with records waiting for AddPartitionsToTxn.
        self.pending: set[TopicPartition] = set()
        self._adding: asyncio.Future[None] | None = None
        self.started = False  # anything (partitions or offsets) was added to the current transaction
        self.error: BaseException | None = None  # abortable or fatal error

    @property
    def state(self) -> TxnState:
        return self._state

    @state.setter
    def state(self, value: TxnState) -> None:
        self._state = value
        self.sendable = self._registered if value is TxnState.IN_TRANSACTION else None

    # -- state checks -----------------------------------------------------------------------------

    def _raise_if_fatal(self) -> None:
        if self.state is TxnState.FATAL_ERROR:
            assert self.error is not None
            raise self.error

    def check_send(self, tp: TopicPartition) -> None:
        """Called by send(): records are accepted only inside a transaction; queue the partition."""
        state = self.state
        if state is not TxnState.IN_TRANSACTION:
            self._raise_if_fatal()
            if state is TxnState.ABORTABLE_ERROR:
                raise IllegalStateError(
                    f"the transaction must be aborted before sending more records: {self.error}"
                ) from self.error
            raise IllegalStateError(f"send() needs an open transaction (begin_transaction()); state is "
                                    f"{state.value}")
        if tp not in self.added and tp not in self.pending:
            self.pending.add(tp)
            self._registered.add(tp)
            self.wakeup()

    def can_send(self, tp: TopicPartition) -> bool:
        return tp in self.added

    def fatal(self, error: BaseException) -> None:
        self.state = TxnState.FATAL_ERROR
        self.error = error

    def on_batch_failed(self, error: BaseException) -> None:
        """A record of the transaction failed: it can only be aborted now."""
        if self.state in (TxnState.IN_TRANSACTION, TxnState.COMMITTING):
            self.state = TxnState.ABORTABLE_ERROR
            self.error = error

    # -- lifecycle ------------------------------------------------------------------------------

    async def initialize(self, timeout: float) -> None:
        """Find the coordinator and get a producer id and epoch (fencing older producers)."""
        if self.state is not TxnState.UNINITIALIZED:
            self._raise_if_fatal()
            return
        self.state = TxnState.INITIALIZING
        try:
            pid, epoch = await self._coordinated(
                lambda node: init_producer_id(self.client, self.transactional_id, self.transaction_timeout_ms,
                                              node_id=node), timeout, "InitProducerId")
        except BaseException as exc:
            self._set_failure(exc)
            raise
        self.idem.set_producer_id(pid, epoch)
        self.state = TxnState.READY
        self.wakeup()

    def begin(self) -> None:
        self._raise_if_fatal()
        if self.state is not TxnState.READY:
            raise IllegalStateError(f"begin_transaction() needs the ready state; state is {self.state.value}")
        self.started = False
        self.added.clear()
        self.pending.clear()
        self._registered = set()
        self.state = TxnState.IN_TRANSACTION
        self.error = None

    def begin_commit(self) -> None:
        self._raise_if_fatal()
        if self.state is TxnState.ABORTABLE_ERROR:
            raise IllegalStateError(f"cannot commit: a record of the transaction failed ({self.error}); "
                                    "abort_transaction() instead") from self.error
        if self.state is not TxnState.IN_TRANSACTION:
            raise IllegalStateError(
                f"commit_transaction() needs an open transaction; state is {self.state.value}")
        self.state = TxnState.COMMITTING

    def begin_abort(self) -> None:
        self._raise_if_fatal()
        if self.state not in (TxnState.IN_TRANSACTION, TxnState.ABORTABLE_ERROR, TxnState.COMMITTING,
                              TxnState.ABORTING):
            raise IllegalStateError(
                f"abort_transaction() needs an open transaction; state is {self.state.value}")
        self.state = TxnState.ABORTING

    async def end(self, commit: bool, timeout: float) -> None:
        """EndTxn (after the caller flushed or dropped the transaction's records)."""
        if commit and self.state is TxnState.ABORTABLE_ERROR:
            raise IllegalStateError(f"cannot commit: a record of the transaction failed ({self.error}); "
                                    "abort_transaction() instead") from self.error
        try:
            if self._adding is not None:
                await asyncio.shield(self._adding)
            if self.started:
                await self._coordinated(lambda node: self._end_txn(node, commit), timeout, "EndTxn")
            if not commit and self.idem.bump_needed:
                # A sequence gap inside the aborted transaction: re-init bumps the epoch and resets them.
                pid, epoch = await self._coordinated(
                    lambda node: init_producer_id(self.client, self.transactional_id,
                                                  self.transaction_timeout_ms, self.idem.producer_id,
                                                  self.idem.producer_epoch, node_id=node),
                    timeout, "InitProducerId")
                self.idem.set_producer_id(pid, epoch)
        except BaseException as exc:
            self._set_failure(exc)
            raise
        self.state = TxnState.READY
        self.added.clear()
        self.pending.clear()
        self.started = False
        self.error = None
        self.wakeup()

    def _set_failure(self, exc: BaseException) -> None:
        fatal = isinstance(exc, KafkaError) and not exc.retriable and not isinstance(
            exc, (IllegalStateError, KafkaTimeoutError))
        if isinstance(exc, ProducerFenced) or fatal:
            self.fatal(exc if isinstance(exc, ProducerFenced) or getattr(exc, "errno", None) not in _FENCED
                       else ProducerFenced(str(exc)))
        elif self.state in (TxnState.COMMITTING, TxnState.ABORTING, TxnState.IN_TRANSACTION):
            # A timeout or connection failure: the outcome is unknown; the caller may retry the call.
            pass
        elif self.state is TxnState.INITIALIZING:
            self.state = TxnState.UNINITIALIZED

    async def _end_txn(self, node: int, commit: bool) -> None:
        await self.client.ready(node, EndTxnRequest)  # a coordinator found anew may not be connected yet
        version = self.client.api_version(node, EndTxnRequest, END_TXN_MAX_VERSION)
        response = await self.client.send(node, EndTxnRequest(
            transactional_id=self.transactional_id, producer_id=self.idem.producer_id,
            producer_epoch=self.idem.producer_epoch, committed=commit), version=version)
        if response.error_code:
            raise for_code(response.error_code)(f"EndTxn({'commit' if commit else 'abort'})")

    # -- partitions and offsets -----------------------------------------------------------------

    def poll(self, now: float) -> BaseException | None:
        """Sender hook: send AddPartitionsToTxn for queued partitions (one request at a time). Returns the
        error that made the transaction abortable, if it is: the Sender fails every queued record with it
        (a record awaited by the application must not wait for the abort)."""
        if self.state is TxnState.ABORTABLE_ERROR:
            return self.error
        if self.pending and self._adding is None and self.state in (
                TxnState.IN_TRANSACTION, TxnState.COMMITTING):
            batch = set(self.pending)
            self._adding = asyncio.ensure_future(self._add_partitions(batch))
            self._adding.add_done_callback(self._adding_done)
        return None

    def _adding_done(self, fut: asyncio.Future[None]) -> None:
        self._adding = None
        if not fut.cancelled() and fut.exception() is not None:
            exc = fut.exception()
            assert exc is not None
            if isinstance(exc, ProducerFenced) or getattr(exc, "errno", None) in _FENCED:
                self.fatal(exc if isinstance(exc, ProducerFenced) else ProducerFenced(str(exc)))
            elif self.state is not TxnState.FATAL_ERROR:
                self.state = TxnState.ABORTABLE_ERROR
                self.error = exc
            log.warning("AddPartitionsToTxn failed: %s", exc)
        self.wakeup()

    async def _add_partitions(self, tps: set[TopicPartition]) -> None:
        async def attempt(node: int) -> None:
            by_topic: dict[str, list[int]] = {}
            for tp in sorted(tps):
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            await self.client.ready(node, AddPartitionsToTxnRequest)
            version = self.client.api_version(node, AddPartitionsToTxnRequest, ADD_PARTITIONS_MAX_VERSION)
            request = AddPartitionsToTxnRequest(
                v3_and_below_transactional_id=self.transactional_id,
                v3_and_below_producer_id=self.idem.producer_id,
                v3_and_below_producer_epoch=self.idem.producer_epoch,
                v3_and_below_topics=[AddPartitionsToTxnTopic(name=t, partitions=p)
                                     for t, p in by_topic.items()])
            response = await self.client.send(node, request, version=version)
            worst = 0
            for topic in response.results_by_topic_v3_and_below:
                for part in topic.results_by_partition:
                    tp = TopicPartition(topic.name, part.partition_index)
                    code = part.partition_error_code
                    if code == 0:
                        self.added.add(tp)
                        self.pending.discard(tp)
                        tps.discard(tp)
                    elif worst == 0 or code not in _RETRY_SAME:
                        worst = code
            if worst:
                raise for_code(worst)(f"AddPartitionsToTxn for {sorted(tps)}")
            self.started = True
            # Anything answered without an error code is in; anything not answered is retried.
            if tps:
                raise OperationNotAttemptedError(f"AddPartitionsToTxn did not answer for {sorted(tps)}")

        await self._coordinated(attempt, self.request_timeout + self.transaction_timeout_ms / 1000,
                                "AddPartitionsToTxn")

    async def send_offsets(self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata], group_id: str,
                           timeout: float) -> None:
        """AddOffsetsToTxn to the transaction coordinator, then TxnOffsetCommit to the group's."""
        self._raise_if_fatal()
        if self.state is not TxnState.IN_TRANSACTION:
            raise IllegalStateError(
                f"send_offsets_to_transaction() needs an open transaction; state is {self.state.value}")

        async def add_offsets(node: int) -> None:
            response = await self.client.send(node, AddOffsetsToTxnRequest(
                transactional_id=self.transactional_id, producer_id=self.idem.producer_id,
                producer_epoch=self.idem.producer_epoch, group_id=group_id))
            if response.error_code:
                raise for_code(response.error_code)(f"AddOffsetsToTxn for group {group_id!r}")

        try:
            await self._coordinated(add_offsets, timeout, "AddOffsetsToTxn")
            self.started = True
            await self._txn_offset_commit(offsets, group_id, timeout)
        except BaseException as exc:
            if isinstance(exc, ProducerFenced) or getattr(exc, "errno", None) in _FENCED:
                self.fatal(exc if isinstance(exc, ProducerFenced) else ProducerFenced(str(exc)))
                raise self.error from exc  # type: ignore[misc]
            if isinstance(exc, KafkaError) and self.state is TxnState.IN_TRANSACTION:
                self.state = TxnState.ABORTABLE_ERROR
                self.error = exc
            raise

    async def _txn_offset_commit(self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
                                 group_id: str, timeout: float) -> None:
        by_topic: dict[str, list[TxnOffsetCommitRequestPartition]] = {}
        for tp, off in offsets.items():
            if isinstance(off, OffsetAndMetadata):
                part = TxnOffsetCommitRequestPartition(
                    partition_index=tp.partition, committed_offset=off.offset,
                    committed_leader_epoch=off.leader_epoch, committed_metadata=off.metadata)
            else:
                part = TxnOffsetCommitRequestPartition(partition_index=tp.partition,
                                                       committed_offset=int(off))
            by_topic.setdefault(tp.topic, []).append(part)
        request = TxnOffsetCommitRequest(
            transactional_id=self.transactional_id, group_id=group_id, producer_id=self.idem.producer_id,
            producer_epoch=self.idem.producer_epoch,
            topics=[TxnOffsetCommitRequestTopic(name=t, partitions=p) for t, p in by_topic.items()])
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: BaseException | None = None
        while True:
            try:
                node = await self.client.find_coordinator(group_id, 0)
                response = await self.client.send(node, request)
                worst = 0
                for topic in response.topics:
                    for part in topic.partitions:
                        if part.error_code and (worst == 0 or for_code(worst).retriable):
                            worst = part.error_code
                if not worst:
                    return
                raise for_code(worst)(f"TxnOffsetCommit for group {group_id!r}")
            except KafkaError as exc:
                if not (exc.retriable or exc.coordinator_moved):
                    raise
                last = exc
            if loop.time() + self.retry_backoff >= deadline:
                raise KafkaTimeoutError(f"TxnOffsetCommit for group {group_id!r} did not succeed within "
                                        f"{timeout:.1f} s; last error: {last}")
            await asyncio.sleep(self.retry_backoff)

    # -- coordinator round trips ----------------------------------------------------------------

    async def _coordinated(self, call: Callable[[int], Any], timeout: float, what: str) -> Any:
        """Run ``call(coordinator_node)``, re-finding the coordinator and retrying retriable errors."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: BaseException | None = None
        while True:
            try:
                if self.coordinator is None:
                    self.coordinator = await self.client.find_coordinator(
                        self.transactional_id, 1, timeout_ms=max(int((deadline - loop.time()) * 1000), 1))
                return await call(self.coordinator)
            except KafkaError as exc:
                code = getattr(exc, "errno", None)
                if code in _FENCED:
                    raise ProducerFenced(
                        f"{what}: another producer with transactional_id {self.transactional_id!r} "
                        f"took over ({exc})") from exc
                if exc.coordinator_moved or (exc.retriable and code is None):
                    self.coordinator = None
                elif not exc.retriable and code not in _RETRY_SAME:
                    raise
                last = exc
            if loop.time() + self.retry_backoff >= deadline:
                raise KafkaTimeoutError(f"{what} for transactional_id {self.transactional_id!r} did not "
                                        f"succeed within {timeout:.1f} s; last error: {last}")
            await asyncio.sleep(self.retry_backoff)

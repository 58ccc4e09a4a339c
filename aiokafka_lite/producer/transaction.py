"""Transactions: the transaction coordinator conversation and the client-side state machine.

States follow Java's TransactionManager (states.TXN is the table): UNINITIALIZED -> INITIALIZING -> READY
(after InitProducerId) -> IN_TRANSACTION (begin) -> COMMITTING / ABORTING -> READY. The state changes only
through :meth:`TransactionManager._to`, and every failure of a transactional request -- InitProducerId,
AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, a Produce inside the transaction, EndTxn -- goes
through one door, :meth:`TransactionManager.failed`, which classifies it (:func:`verdict`): fencing and
authorization failures are FATAL_ERROR (every later call raises the cause, ProducerFenced for fencing);
a failed record, partition or offset commit is ABORTABLE_ERROR (only abort is allowed); a timeout leaves
the state as it was (the outcome is unknown; the call may be retried). The Sender reads the state each
round and fails every record still pending with that error (abortable: the queued ones; fatal: all).

Partitions join the transaction lazily: the first record for a partition queues it, the Sender's
:meth:`TransactionManager.poll` sends one AddPartitionsToTxn for everything queued, and the
partition's batches may be drained only after the coordinator answered -- so the coordinator always
knows a partition before it holds transactional data.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import (
    ClusterAuthorizationFailedError,
    IllegalStateError,
    InvalidProducerEpochError,
    InvalidProducerIdMappingError,
    InvalidTransactionTimeoutError,
    InvalidTxnStateError,
    KafkaError,
    OperationNotAttemptedError,
    ProducerFenced,
    TransactionAbortableError,
    TransactionalIdAuthorizationFailedError,
    TransactionCoordinatorFencedError,
    UnsupportedForMessageFormatError,
    UnsupportedVersionError,
    for_code,
)
from ..net.retry import ExponentialBackoff, Retry, call_with_retries, is_retriable
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
from .states import TXN, StateMachine, TxnState

if TYPE_CHECKING:
    from ..net import KafkaClient

__all__ = ["REQUESTS", "TransactionManager", "TxnState", "Verdict", "init_producer_id", "verdict"]

log = logging.getLogger("aiokafka_lite.producer")

#: v6 adds two-phase commit (KIP-939); nothing here needs it.
INIT_PRODUCER_ID_MAX_VERSION = 5
#: v4+ batches several transactions and is meant for brokers only (KIP-890).
ADD_PARTITIONS_MAX_VERSION = 3
#: v5 makes the coordinator bump the epoch on every EndTxn (KIP-890 part 2); we keep the classic protocol.
END_TXN_MAX_VERSION = 4

#: Another producer with our transactional_id (or a newer coordinator) took over: ProducerFenced.
_FENCED = {ProducerFenced.errno, InvalidProducerEpochError.errno}
#: Errors no abort can repair (Java's TransactionManager treats them as fatal for every request).
_FATAL = {TransactionalIdAuthorizationFailedError.errno, ClusterAuthorizationFailedError.errno,
          TransactionCoordinatorFencedError.errno,
          UnsupportedVersionError.errno, InvalidTxnStateError.errno, InvalidProducerIdMappingError.errno,
          InvalidTransactionTimeoutError.errno, UnsupportedForMessageFormatError.errno}

#: The transactional requests, as :meth:`TransactionManager.failed` names them.
REQUESTS = ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "TxnOffsetCommit", "Produce", "EndTxn")
#: Requests that belong to the open transaction: a refusal leaves it to be aborted.
_IN_TRANSACTION = {"AddPartitionsToTxn", "AddOffsetsToTxn", "TxnOffsetCommit", "Produce"}


class Verdict(enum.Enum):
    """What a transactional request's failure does to the transaction."""

    FENCED = "fenced"          # FATAL_ERROR, raised as ProducerFenced
    FATAL = "fatal"            # FATAL_ERROR, raised as itself
    ABORTABLE = "abortable"    # ABORTABLE_ERROR: only abort_transaction() is allowed
    UNCHANGED = "unchanged"    # a timeout or cancellation: the outcome is unknown, the call may be retried


def verdict(request: str, exc: BaseException) -> Verdict:
    """The one table of what each transactional request's error means (Java's TransactionManager
    handlers, per request)."""
    if isinstance(exc, ProducerFenced) or getattr(exc, "errno", None) in _FENCED:
        return Verdict.FENCED
    if not isinstance(exc, KafkaError) or isinstance(exc, IllegalStateError):
        return Verdict.UNCHANGED  # cancelled, or refused by this client before any request
    if getattr(exc, "errno", None) in _FATAL:
        return Verdict.FATAL
    if request in _IN_TRANSACTION:
        # A record, partition or offset commit the transaction needed has failed (even a timeout: the
        # records waiting for it cannot go): only an abort can end the transaction.
        return Verdict.ABORTABLE
    if exc.retriable:
        return Verdict.UNCHANGED  # InitProducerId / EndTxn timed out: the caller may try again
    if request == "EndTxn" and isinstance(exc, TransactionAbortableError):
        return Verdict.ABORTABLE
    return Verdict.FATAL


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
                 retry_backoff_max_ms: int = 1000,
                 wakeup: Callable[[], None], on_fatal: Callable[[BaseException], None] | None = None) -> None:
        self.client = client
        self.idem = idem
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        #: Between retries of a coordinator request (retry_backoff_ms doubling up to retry_backoff_max_ms).
        self.backoff = ExponentialBackoff(retry_backoff_ms, retry_backoff_max_ms)
        self.request_timeout = request_timeout_ms / 1000
        self.wakeup = wakeup
        #: Told at once when the transaction turns fatal (the Producer's lifecycle moves to FAILED).
        self.on_fatal = on_fatal
        #: Partitions added or queued for adding in the current transaction; while a transaction is
        #: open, ``sendable`` is this set (the send fast path checks it), else None.
        self._registered: set[TopicPartition] = set()
        self.sendable: set[TopicPartition] | None = None
        self._machine = StateMachine("transaction", TXN, TxnState.UNINITIALIZED, self._changed)
        self.coordinator: int | None = None
        #: Partitions the coordinator knows are in the current transaction.
        self.added: set[TopicPartition] = set()
        #: Partitions with records waiting for AddPartitionsToTxn.
        self.pending: set[TopicPartition] = set()
        self._adding: asyncio.Future[None] | None = None
        self.started = False  # anything (partitions or offsets) was added to the current transaction
        self.error: BaseException | None = None  # the abortable or fatal error (in those states only)

    @property
    def state(self) -> TxnState:
        return self._machine.state

    def _to(self, new: TxnState) -> None:
        """The one place the transaction state changes (refuses moves outside states.TXN)."""
        self._machine.transition_to(new)

    def _changed(self, old: TxnState, new: TxnState) -> None:
        self.sendable = self._registered if new is TxnState.IN_TRANSACTION else None
        if new not in (TxnState.ABORTABLE_ERROR, TxnState.FATAL_ERROR):
            self.error = None

    # -- failures: the one door ---------------------------------------------------------------------

    def failed(self, request: str, exc: BaseException) -> BaseException:
        """``request`` failed with ``exc``: move to the state its :func:`verdict` names and return the
        exception the caller raises (ProducerFenced for fencing). The Sender, woken, fails every record
        still pending with it."""
        if self.state is TxnState.FATAL_ERROR:
            assert self.error is not None
            return self.error  # the first fatal error stays the answer
        v = verdict(request, exc)
        if v is Verdict.FENCED:
            err: BaseException = exc if isinstance(exc, ProducerFenced) else ProducerFenced(
                f"{request}: another producer with transactional_id {self.transactional_id!r} took over "
                f"({exc})")
            if err is not exc:
                err.__cause__ = exc
            self._fail_to(TxnState.FATAL_ERROR, err)
            return err
        if v is Verdict.FATAL:
            self._fail_to(TxnState.FATAL_ERROR, exc)
        elif v is Verdict.ABORTABLE:
            if self._machine.allows(TxnState.ABORTABLE_ERROR):
                self._fail_to(TxnState.ABORTABLE_ERROR, exc)
        elif self.state is TxnState.INITIALIZING:
            self._to(TxnState.UNINITIALIZED)
        return exc

    def fatal(self, error: BaseException) -> None:
        """The producer failed for a reason outside the transaction (its Sender died)."""
        if self.state is not TxnState.FATAL_ERROR:
            self._fail_to(TxnState.FATAL_ERROR, error)

    def _fail_to(self, state: TxnState, error: BaseException) -> None:
        self._to(state)
        self.error = error
        log.warning("transaction of %r is now in %s: %s", self.transactional_id, state.name, error)
        if state is TxnState.FATAL_ERROR and self.on_fatal is not None:
            self.on_fatal(error)
        self.wakeup()

    def on_batch_failed(self, error: BaseException) -> BaseException:
        """A record of the transaction failed (Produce): returns what its future fails with."""
        return self.failed("Produce", error)

    def _raise_if_failed(self, call: str) -> None:
        """A later call answers from the error state at once: the fatal error itself, or the abortable
        error (its class, saying that the transaction must be aborted)."""
        state = self.state
        if state is TxnState.FATAL_ERROR:
            assert self.error is not None
            raise self.error
        if state is TxnState.ABORTABLE_ERROR:
            err = self.error
            assert err is not None
            try:  # the abortable error's own class: what the application catches
                again = type(err)(f"{call} refused: abort_transaction() first; the transaction failed: "
                                  f"{Exception.__str__(err)}")
            except Exception:  # a class that wants other arguments
                again = IllegalStateError(f"{call} refused: abort_transaction() first; the transaction "
                                          f"failed: {err}")
            raise again from err

    # -- state checks -----------------------------------------------------------------------------

    def check_send(self, tp: TopicPartition) -> None:
        """Called by send(): records are accepted only inside a transaction; queue the partition."""
        state = self.state
        if state is not TxnState.IN_TRANSACTION:
            self._raise_if_failed("send()")
            raise IllegalStateError(f"send() needs an open transaction (begin_transaction()); state is "
                                    f"{state.value}")
        if tp not in self.added and tp not in self.pending:
            self.pending.add(tp)
            self._registered.add(tp)
            self.wakeup()

    def can_send(self, tp: TopicPartition) -> bool:
        return tp in self.added

    # -- lifecycle ------------------------------------------------------------------------------

    async def initialize(self, timeout: float) -> None:
        """Find the coordinator and get a producer id and epoch (fencing older producers)."""
        if self.state is not TxnState.UNINITIALIZED:
            self._raise_if_failed("init")
            return
        self._to(TxnState.INITIALIZING)
        self.idem.begin_init()
        try:
            pid, epoch = await self._coordinated(
                lambda node: init_producer_id(self.client, self.transactional_id, self.transaction_timeout_ms,
                                              node_id=node), timeout, "InitProducerId")
        except BaseException as exc:
            self.idem.init_failed()
            self._reraise("InitProducerId", exc)
        self.idem.set_producer_id(pid, epoch)
        self._to(TxnState.READY)
        self.wakeup()

    def _reraise(self, request: str, exc: BaseException) -> Any:
        err = self.failed(request, exc)
        if err is exc:
            raise exc
        raise err from exc

    def begin(self) -> None:
        self._raise_if_failed("begin_transaction()")
        if self.state is not TxnState.READY:
            raise IllegalStateError(f"begin_transaction() needs the ready state; state is {self.state.value}")
        self.started = False
        self.added.clear()
        self.pending.clear()
        self._registered = set()
        self._to(TxnState.IN_TRANSACTION)

    def begin_commit(self) -> None:
        """commit_transaction() starts (or, after a timeout, tries again)."""
        self._raise_if_failed("commit_transaction()")
        if self.state is TxnState.COMMITTING:
            return
        if self.state is not TxnState.IN_TRANSACTION:
            raise IllegalStateError(
                f"commit_transaction() needs an open transaction; state is {self.state.value}")
        self._to(TxnState.COMMITTING)

    def begin_abort(self) -> None:
        if self.state is TxnState.FATAL_ERROR:
            self._raise_if_failed("abort_transaction()")
        if self.state is TxnState.ABORTING:
            return
        if not self._machine.allows(TxnState.ABORTING):
            raise IllegalStateError(
                f"abort_transaction() needs an open transaction; state is {self.state.value}")
        self._to(TxnState.ABORTING)

    async def end(self, commit: bool, timeout: float) -> None:
        """EndTxn (after the caller flushed or dropped the transaction's records)."""
        if commit:
            self._raise_if_failed("commit_transaction()")
        request = "EndTxn"
        try:
            if self._adding is not None:
                with contextlib.suppress(Exception):  # its failure went through failed() already
                    await asyncio.shield(self._adding)
            self._raise_if_failed("commit_transaction()" if commit else "abort_transaction()")
            if self.started:
                await self._coordinated(lambda node: self._end_txn(node, commit), timeout, "EndTxn")
            if not commit and self.idem.bump_needed:
                # A sequence gap inside the aborted transaction: re-init bumps the epoch and resets them.
                request = "InitProducerId"
                self.idem.begin_init()
                try:
                    pid, epoch = await self._coordinated(
                        lambda node: init_producer_id(self.client, self.transactional_id,
                                                      self.transaction_timeout_ms, self.idem.producer_id,
                                                      self.idem.producer_epoch, node_id=node),
                        timeout, "InitProducerId")
                except BaseException:
                    self.idem.init_failed()
                    raise
                self.idem.set_producer_id(pid, epoch)
        except BaseException as exc:
            if isinstance(exc, KafkaError) and self.state is TxnState.ABORTABLE_ERROR and commit:
                raise  # a record failed while the commit flushed: _raise_if_failed said so
            self._reraise(request, exc)
        self._to(TxnState.READY)
        self.added.clear()
        self.pending.clear()
        self.started = False
        self.wakeup()

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
        error that made the transaction abortable or fatal, if it is: the Sender fails every queued
        record with it, every record when fatal (a record awaited by the application must not wait for
        the abort)."""
        if self.state in (TxnState.ABORTABLE_ERROR, TxnState.FATAL_ERROR):
            return self.error
        if self.pending and self._adding is None and self.state in (
                TxnState.IN_TRANSACTION, TxnState.COMMITTING):
            batch = set(self.pending)
            self._adding = asyncio.ensure_future(self._add_partitions(batch))
            self._adding.add_done_callback(self._adding_done)
        return None

    def _adding_done(self, fut: asyncio.Future[None]) -> None:
        self._adding = None
        if not fut.cancelled() and (exc := fut.exception()) is not None:
            self.failed("AddPartitionsToTxn", exc)
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
                    elif worst == 0 or not _ask_again(for_code(code)()):
                        worst = code  # a refusal outranks an answer worth asking again
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
        self._raise_if_failed("send_offsets_to_transaction()")
        if self.state is not TxnState.IN_TRANSACTION:
            raise IllegalStateError(
                f"send_offsets_to_transaction() needs an open transaction; state is {self.state.value}")

        async def add_offsets(node: int) -> None:
            response = await self.client.send(node, AddOffsetsToTxnRequest(
                transactional_id=self.transactional_id, producer_id=self.idem.producer_id,
                producer_epoch=self.idem.producer_epoch, group_id=group_id))
            if response.error_code:
                raise for_code(response.error_code)(f"AddOffsetsToTxn for group {group_id!r}")

        request = "AddOffsetsToTxn"
        try:
            await self._coordinated(add_offsets, timeout, request)
            self.started = True
            request = "TxnOffsetCommit"
            await self._txn_offset_commit(offsets, group_id, timeout)
        except BaseException as exc:
            self._reraise(request, exc)

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

        async def attempt() -> None:
            node = await self.client.find_coordinator(group_id, 0, timeout_ms=_ms(retry.remaining()))
            response = await self.client.send(node, request)
            worst = 0
            for topic in response.topics:
                for part in topic.partitions:
                    if part.error_code and (worst == 0 or for_code(worst).retriable):
                        worst = part.error_code
            if worst:
                raise for_code(worst)(f"TxnOffsetCommit for group {group_id!r}")

        retry = Retry(f"TxnOffsetCommit for group {group_id!r}", timeout, self.backoff)
        await call_with_retries(attempt, retry)

    # -- coordinator round trips ----------------------------------------------------------------

    async def _coordinated(self, call: Callable[[int], Any], timeout: float, what: str) -> Any:
        """Run ``call(coordinator_node)``, re-finding the coordinator and retrying retriable errors (and
        OPERATION_NOT_ATTEMPTED: nothing was done, ask again) until ``timeout`` (net/retry.py)."""
        retry = Retry(f"{what} for transactional_id {self.transactional_id!r}", timeout, self.backoff)

        async def attempt() -> Any:
            try:
                if self.coordinator is None:
                    self.coordinator = await self.client.find_coordinator(
                        self.transactional_id, 1, timeout_ms=_ms(retry.remaining()))
                return await call(self.coordinator)
            except KafkaError as exc:
                if getattr(exc, "errno", None) in _FENCED:
                    raise ProducerFenced(
                        f"{what}: another producer with transactional_id {self.transactional_id!r} "
                        f"took over ({exc})") from exc
                raise

        def forget_coordinator(exc: BaseException) -> None:
            # The coordinator moved, or the way to it failed (a client-side error: no broker code).
            if isinstance(exc, KafkaError) and (exc.coordinator_moved or getattr(exc, "errno", None) is None):
                self.coordinator = None

        return await call_with_retries(attempt, retry, retriable=_ask_again, on_retry=forget_coordinator)


def _ask_again(exc: BaseException) -> bool:
    """A coordinator's answer worth asking again: retriable, or OPERATION_NOT_ATTEMPTED (nothing was done)."""
    return is_retriable(exc) or isinstance(exc, OperationNotAttemptedError)


def _ms(seconds: float) -> int:
    return max(int(seconds * 1000), 1)


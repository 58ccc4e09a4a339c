"""The Sender: one asyncio task per producer that moves batches from the accumulator to the brokers.

Each round (Java's ``Sender.runOnce``): make sure a producer id exists (idempotence) and bump the epoch
when a sequence gap demands it; ask the accumulator which leaders have sendable data (topics whose
leader is unknown trigger a metadata refresh); skip brokers not connected (a connect starts in the
background) or with ``max_in_flight_requests_per_connection`` requests already out; drain up to
``max_request_size`` per broker; expire batches queued past ``delivery_timeout_ms``; send one
ProduceRequest per broker; then sleep until the next batch lingers out or someone wakes us (a new or
full batch, a response, a flush, a connection coming up).

Responses complete batches; a multi-record batch refused as too large is split in two (split.py);
retriable failures go back to the head of their queue after ``retry_backoff_ms`` (and invalidate
metadata where the error says the leader moved); everything else fails the batch. If the task dies,
:meth:`Producer.send` raises the cause and every pending record fails with it: none is lost silently.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from math import inf  # not float("inf"), which parses its string at every call (once per round)
from typing import TYPE_CHECKING, Any

from .._tasks import cancel_and_wait
from ..errors import (
    IllegalStateError,
    InvalidProducerEpochError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    OutOfOrderSequenceNumberError,
    ProducerClosedError,
    ProducerFenced,
    UnknownProducerIdError,
)
from ..net.pool import ExponentialBackoff
from ..protocol.messages.produce import ProduceRequest
from ..structs import TopicPartition
from .accumulator import RecordAccumulator
from .batch import BatchState, ProducerBatch
from .idempotence import Decision, IdempotenceState
from .metrics import ProducerMetrics
from .produce_wire import Ack, batch_outcomes, build_request, expiry_error
from .split import can_split, settle_parents, split_batch
from .states import TxnState

if TYPE_CHECKING:
    from ..net import KafkaClient
    from .transaction import TransactionManager

__all__ = ["Sender"]

log = logging.getLogger("aiokafka_lite.producer")

#: Produce v13 names topics by id only; v12 is the newest that takes names (and all we need).
PRODUCE_MAX_VERSION = 12

#: Refusals of the producer's state (idempotence.py decides what each means).
_STATE_REFUSALS = (OutOfOrderSequenceNumberError, UnknownProducerIdError, InvalidProducerEpochError)


class Sender:
    """Drives one producer's accumulator; ``start()`` spawns the task, ``close()`` drains and ends it."""

    def __init__(self, client: KafkaClient, accumulator: RecordAccumulator, *, acks: int,
                 max_request_size: int, max_in_flight: int, retries: int, request_timeout_ms: int,
                 retry_backoff_ms: int, retry_backoff_max_ms: int, idempotence: IdempotenceState | None,
                 transactions: TransactionManager | None, metrics: ProducerMetrics,
                 on_fatal: Callable[[BaseException], None],
                 on_ack: Callable[[ProducerBatch], None] | None = None) -> None:
        self.client = client
        self.acc = accumulator
        self.acks = acks
        self.max_request_size = max_request_size
        self.max_in_flight = max_in_flight
        self.retries = retries
        self.request_timeout_ms = request_timeout_ms
        self.retry_backoff = retry_backoff_ms / 1000
        #: Retries of a batch wait longer each time, with jitter, up to retry_backoff_max_ms (KIP-580).
        self.backoff = ExponentialBackoff(retry_backoff_ms, retry_backoff_max_ms)
        self.idem = idempotence
        self.txn = transactions
        self.metrics = metrics
        self._on_fatal = on_fatal
        self._on_ack = on_ack
        #: Without idempotence and with one request in flight, a partition is muted while its batch is
        #: out, so a retry cannot overtake the next batch (seed 000, "guaranteeMessageOrder").
        self.guarantee_order = idempotence is None and max_in_flight == 1
        self.loop = accumulator.loop
        self._inflight_per_node: dict[int, int] = {}
        self._connecting: set[int] = set()
        self._drain_watch: set[int] = set()  # nodes whose connection we wait to drain (write_paused)
        #: The last connect failure per node, until a connect succeeds (for expiry messages).
        self._connect_errors: dict[int, BaseException] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        self._bell = accumulator.bell
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._force = False
        self._pid_backoff_until = 0.0
        self.error: BaseException | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = self.loop.create_task(self._run(), name="aiokafka_lite-producer-sender")

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def wakeup(self) -> None:
        """Make the task look again now."""
        self._bell.ring()

    async def close(self, timeout: float | None = None) -> None:
        """Send what is queued, wait for the answers, then stop; after ``timeout`` s give up and fail
        whatever is left with :class:`ProducerClosedError`."""
        self._closing = True
        self.acc.closed = True
        # A send() waiting for buffer memory fails now, as in Java (BufferPool.close); the Sender's own
        # reservations (try_reserve) are not refused.
        self.acc.pool.close(ProducerClosedError("the producer was stopped while send() waited for memory"))
        self.wakeup()
        task = self._task
        if task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout)
        except asyncio.TimeoutError:
            self.force_close(ProducerClosedError(
                f"the producer was stopped and could not deliver within {timeout} s"))
            await cancel_and_wait(task, quiet=True)

    def abort_queued(self, error: BaseException) -> None:
        """Fail every queued (not in flight) batch, as any failure is handled: a dropped batch that held
        a sequence leaves a gap, so the epoch is bumped before the next transaction (I6)."""
        for batch in self.acc.take_queued():
            self._fail(batch, error)
        self.wakeup()

    def force_close(self, error: BaseException) -> None:
        """Stop at once: fail every queued and in-flight batch with ``error``."""
        self._force = True
        self._fail_everything(error)
        task = self._task
        if task is not None and not task.done():
            task.cancel()
        for t in list(self._tasks):
            t.cancel()

    # -- the loop -------------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while True:
                if self._closing and not self.acc.incomplete and not self._inflight_per_node_total():
                    # Done: helpers still running (a connect, an InitProducerId) have nothing left to do.
                    for t in list(self._tasks):
                        t.cancel()
                    break
                delay = await self._run_once()
                if self._closing and not self.acc.incomplete and not self._inflight_per_node_total():
                    continue  # finished this round: leave now instead of sleeping for a wakeup
                await self._bell.sleep(delay)
        except asyncio.CancelledError:
            if not self._force:
                self._fail_everything(ProducerClosedError("the producer's sender task was cancelled"))
            raise
        except BaseException as exc:  # the task must never die silently
            log.exception("producer sender task failed")
            self.error = exc
            self._fail_everything(exc)
            self._on_fatal(exc)

    def _inflight_per_node_total(self) -> int:
        return sum(self._inflight_per_node.values())

    async def _run_once(self) -> float:
        """One round; returns how long to sleep before the next."""
        acc = self.acc
        idem = self.idem
        now = self.loop.time()
        leader_for = self.client.cluster.leader_for
        # Expire first: a batch that expires may be the one an epoch bump waits for (I7).
        for batch in acc.expired(now):
            self._fail(batch, self._expired(batch, leader_for(batch.tp)))
        pid_wait = inf
        if idem is not None and (not idem.has_pid or idem.bump_needed):
            wait = self._maybe_init_producer_id(now)
            if wait is not None:
                if not acc.has_unsent():
                    return wait
                pid_wait = wait  # look again when the InitProducerId backoff ends, not at the next expiry
        self._poll_transaction(now)
        ready_nodes, next_delay, unknown = acc.ready(leader_for, now)
        next_delay = min(next_delay, pid_wait)
        if unknown:
            # Metadata trigger 2: data waits for a partition whose leader we do not know.
            self.client.add_topics(unknown)
            self._request_metadata()
            next_delay = min(next_delay, self.retry_backoff)
        sendable: list[int] = []
        connection = self.client.connection
        for node in ready_nodes:
            conn = connection(node, ProduceRequest)
            if conn is None:
                self._connect(node)
                continue
            if self._inflight_per_node.get(node, 0) >= self.max_in_flight:
                continue
            if conn.write_paused:
                # The broker reads slower than we write: wait until the transport takes writes again, so
                # batches keep filling instead of piling up as copies in its buffer (16 KiB values: CPU per
                # record ~28 -> ~24 us). Its answers or the drain wake us.
                self._wake_when_drained(node, conn)
                continue
            sendable.append(node)
        if sendable:
            drained = acc.drain(leader_for, sendable, self.max_request_size, now, self._can_drain)
            for node, batches in drained.items():
                self._send_produce(node, batches, now)
            if drained:
                # More may be sendable right away (a backlog, other partitions, free in-flight slots):
                # look again before sleeping, as Java's Sender polls with timeout 0 while it has more.
                return 0.0
        if acc.has_unsent():
            next_delay = min(next_delay, max(acc.first_expiry() + acc.delivery_timeout - now, 0.0))
        return next_delay

    def _wake_when_drained(self, node: int, conn: Any) -> None:
        if node in self._drain_watch:
            return
        self._drain_watch.add(node)

        def drained(fut: asyncio.Future[None]) -> None:
            self._drain_watch.discard(node)
            if not fut.cancelled():
                fut.exception()  # a closed connection: the request's own failure reports it
            self.wakeup()

        conn.drained().add_done_callback(drained)

    def _can_drain(self, tp: TopicPartition, batch: ProducerBatch, node: int) -> bool:
        txn = self.txn
        if txn is not None and not txn.can_send(tp):
            return False
        idem = self.idem
        if idem is not None and not idem.can_drain(tp, batch):
            return False
        return True

    def _expired(self, batch: ProducerBatch, leader: int | None) -> KafkaTimeoutError:
        return expiry_error(batch, leader, self._connect_errors, self.acc.delivery_timeout)

    def _poll_transaction(self, now: float) -> None:
        """Let the transaction add partitions; once it must abort, no queued record may go out: each
        fails with the transaction's error (Java's abortUndrainedBatches); once it is fatal (fenced),
        every record fails with it, in flight or not, and the producer fails."""
        txn = self.txn
        if txn is None or (failure := txn.poll(now)) is None:
            return
        if txn.state is TxnState.FATAL_ERROR:
            self._fatal(failure)
            return
        for batch in self.acc.take_queued():
            self._fail(batch, failure)

    def _request_metadata(self) -> None:
        self.metrics.metadata_requests += 1
        fut = self.client.request_metadata_update()
        fut.add_done_callback(self._metadata_done)

    def _metadata_done(self, fut: asyncio.Future[Any]) -> None:
        if not fut.cancelled() and fut.exception() is not None and self._client_unusable():
            return
        self.wakeup()

    def _client_unusable(self) -> bool:
        """After a failed connect or metadata request: if the client can never connect again (closed
        under the producer, or its metadata task died), fail everything with its error now. Such a
        failure comes before the pool records a reconnect backoff, so retrying would spin, one metadata
        request per turn, until every record expired."""
        error = self.client.unusable_error()
        if error is None:
            return False
        log.error("the producer's network client is unusable: %s", error)
        self._fatal(error)
        return True

    def _connect(self, node: int) -> None:
        if node in self._connecting:
            return
        self._connecting.add(node)
        self._spawn(self._connect_node(node))

    async def _connect_node(self, node: int) -> None:
        try:
            await self.client.ready(node, ProduceRequest)
            self._connect_errors.pop(node, None)
        except KafkaError as exc:
            self._connect_errors[node] = exc
            log.debug("connect to node %s failed: %s", node, exc)
            if not self._client_unusable():
                self._request_metadata()  # metadata trigger 4: a broker went away, its leaders may move
            # No sleep here: the next attempt waits out the pool's reconnect backoff (net/pool.py); the
            # failures that come before any backoff (an unusable client) end the producer above.
        finally:
            self._connecting.discard(node)
            self.wakeup()

    def _spawn(self, coro: Any) -> asyncio.Future[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None and self.error is None:
            log.error("producer background step failed: %r", exc)
            self.error = exc
            self._fail_everything(exc)
            self._on_fatal(exc)

    # -- producer id ----------------------------------------------------------------------------

    def _maybe_init_producer_id(self, now: float) -> float | None:
        """Start InitProducerId (or an epoch bump) when allowed; returns a sleep hint while waiting."""
        idem = self.idem
        assert idem is not None
        if idem.init_in_flight:
            return inf  # one attempt at a time; its end rings the bell
        if now < self._pid_backoff_until:
            return self._pid_backoff_until - now
        if idem.has_pid and idem.bump_blocked():
            return None
        if self.txn is not None:
            if idem.bump_needed:
                # Transactions recover through abort_transaction(), which bumps the epoch itself.
                return None
            if not idem.has_pid:
                return None  # init_transactions() does it
        bump = idem.begin_init()
        self._spawn(self._init_producer_id(bump))
        return None

    async def _init_producer_id(self, bump: bool) -> None:
        idem = self.idem
        assert idem is not None
        from .transaction import init_producer_id

        try:
            try:
                pid, epoch = await init_producer_id(self.client, None, 0, idem.producer_id if bump else -1,
                                                    idem.producer_epoch if bump else -1)
            except KafkaError as exc:
                if not bump or exc.retriable:
                    raise
                # The broker cannot bump this id's epoch (pre-KIP-360 semantics): a fresh id does as well,
                # every partition starting again at sequence 0.
                log.info("epoch bump refused (%s); getting a new producer id", exc)
                pid, epoch = await init_producer_id(self.client, None, 0)
            if bump:
                self.metrics.epoch_bumps += 1
                log.info("bumped producer epoch: %s/%s -> %s/%s (%s)", idem.producer_id, idem.producer_epoch,
                         pid, epoch, idem.bump_reason)
            idem.set_producer_id(pid, epoch)
            self._pid_backoff_until = 0.0
        except KafkaError as exc:
            idem.init_failed()
            if not exc.retriable:
                raise
            log.debug("InitProducerId failed, retrying: %s", exc)
            self._pid_backoff_until = self.loop.time() + self.retry_backoff
        finally:
            self.wakeup()

    # -- produce requests -----------------------------------------------------------------------

    def _send_produce(self, node: int, batches: list[ProducerBatch], now: float) -> None:
        idem = self.idem
        sendable: list[ProducerBatch] = []
        for batch in batches:
            if batch.count() == 0:
                # Never expected (appends roll back an empty new batch), but one bad batch fails alone:
                # the Sender goes on for every other record.
                log.error("%s-%s: a batch without records reached the Sender", batch.tp.topic,
                          batch.tp.partition)
                self._fail(batch, IllegalStateError("internal: a batch without records"))
                continue
            if idem is not None:
                idem.assign(batch)
            self.acc.close_batch(batch)
            sendable.append(batch)
            batch.transition_to(BatchState.IN_FLIGHT)
            batch.node = node
            batch.attempts += 1
            if self.guarantee_order:
                self.acc.muted.add(batch.tp)
        if not sendable:
            return
        batches = sendable
        request = build_request(batches, acks=self.acks, timeout_ms=self.request_timeout_ms,
                                transactional_id=self.txn.transactional_id if self.txn is not None else None)
        self._inflight_per_node[node] = self._inflight_per_node.get(node, 0) + 1
        m = self.metrics
        m.requests += 1
        m.requests_in_flight += 1
        if self.acks == 0:
            coro = self.client.send(node, request, max_version=PRODUCE_MAX_VERSION, expect_response=False)
        else:
            coro = self.client.send(node, request, max_version=PRODUCE_MAX_VERSION)
        task = self.loop.create_task(coro)  # a coroutine: ensure_future's checks add nothing
        self._tasks.add(task)
        # perf_counter, not loop.time(): uvloop's clock ticks in whole milliseconds.
        sent_at = time.perf_counter()
        task.add_done_callback(lambda t: self._on_response(t, node, batches, sent_at))

    def _on_response(self, task: asyncio.Future[Any], node: int, batches: list[ProducerBatch],
                     sent_at: float) -> None:
        self._tasks.discard(task)
        self._inflight_per_node[node] -= 1
        m = self.metrics
        m.requests_in_flight -= 1
        if self._force:
            return
        try:
            if task.cancelled():
                error: BaseException | None = ProducerClosedError("the produce request was cancelled")
            else:
                error = task.exception()
            if error is not None:
                if not isinstance(error, KafkaError):
                    error = KafkaConnectionError(f"produce request to node {node} failed: {error!r}")
                for batch in batches:
                    self._failed_attempt(batch, error, node)
                return
            m.on_response(time.perf_counter() - sent_at, node)
            response = task.result()
            if response is None:  # acks=0: nothing comes back
                for batch in batches:
                    self._complete(batch, -1, -1)
                return
            for batch, outcome in batch_outcomes(response, batches, node):
                if isinstance(outcome, Ack):
                    self._complete(batch, outcome.base_offset, outcome.log_append_time)
                else:
                    self._failed_attempt(batch, outcome, node)
        except BaseException as exc:  # keep the invariant: every batch ends; report the bug loudly
            log.exception("handling a produce response failed")
            for batch in batches:
                if not batch.result.done:
                    self._fail(batch, exc)
            raise
        finally:
            self.wakeup()

    def _finished(self, batch: ProducerBatch, success: bool) -> None:
        """Bookkeeping every finished batch needs, acknowledged or failed."""
        batch.transition_to(BatchState.DONE)
        if self.guarantee_order:
            self.acc.muted.discard(batch.tp)
        if self.idem is not None:
            self.idem.done(batch, success)

    def _complete(self, batch: ProducerBatch, base_offset: int, log_append_time: int) -> None:
        self._finished(batch, True)
        m = self.metrics
        m.batches_sent += 1
        n = batch.record_count
        m.records_sent += n
        size = len(batch.data) if batch.data is not None else 0
        m.bytes_sent += size
        m.compressed_bytes += size
        m.uncompressed_bytes += batch.uncompressed_size
        t = m.topic(batch.tp.topic)
        t.records += n
        t.bytes += size
        t.compressed += size
        t.uncompressed += batch.uncompressed_size
        self.acc.complete(batch)
        batch.result.set_result(base_offset, log_append_time)
        if batch.parents is not None:
            settle_parents(batch)
        if self._on_ack is not None:
            self._on_ack(batch)

    def _fail(self, batch: ProducerBatch, error: BaseException) -> None:
        self._finished(batch, False)
        m = self.metrics
        m.batches_failed += 1
        m.records_failed += batch.count()
        m.topic(batch.tp.topic).errors += batch.count()
        txn = self.txn
        if txn is not None:
            error = txn.on_batch_failed(error)  # the transaction's door: the error users catch
        self.acc.fail_batch(batch, error)
        if self._on_ack is not None:
            self._on_ack(batch)
        if txn is not None and txn.state is TxnState.FATAL_ERROR:
            self._fatal(error)

    def _failed_attempt(self, batch: ProducerBatch, error: BaseException, node: int) -> None:
        """Retry ``batch`` if the error and the budget allow; otherwise fail it.

        The error's class says what it means (errors.py: ``retriable``, ``invalid_metadata``,
        ``unknown_outcome``); producer-state refusals follow the idempotence rules (idempotence.py, I5).
        """
        if batch.state is BatchState.DONE:  # failed meanwhile (the producer failed): nothing to retry
            return
        now = self.loop.time()
        acc = self.acc
        if not isinstance(error, KafkaError):
            error = KafkaConnectionError(f"produce request to node {node} failed: {error!r}")
        code = getattr(error, "errno", None)
        if self.guarantee_order:
            acc.muted.discard(batch.tp)
        batch.last_error = error
        expired = now - batch.created >= acc.delivery_timeout
        if self.txn is not None and isinstance(error, (*_STATE_REFUSALS, ProducerFenced)):
            # The transaction's door decides (transaction.verdict): fenced is fatal, the rest abortable;
            # abort_transaction() bumps the epoch.
            self._fail(batch, error)
            return
        if isinstance(error, ProducerFenced):
            self._fail(batch, error)
            self._fatal(error)
            return
        if can_split(batch, code) and not self._force:
            self._split(batch)
            return
        idem = self.idem
        if idem is not None and isinstance(error, _STATE_REFUSALS):
            oos = isinstance(error, OutOfOrderSequenceNumberError)
            decision, error = idem.refused(batch, error, unknown_pid=not oos)
            if decision == Decision.FAIL:
                log.error("%s", error)
                self._fail(batch, error)
            elif expired:
                self._fail(batch, self._expired(batch, node))
            else:
                log.info("%s; bumping the producer epoch and resending", error)
                self._retry(batch, now)
            return
        if not error.retriable or batch.attempts > self.retries or expired or self._force:
            self._fail(batch, self._expired(batch, node) if error.retriable and expired else error)
            return
        if error.unknown_outcome:
            batch.unknown_outcome = True  # I4: from now on it is only resent under its own sequence
        if error.invalid_metadata:
            self._request_metadata()  # metadata trigger 4: the leader moved or the broker vanished
        self._retry(batch, now)

    def _split(self, batch: ProducerBatch) -> None:
        """Too large for the broker: queue its two halves in its place (see split.py)."""
        batch.transition_to(BatchState.DONE)
        halves = split_batch(batch, self.acc)
        if self.idem is not None:
            self.idem.replace_split(batch, halves)
        self.acc.reenqueue_split(batch, halves)
        self.metrics.batch_splits += 1
        log.info("%s-%s: %s; split %d records into %d + %d", batch.tp.topic, batch.tp.partition,
                 batch.last_error, batch.record_count, halves[0].count(), halves[1].count())

    def _retry(self, batch: ProducerBatch, now: float) -> None:
        m = self.metrics
        m.batch_retries += 1
        m.record_retries += batch.count()
        m.topic(batch.tp.topic).retries += batch.count()
        self.acc.reenqueue(batch, now + self.backoff.delay(batch.attempts))

    # -- failure --------------------------------------------------------------------------------

    def _fatal(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
            self._fail_everything(error)
            self._on_fatal(error)

    def _fail_everything(self, error: BaseException) -> None:
        acc = self.acc
        acc.pool.close(error if isinstance(error, KafkaError) else IllegalStateError(
            f"the producer failed: {error!r}"))
        for batch in list(acc.incomplete):
            if not batch.result.done:
                batch.transition_to(BatchState.DONE)
                if self.txn is not None:
                    self.txn.on_batch_failed(error)
                acc.fail_batch(batch, error)
                if self._on_ack is not None:
                    self._on_ack(batch)
        for dq in acc.batches.values():
            dq.clear()

"""The share fetcher: one task per leader broker keeping a share session (KIP-932) and its ShareFetch going.

A share session lives on each broker that leads an assigned partition: epoch 0 opens it with every
partition wanted there, each later request carries epoch + 1 with only the partitions added (and those
forgotten), and -1 closes it. Acknowledgements ride on the next ShareFetch to the partition's leader, or go
alone in a ShareAcknowledge (``commit()``, ``close()``). Requests of one session go one at a time (a lock
per broker): the broker checks each epoch, and a lost answer would leave the next epoch unknown.

Answers hold the records the broker *acquired* for this member; the fetched data is kept raw, as the
Consumer's fetcher keeps it, and decoded in ``poll()`` (objects or Arrow) with the same record decoder,
keeping only the fresh acquisitions (:mod:`.share_acks`).

Failures: a lost session (SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, a lost connection) opens a
new one, and what the old one held is gone (the broker released its locks); leader moves refresh metadata;
anything unexpected ends the task and is raised by the next ``poll()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import errors as Errors
from ..net import run_with_timeout
from ..protocol.messages.share_acknowledge import AcknowledgementBatch as AckBatchA
from ..protocol.messages.share_acknowledge import (
    AcknowledgePartition,
    AcknowledgeTopic,
    ShareAcknowledgeRequest,
)
from ..protocol.messages.share_fetch import AcknowledgementBatch as AckBatchF
from ..protocol.messages.share_fetch import FetchPartition, FetchTopic, ForgottenTopic, ShareFetchRequest
from ..structs import TopicPartition
from . import cluster_view as cv
from .share_acks import AckBook, ack_batches

log = logging.getLogger(__name__)

OPEN_EPOCH, CLOSE_EPOCH = 0, -1

#: Called with each partition's sent acknowledgements (offset -> type) and the error, if they failed.
AckCallback = Callable[[TopicPartition, dict[int, int], "Errors.KafkaError | None"], None]


@dataclass
class ShareFetch:
    """One partition's fresh acquisitions from one answer, raw until poll() decodes them."""

    tp: TopicPartition
    node: int
    chunks: list[Any]  # the partition's record data
    fresh: dict[int, int]  # offset -> delivery count
    records: list[Any] | None = None  # decoded and filtered, once poll() took from it
    arrow: Any = None  # or as one pyarrow.RecordBatch, once poll_arrow() took from it
    index: int = 0  # how much of records / arrow was handed out
    started: bool = False  # poll() has started on it: the next answer may be fetched


@dataclass
class _Session:
    node: int
    epoch: int = OPEN_EPOCH
    partitions: set[TopicPartition] = field(default_factory=set)  # what the broker's session holds
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    task: asyncio.Task[None] | None = None


#: Answers that only say the session is gone (the request epoch 0 opening the next cannot get them again).
_SESSION_GONE = (Errors.ShareSessionNotFoundError, Errors.InvalidShareSessionEpochError)


def _session_lost(exc: Errors.KafkaError) -> bool:
    return isinstance(exc, (Errors.ShareSessionNotFoundError, Errors.InvalidShareSessionEpochError,
                            Errors.KafkaConnectionError, Errors.RequestTimedOutError,
                            Errors.KafkaTimeoutError))


def _error(code: int, message: str | None) -> Errors.KafkaError | None:
    return Errors.for_code(code)(message or "") if code else None


class ShareFetcher:
    """Owns the share sessions, the fetch tasks and the buffer of fetched data."""

    def __init__(self, client: cv.ConsumerClient, config: Any, group_id: str, member_id: str, book: AckBook,
                 on_ack: AckCallback) -> None:
        self._client = client
        self._group_id = group_id
        self._member_id = member_id
        self._book = book
        self._on_ack = on_ack
        self._max_wait_ms = config.fetch_max_wait_ms
        self._min_bytes = config.fetch_min_bytes
        self._max_bytes = config.fetch_max_bytes
        self._max_records = config.max_poll_records
        self._retry_backoff = config.retry_backoff_ms / 1000.0
        self._request_timeout = config.request_timeout_ms / 1000.0
        #: The partitions the group assigned us (topic names resolved).
        self.assigned: set[TopicPartition] = set()
        self._sessions: dict[int, _Session] = {}
        self.buffer: deque[ShareFetch] = deque()
        self.data_ready = asyncio.Event()
        self._wake = asyncio.Event()
        self._kick = asyncio.Event()  # replaced on each wake(): every sleeping session sees the set one
        self._failure: BaseException | None = None
        self._closed = False
        self._closing = asyncio.Event()  # set by close(): wakes commit()s waiting for answers
        self._supervisor: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._supervisor is None:
            self._supervisor = asyncio.get_running_loop().create_task(self._supervise(),
                                                                      name="aiokafka_lite-share-fetcher")

    def raise_if_failed(self) -> None:
        if self._failure is not None:
            raise self._failure

    def wake(self) -> None:
        """Something changed (assignment, acknowledgements due, the buffer taken): act on it now."""
        self._wake.set()
        self._kick.set()
        self._kick = asyncio.Event()

    def _fail(self, exc: BaseException) -> None:
        if self._failure is None:
            self._failure = exc
        self.data_ready.set()

    async def close(self) -> None:
        """Acknowledge what is due and close every share session (the broker releases what is left), all
        within request_timeout_ms.

        A ShareFetch in flight is let finish rather than cancelled: cancelled, it would leave the session's
        epoch unknown, and the closing request, refused for its epoch, would lose the acknowledgements it
        carries. A session whose request does not finish in time is not closed (its broker answers nothing
        anyway; the broker ends the session itself)."""
        deadline = time.monotonic() + self._request_timeout
        self._closed = True
        self._closing.set()
        self.wake()  # sleeping sessions see _closed and end
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(BaseException):
                await self._supervisor
        busy = {s.task: s for s in self._sessions.values() if s.task is not None and not s.task.done()}
        late: set[asyncio.Task[None]] = set()
        if busy:
            _, late = await asyncio.wait(busy, timeout=max(0.0, deadline - time.monotonic()))
            for t in late:
                t.cancel()
            for t in busy:
                with contextlib.suppress(BaseException):
                    await t
        self.buffer.clear()
        closing = [self._acknowledge(s, close=True) for s in list(self._sessions.values())
                   if s.epoch != OPEN_EPOCH and s.task not in late]
        if closing:
            with contextlib.suppress(asyncio.TimeoutError):
                await run_with_timeout(asyncio.gather(*closing, return_exceptions=True),
                                       max(0.001, deadline - time.monotonic()))
        self._sessions.clear()

    # -- routing -----------------------------------------------------------------------------------------
    def _leaders(self) -> dict[int, set[TopicPartition]]:
        out: dict[int, set[TopicPartition]] = {}
        for tp in self.assigned:
            leader = cv.leader_for(self._client, tp)
            if leader is None or leader < 0:
                cv.request_metadata_update(self._client)
                continue
            out.setdefault(leader, set()).add(tp)
        return out

    async def _supervise(self) -> None:
        """Start a session task for every broker that leads an assigned partition or holds a session."""
        try:
            while not self._closed:
                self._wake.clear()
                wanted = self._leaders()
                for node in set(wanted) | set(self._sessions):
                    s = self._sessions.get(node)
                    if s is None:
                        s = self._sessions[node] = _Session(node)
                    if s.task is None or s.task.done():
                        if s.task is not None and s.task.done() and not s.task.cancelled():
                            exc = s.task.exception()
                            if exc is not None:
                                raise exc
                        if node in wanted or s.partitions or self._book.has_pending(s.partitions):
                            s.task = asyncio.get_running_loop().create_task(
                                self._run_session(s), name=f"aiokafka_lite-share-fetch-{node}")
                with contextlib.suppress(asyncio.TimeoutError):
                    await run_with_timeout(self._wake.wait(), 1.0)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            log.error("share group %r: fetcher failed: %r", self._group_id, exc)
            self._fail(exc)

    def _untouched_from(self, node: int) -> bool:
        """An answer from ``node`` that poll() has not started on: enough read ahead (one answer is kept
        ahead of the application, so fetching overlaps its work; more would only hold locks longer)."""
        return any(f.node == node and not f.started for f in self.buffer)

    def start_head(self) -> bool:
        """poll() is about to hand out the oldest answer: let its broker's next ShareFetch go now, while
        the application works on this one. True when the caller should yield once for it to be sent."""
        if not self.buffer or self.buffer[0].started:
            return False
        self.buffer[0].started = True
        self.wake()
        return True

    async def _run_session(self, s: _Session) -> None:
        """Fetch from one broker while it leads assigned partitions; then forget them there and stop."""
        while not self._closed:
            wanted = self._leaders().get(s.node, set())
            if not wanted and not s.partitions:
                if self._book.has_pending():
                    await self._acknowledge(s)
                return
            if wanted and self._untouched_from(s.node) and not self._book.has_pending(s.partitions):
                # poll() has not started on the last answer: fetch again once it has (or acks are due).
                await self._sleep(self._max_wait_ms / 1000.0)
                continue
            started = time.monotonic()
            try:
                got = await self._fetch(s, wanted)
            except Errors.KafkaError as exc:
                if not (exc.retriable or isinstance(exc, Errors.KafkaConnectionError) or _session_lost(exc)):
                    raise
                log.info("share group %r: share session on %s failed (%s); opening a new one",
                         self._group_id, cv.node_name(self._client, s.node), exc)
                self._reset(s)
                if not isinstance(exc, _SESSION_GONE):
                    await asyncio.sleep(self._retry_backoff)
                # else the broker answered and only the session is gone (a broker ends sessions when any
                # connection to it closes, another member's too): open the new one at once, or the other
                # members take what arrives meanwhile.
                continue
            if not got:
                # Ask again at once, as librdkafka and the Java client do: other members may fetch the same
                # partitions, and whoever asks first acquires what arrives. The broker held this request
                # (Kafka up to max_wait_ms, librdkafka's mock up to 100 ms); only one that answers sooner
                # than retry_backoff_ms is asked again no sooner than that after the last request.
                await self._sleep(self._retry_backoff - (time.monotonic() - started))

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await run_with_timeout(self._kick.wait(), max(seconds, 0.0))

    def _reset(self, s: _Session) -> None:
        """The broker's session is gone, and with it every lock it held: forget what it held."""
        lost = self._book.forget(s.partitions)
        for f in [f for f in self.buffer if f.node == s.node]:
            self.buffer.remove(f)
        for tp, acks in lost.items():
            self._on_ack(tp, acks, Errors.ShareSessionNotFoundError(
                f"the share session on {cv.node_name(self._client, s.node)} was lost before these "
                f"acknowledgements were sent; the broker released the records"))
        s.partitions = set()
        s.epoch = OPEN_EPOCH

    # -- requests ------------------------------------------------------------------------------------------
    def _topic_id(self, topic: str) -> uuid.UUID:
        tid = cv.topic_id(self._client, topic)
        if tid is None:
            raise Errors.UnknownTopicOrPartitionError(f"no topic id known for {topic!r}")
        return tid

    async def _fetch(self, s: _Session, wanted: set[TopicPartition]) -> bool:
        async with s.lock:
            acks: dict[TopicPartition, dict[int, int]] = {}
            if s.epoch == OPEN_EPOCH:
                lost = self._book.forget(s.partitions | wanted)  # nothing of an old session survives
                for tp, due in lost.items():
                    self._on_ack(tp, due, Errors.ShareSessionNotFoundError("the share session was reset"))
                adding, forgetting = wanted, set()
            else:
                adding = wanted - s.partitions
                forgetting = s.partitions - wanted
                acks = self._book.take_pending(s.partitions)
            by_topic: dict[str, list[FetchPartition]] = {}
            for tp in sorted(adding | set(acks), key=lambda t: (t.topic, t.partition)):
                batches = ack_batches(acks.get(tp, {}), AckBatchF)
                by_topic.setdefault(tp.topic, []).append(FetchPartition(
                    partition_index=tp.partition, acknowledgement_batches=batches))
            forgotten: dict[str, list[int]] = {}
            for tp in forgetting:
                forgotten.setdefault(tp.topic, []).append(tp.partition)
            req = ShareFetchRequest(
                group_id=self._group_id, member_id=self._member_id, share_session_epoch=s.epoch,
                max_wait_ms=self._max_wait_ms, min_bytes=self._min_bytes, max_bytes=self._max_bytes,
                max_records=self._max_records, batch_size=self._max_records,
                topics=[FetchTopic(topic_id=self._topic_id(t), partitions=ps) for t, ps in by_topic.items()],
                forgotten_topics_data=[ForgottenTopic(topic_id=self._topic_id(t), partitions=sorted(ps))
                                       for t, ps in forgotten.items()])
            try:
                version = await cv.api_version(self._client, s.node, ShareFetchRequest)
                resp = await cv.send(self._client, s.node, req, version,
                                     timeout_ms=(self._request_timeout * 1000) + self._max_wait_ms)
            except Errors.KafkaError as exc:
                self._acks_failed(acks, exc)
                raise
            if resp.error_code:
                failure = Errors.for_code(resp.error_code)(resp.error_message or "")
                self._acks_failed(acks, failure)
                raise failure
            s.epoch += 1
            s.partitions = (s.partitions | adding) - forgetting
            return self._handle(s, resp, acks)

    def _acks_failed(self, acks: dict[TopicPartition, dict[int, int]], exc: Errors.KafkaError) -> None:
        for tp, a in acks.items():
            self._on_ack(tp, a, exc)

    def _handle(self, s: _Session, resp: Any, acks: dict[TopicPartition, dict[int, int]]) -> bool:
        got = False
        stale = False
        for topic in resp.responses:
            name = cv.topic_name(self._client, topic.topic_id)
            if name is None:
                stale = True
                continue
            for pd in topic.partitions:
                tp = TopicPartition(name, pd.partition_index)
                if tp in acks:
                    err = _error(pd.acknowledge_error_code, pd.acknowledge_error_message)
                    self._on_ack(tp, acks.pop(tp), err)
                if pd.error_code:
                    exc = Errors.for_code(pd.error_code)(pd.error_message or "")
                    if not (exc.retriable or exc.invalid_metadata):
                        raise exc
                    stale = True
                    continue
                ranges = [(a.first_offset, a.last_offset, a.delivery_count) for a in pd.acquired_records]
                fresh = self._book.acquired(tp, ranges) if ranges else {}
                if fresh and pd.records:
                    self.buffer.append(ShareFetch(tp, s.node, [pd.records], fresh))
                    got = True
                elif fresh:
                    self._book.gaps(tp, fresh)
        for tp, a in acks.items():  # acknowledged partitions the answer did not mention
            self._on_ack(tp, a, None)
        if stale:
            cv.request_metadata_update(self._client)
        if got:
            self.data_ready.set()
        return got

    async def acknowledge(self) -> None:
        """Send every due acknowledgement now (ShareAcknowledge to each broker holding a session) and wait
        for the answers. close() wakes the wait with ConsumerStoppedError (the outcome is then unknown; the
        answers still reach the acknowledgement callback); cancelling the wait does not stop the sending."""
        if self._closed:
            raise Errors.ConsumerStoppedError("the ShareConsumer is closed")
        sending = asyncio.ensure_future(asyncio.gather(
            *(self._acknowledge(s) for s in list(self._sessions.values())
              if s.epoch != OPEN_EPOCH and self._book.has_pending(s.partitions))))
        sending.add_done_callback(lambda f: f.cancelled() or f.exception())
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await asyncio.wait((sending, closing), return_when=asyncio.FIRST_COMPLETED)
        finally:
            closing.cancel()
        if not sending.done():
            raise Errors.ConsumerStoppedError(
                "the ShareConsumer was closed while commit() waited for the broker's answer; whether these "
                "acknowledgements were taken is unknown (acknowledgement_commit_callback will be told)")
        sending.result()

    async def _acknowledge(self, s: _Session, close: bool = False) -> None:
        async with s.lock:
            if s.epoch == OPEN_EPOCH:
                return
            acks = self._book.take_pending(s.partitions)
            if not acks and not close:
                return
            by_topic: dict[str, list[AcknowledgePartition]] = {}
            for tp, a in sorted(acks.items(), key=lambda kv: (kv[0].topic, kv[0].partition)):
                by_topic.setdefault(tp.topic, []).append(
                    AcknowledgePartition(partition_index=tp.partition,
                                         acknowledgement_batches=ack_batches(a, AckBatchA)))
            req = ShareAcknowledgeRequest(
                group_id=self._group_id, member_id=self._member_id,
                share_session_epoch=CLOSE_EPOCH if close else s.epoch,
                topics=[AcknowledgeTopic(topic_id=self._topic_id(t), partitions=ps)
                        for t, ps in by_topic.items()])
            try:
                version = await cv.api_version(self._client, s.node, ShareAcknowledgeRequest)
                resp = await cv.send(self._client, s.node, req, version)
            except Errors.KafkaError as exc:
                self._acks_failed(acks, exc)
                self._reset(s)
                return
            if resp.error_code:
                self._acks_failed(acks, Errors.for_code(resp.error_code)(resp.error_message or ""))
                self._reset(s)
                return
            s.epoch = OPEN_EPOCH if close else s.epoch + 1
            if close:
                s.partitions = set()
            for topic in resp.responses:
                name = cv.topic_name(self._client, topic.topic_id)
                for pd in topic.partitions:
                    tp = TopicPartition(name or "", pd.partition_index)
                    if tp in acks:
                        self._on_ack(tp, acks.pop(tp), _error(pd.error_code, pd.error_message))
            for tp, a in acks.items():
                self._on_ack(tp, a, None)

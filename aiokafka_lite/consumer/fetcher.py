"""The fetcher: one background task keeping a Fetch in flight per broker, filling the completed-fetch buffer.

This follows the Java consumer's fetch model. A partition is fetched when it is *fetchable* (assigned, not
paused, position known, no pending reset or revocation), has no buffered data, and its leader has no Fetch
in flight from us. Responses become :class:`CompletedFetch` entries, kept raw until ``poll()`` takes
records from them, so the broker is already being asked for more while the application works on what it
got. ``poll()`` takes at most ``max_poll_records``, resuming inside a partially read fetch.

Data is only ever handed out at the partition's current position: a response that no longer matches
(the partition was sought, revoked or reassigned meanwhile) is dropped, never merged.

Failures: per-partition broker errors are handled here (leader moves refresh metadata, OFFSET_OUT_OF_RANGE
applies ``auto_offset_reset``) or kept for the next ``poll()`` to raise; connection errors back off and
retry; anything unexpected ends the task and is raised by every later ``poll()`` (never a silent stall).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

from .. import errors as Errors
from ..net import run_with_timeout
from ..net.fetch_request import REFRESH_METADATA, FetchAt, build_fetch, fetch_version
from ..protocol.messages.fetch import FetchRequest
from ..records import decode_arrow, decode_records
from ..structs import ConsumerRecord, TopicPartition
from . import cluster_view as cv
from .completed_fetch import CompletedFetch
from .corrupt import corrupt_error, find_corrupt
from .fetch_session import SESSION_ERRORS, FetchPosition, FetchRequestData, FetchSessionHandler
from .metrics import ConsumerMetrics
from .read_replica import ReadReplicas
from .subscription import OffsetResetStrategy, SubscriptionState

log = logging.getLogger(__name__)

READ_COMMITTED = 1

#: Partition errors to fetch again after a metadata refresh: those fresh metadata may fix (net's one list),
#: and, for a consumer that keeps fetching, a corrupt answer or a broker-side timeout.
_RETRY_WITH_METADATA = REFRESH_METADATA | {Errors.CorruptMessageError.errno,
                                           Errors.RequestTimedOutError.errno}


def _transient(exc: Errors.KafkaError) -> bool:
    """Worth retrying (lost connection, timeout, leader moved); anything else ends the fetcher."""
    return exc.retriable or exc.invalid_metadata or isinstance(exc, Errors.KafkaConnectionError)


class Fetcher:
    """Owns the fetch task, the fetch sessions and the completed-fetch buffer."""

    def __init__(self, client: cv.ConsumerClient, subscription: SubscriptionState, config: Any,
                 metrics: ConsumerMetrics) -> None:
        self._client = client
        self._subs = subscription
        self._metrics = metrics
        self._max_wait_ms = config.fetch_max_wait_ms
        self._min_bytes = config.fetch_min_bytes
        self._max_bytes = config.fetch_max_bytes
        self._partition_max_bytes = config.max_partition_fetch_bytes
        self._isolation = READ_COMMITTED if config.isolation_level == "read_committed" else 0
        self._check_crcs = config.check_crcs
        self._retry_backoff = config.retry_backoff_ms / 1000.0
        #: KIP-392: our rack goes in every Fetch (v11+) so the leader can name a replica near us.
        self._rack_id = getattr(config, "client_rack", None) or ""
        self._replicas = ReadReplicas(max(config.metadata_max_age_ms, 1) / 1000.0,
                                      lambda node: cv.broker_known(client, node))
        self._completed: OrderedDict[TopicPartition, CompletedFetch] = OrderedDict()
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self._sessions: dict[int, FetchSessionHandler] = {}
        self._node_backoff: dict[int, float] = {}
        #: A node that answered a fetch with nothing at once: until when, and for which positions, the
        #: same fetch waits (a seek or another partition is news, and goes out at once).
        self._quiet: dict[int, tuple[float, dict[TopicPartition, int]]] = {}
        self._partition_backoff: dict[TopicPartition, float] = {}
        #: Errors to raise from the next poll(), per partition (authorization, unexpected codes).
        self._partition_errors: dict[TopicPartition, Errors.KafkaError] = {}
        #: auto_offset_reset=none: partitions whose position fell out of range, with that position.
        self.out_of_range: dict[TopicPartition, int] = {}
        #: Partitions that just returned data go last in the next request, as Java's client orders them:
        #: a broker fills a response in request order, so no partition starves behind busy ones, and one
        #: whose next batch exceeds its share comes first in time (KIP-74 then returns it whole).
        self._fetch_seq: dict[TopicPartition, int] = {}
        self._seq = 0
        self._wake = asyncio.Event()
        self.data_ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._closed = False
        subscription.add_change_listener(self.wake)

    # -- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="aiokafka_lite-fetcher")

    async def stop(self) -> None:
        self._closed = True
        tasks = [t for t in (self._task, *self._in_flight.values()) if t is not None]
        for t in tasks:
            t.cancel()
        for t in tasks:
            try:
                await t
            except BaseException:  # shutting down; failures were already recorded
                pass
        self._task = None
        self._in_flight.clear()

    def wake(self) -> None:
        self._wake.set()

    def raise_if_failed(self) -> None:
        """Raise the error that ended the fetch task, if it ended (poll() calls this every time)."""
        if self._failure is not None:
            raise self._failure
        if self._task is not None and self._task.done() and not self._closed:
            exc = self._task.exception() if not self._task.cancelled() else None
            raise Errors.KafkaError(f"the fetcher task ended unexpectedly: {exc!r}") from exc

    def healthy(self) -> bool:
        """No failure and no partition error waiting to be raised (poll()'s fast path)."""
        return self._failure is None and not self._partition_errors and (
            self._task is None or not self._task.done())

    def raise_partition_errors(self) -> None:
        """Raise (once) a per-partition error kept from a fetch response."""
        if self._partition_errors:
            tp, exc = next(iter(self._partition_errors.items()))
            del self._partition_errors[tp]
            raise exc

    def _fail(self, exc: BaseException) -> None:
        if self._failure is None:
            self._failure = exc
        self.data_ready.set()

    # -- the fetch task ----------------------------------------------------------------------------------
    async def _run(self) -> None:
        try:
            while not self._closed:
                self._wake.clear()
                delay = self._send_fetches()
                if delay is None:
                    await self._wake.wait()
                else:
                    try:
                        await run_with_timeout(self._wake.wait(), delay)
                    except asyncio.TimeoutError:
                        pass
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            log.exception("fetcher task failed")
            self._fail(exc)
            raise

    def _send_fetches(self) -> float | None:
        """Start a Fetch for every node that has fetchable partitions and none in flight.

        Returns how long until a backoff ends (so the loop looks again then), or None to wait for a wake.
        """
        now = time.monotonic()
        retry_in: float | None = None
        per_node: dict[int, dict[TopicPartition, FetchPosition]] = {}
        need_metadata = False
        seq = self._fetch_seq
        for tp in sorted(self._subs.fetchable_partitions(), key=lambda t: seq.get(t, 0)):
            if tp in self._completed:
                continue
            until = self._partition_backoff.get(tp)
            if until is not None:
                if until > now:
                    retry_in = min(retry_in or 1e9, until - now)
                    continue
                del self._partition_backoff[tp]
            leader = cv.leader_for(self._client, tp)
            if leader is None or leader < 0:
                need_metadata = True
                retry_in = min(retry_in or 1e9, self._retry_backoff)
                continue
            node = self._fetch_node(tp, leader, now)
            if node in self._in_flight:
                continue
            until = self._node_backoff.get(node)
            if until is not None and until > now:
                retry_in = min(retry_in or 1e9, until - now)
                continue
            st = self._subs.state(tp)
            assert st.position is not None
            per_node.setdefault(node, {})[tp] = FetchPosition(
                st.position, self._partition_max_bytes, cv.leader_epoch(self._client, tp), -1,
                cv.topic_id(self._client, tp.topic))
        if need_metadata:
            cv.request_metadata_update(self._client)
        for node in [n for n, wanted in per_node.items() if self._hold_back(n, wanted)]:
            del per_node[node]
        for node in [n for n, wanted in per_node.items() if self._quiet_for(n, wanted, now)]:
            del per_node[node]
            retry_in = min(retry_in or 1e9, self._quiet[node][0] - now)
        loop = asyncio.get_running_loop()
        for node, wanted in per_node.items():
            self._in_flight[node] = loop.create_task(self._fetch(node, wanted),
                                                     name=f"aiokafka_lite-fetch-{node}")
        return retry_in

    def _fetch_node(self, tp: TopicPartition, leader: int, now: float) -> int:
        return self._replicas.node_for(tp, leader, now, self._node_backoff)

    def _quiet_for(self, node: int, wanted: dict[TopicPartition, FetchPosition], now: float) -> bool:
        """Whether ``wanted`` is the fetch ``node`` just answered with nothing, sooner than it should have."""
        quiet = self._quiet.get(node)
        if quiet is None:
            return False
        until, asked = quiet
        if until <= now or len(wanted) != len(asked) or any(
                asked.get(tp) != pos.fetch_offset for tp, pos in wanted.items()):
            del self._quiet[node]
            return False
        return True

    def _hold_back(self, node: int, wanted: dict[TopicPartition, FetchPosition]) -> bool:
        """Wait before fetching only caught-up partitions while others of the node still have data buffered.

        Such a fetch would sit on the broker for fetch_max_wait_ms (nothing new to return), and being the
        node's one fetch in flight it would hold back the buffered partitions' next fetch as long. Sent a
        little later, it goes out together with them, once the application drained their data.
        """
        for tp in wanted:
            st = self._subs.state(tp)
            if st.high_watermark < 0 or st.position is None or st.position < st.high_watermark:
                return False
        for tp in self._completed:
            buffered = self._subs.state_or_none(tp)
            leader = cv.leader_for(self._client, tp)
            if (buffered is not None and not buffered.paused and leader is not None
                    and self._fetch_node(tp, leader, time.monotonic()) == node):
                return True
        return False

    def _build_request(self, version: int, data: FetchRequestData) -> tuple[FetchRequest, int]:
        version = fetch_version(version, (pos.topic_id for pos in data.session_partitions.values()))
        parts = {tp: FetchAt(pos.fetch_offset, pos.max_bytes, pos.current_leader_epoch,
                             pos.last_fetched_epoch) for tp, pos in data.to_send.items()}
        req = build_fetch(version, parts, lambda t: cv.topic_id(self._client, t),
                          max_wait_ms=self._max_wait_ms, min_bytes=self._min_bytes,
                          max_bytes=self._max_bytes, isolation=self._isolation, session_id=data.session_id,
                          session_epoch=data.epoch, rack_id=self._rack_id, forgotten=data.to_forget)
        return req, version

    async def _fetch(self, node: int, wanted: dict[TopicPartition, FetchPosition]) -> None:
        try:
            await self._fetch_once(node, wanted)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            log.exception("fetch from node %s failed unexpectedly", node)
            self._fail(exc)
        finally:
            self._in_flight.pop(node, None)
            self._wake.set()

    async def _fetch_once(self, node: int, wanted: dict[TopicPartition, FetchPosition]) -> None:
        session = self._sessions.get(node)
        if session is None:
            session = self._sessions[node] = FetchSessionHandler(node)
        try:
            version = await cv.api_version(self._client, node, FetchRequest)
        except Errors.KafkaError as exc:
            self._node_unreachable(node, wanted, exc, True, "cannot reach node %s for fetching: %s")
            return
        use_ids = version >= 13 and all(pos.topic_id is not None for pos in wanted.values())
        if session.topic_ids is not None and session.topic_ids != use_ids:
            session.reset()
        session.topic_ids = use_ids
        data = session.build(wanted)
        req, version = self._build_request(version if use_ids else min(version, 12), data)
        if data.is_full:
            self._metrics.full_fetches += 1
        else:
            self._metrics.incremental_fetches += 1
        started = time.monotonic()
        try:
            resp = await cv.send(self._client, node, req, version)
        except Errors.KafkaError as exc:
            session.handle_error()
            refresh = exc.invalid_metadata or isinstance(exc, Errors.KafkaConnectionError)
            self._node_unreachable(node, wanted, exc, refresh, "fetch from node %s failed: %s")
            self._metrics.fetch_errors += 1
            return
        self._metrics.fetch_requests += 1
        self._metrics.fetch_latency.record(time.monotonic() - started)
        if self._closed:
            return
        parts = self._response_partitions(resp, version, data)
        if not session.handle_response(data, resp.error_code, resp.session_id, [tp for tp, _ in parts]):
            self._session_failed(node, wanted, resp.error_code)
            return
        for tp, pd in parts:
            pos = data.session_partitions.get(tp)
            if pos is not None:
                self._handle_partition(tp, pos, pd, node)
        if not any(pd.records or pd.error_code for _, pd in parts):
            # Nothing new, and a broker holds such a fetch for fetch_max_wait_ms. One that answers at once
            # (noida-db at the end of a log) would get the next fetch at once, a busy loop; the node waits
            # out the rest of that time instead.
            self._quiet[node] = (started + self._max_wait_ms / 1000,
                                 {tp: pos.fetch_offset for tp, pos in wanted.items()})

    def _node_unreachable(self, node: int, wanted: dict[TopicPartition, FetchPosition],
                          exc: Errors.KafkaError, refresh: bool, what: str) -> None:
        """A transient failure backs the node off (and refreshes metadata); anything else is raised."""
        if not _transient(exc):
            raise exc
        self._node_backoff[node] = time.monotonic() + self._retry_backoff
        self._replicas.leave(wanted, node)
        if refresh:
            cv.request_metadata_update(self._client)
        log.debug(what, node, exc)

    def _response_partitions(self, resp: Any, version: int, data: FetchRequestData
                             ) -> list[tuple[TopicPartition, Any]]:
        names = {cv.topic_id(self._client, tp.topic): tp.topic for tp in data.session_partitions} \
            if version >= 13 else {}
        parts: list[tuple[TopicPartition, Any]] = []
        for topic_resp in resp.responses:
            topic = names.get(topic_resp.topic_id, "") if version >= 13 else topic_resp.topic
            for pd in topic_resp.partitions:
                parts.append((TopicPartition(topic, pd.partition_index), pd))
        return parts

    def _session_failed(self, node: int, wanted: dict[TopicPartition, FetchPosition], code: int) -> None:
        """A whole-response error: the fetch session's (handled by it) or one for every partition."""
        self._metrics.fetch_errors += 1
        if code and code not in SESSION_ERRORS:
            exc_cls = Errors.for_code(code)
            if not exc_cls.retriable and exc_cls.errno not in _RETRY_WITH_METADATA:
                for tp in wanted:
                    self._partition_errors[tp] = exc_cls(f"fetch from node {node}")
            self._node_backoff[node] = time.monotonic() + self._retry_backoff

    def _handle_partition(self, tp: TopicPartition, pos: FetchPosition, pd: Any, node: int) -> None:
        st = self._subs.state_or_none(tp)
        if st is None or not st.fetchable or st.position != pos.fetch_offset or tp in self._completed:
            return  # stale: sought, paused, revoked or already buffered meanwhile
        code = pd.error_code
        if code == 0:
            replica = getattr(pd, "preferred_read_replica", -1)
            if replica is not None and replica >= 0 and replica != node:
                # KIP-392: the leader names a replica (in our rack) to fetch from until the
                # metadata would be refreshed anyway; it sends no records with this answer.
                self._replicas.prefer(tp, replica, time.monotonic())
                self._wake.set()
            if pd.high_watermark >= 0:
                st.high_watermark = pd.high_watermark
            st.last_stable_offset = pd.last_stable_offset
            st.log_start_offset = pd.log_start_offset
            st.last_fetch_ms = int(time.time() * 1000)
            records = pd.records
            if records:
                aborted = None
                if self._isolation == READ_COMMITTED:
                    aborted = [(a.producer_id, a.first_offset) for a in (pd.aborted_transactions or ())]
                self._completed[tp] = CompletedFetch(tp, pos.fetch_offset, records, aborted)
                self._seq += 1
                self._fetch_seq[tp] = self._seq
                self._metrics.fetch_bytes += len(records)
                self.data_ready.set()
            return
        if self._replicas.leave((tp,), node):
            # Any error from a read replica sends the partition back to its leader first. The
            # replica may lag behind the leader (OFFSET_OUT_OF_RANGE there is no reason to reset),
            # or have left the replica set (NOT_LEADER_OR_FOLLOWER, REPLICA_NOT_AVAILABLE...).
            log.debug("fetch of %s from read replica %s: %s; back to the leader", tp, node,
                      Errors.for_code(code).message)
            if code == Errors.OffsetOutOfRangeError.errno:
                self._wake.set()
                return
        if code == Errors.OffsetOutOfRangeError.errno:
            if self._subs.default_reset is OffsetResetStrategy.NONE:
                self.out_of_range[tp] = pos.fetch_offset
                self._subs.request_reset(tp, OffsetResetStrategy.NONE)
                self.data_ready.set()
            else:
                log.info("fetch offset %s of %s is out of range; resetting", pos.fetch_offset, tp)
                self._subs.request_reset(tp)
                self.data_ready.set()
            return
        if code in _RETRY_WITH_METADATA:
            log.debug("fetch of %s: %s; refreshing metadata", tp, Errors.for_code(code).message)
            self._partition_backoff[tp] = time.monotonic() + self._retry_backoff
            cv.request_metadata_update(self._client)
            return
        exc = Errors.for_code(code)(f"fetching {tp.topic}[{tp.partition}]")
        self._partition_errors[tp] = exc
        self._partition_backoff[tp] = time.monotonic() + max(self._retry_backoff, 1.0)
        self.data_ready.set()

    # -- handing out data --------------------------------------------------------------------------------
    def has_buffered(self) -> bool:
        return bool(self._completed)

    def _usable(self, cf: CompletedFetch) -> bool | None:
        """True: hand out; None: keep for later (paused); False: drop (position moved, not assigned)."""
        st = self._subs.state_or_none(cf.tp)
        if st is None or st.pending_revocation or st.reset_strategy is not None or st.position != cf.position:
            return False
        if st.paused:
            return None
        return True

    def _drop(self, tp: TopicPartition) -> None:
        self._completed.pop(tp, None)
        self._wake.set()

    def take_one(self) -> ConsumerRecord | None:
        """The next record of the first buffered fetch when that is the plain case (getone()'s fast path);
        None sends the caller to :meth:`take_records`, which handles everything else."""
        for tp, cf in self._completed.items():
            recs = cf.records
            if recs is None or cf.index >= len(recs):
                return None
            st = self._subs.state_or_none(tp)
            if (st is None or st.paused or st.pending_revocation or st.reset_strategy is not None
                    or st.position != cf.position):
                return None
            r = recs[cf.index]
            cf.index += 1
            st.position = cf.position = r.offset + 1
            st.leader_epoch = r.leader_epoch
            if cf.index >= len(recs):
                self._handed_out(tp, cf, st)
            self._metrics.record_consumed(1, 0)
            self._metrics.topic_consumed(tp.topic, 1, 0)
            return r
        return None

    def _takeable(self, only: Iterable[TopicPartition] | None
                  ) -> Iterator[tuple[TopicPartition, CompletedFetch]]:
        """Completed fetches ready to hand out (of ``only``, if given); drops unusable ones on the way."""
        wanted = None if only is None else set(only)
        for tp in list(self._completed):
            if wanted is not None and tp not in wanted:
                continue
            cf = self._completed[tp]
            usable = self._usable(cf)
            if usable is None:
                continue
            if not usable:
                self._drop(tp)
                continue
            yield tp, cf

    def _decode(self, decode: Callable[..., Any], tp: TopicPartition, cf: Any) -> Any:
        """Decode a completed fetch. Corrupt data: the batches before the bad one are decoded alone (and
        handed out; the next fetch starts at the bad batch), or, with none, an error that names the topic,
        partition and offset and where seek() gets past it (corrupt.py)."""
        kwargs = {"check_crcs": self._check_crcs, "start_offset": cf.position, "aborted": cf.aborted}
        try:
            return decode(cf.data, tp.topic, tp.partition, **kwargs)
        except Errors.CorruptRecordError as exc:
            found = find_corrupt(cf.data, decode, tp.topic, tp.partition, **kwargs)
            if found is None or found.byte_pos == 0:
                raise corrupt_error(tp.topic, tp.partition, cf.position, found, exc) from exc
            cf.data = memoryview(cf.data)[:found.byte_pos]
            log.warning("%s-%s: corrupt batch at offset %d: delivering the %d bytes before it first",
                        tp.topic, tp.partition, found.base_offset, found.byte_pos)
            return decode(cf.data, tp.topic, tp.partition, **kwargs)

    def _decoded(self, tp: TopicPartition, cf: CompletedFetch, *, arrow: bool) -> int:
        """Decode ``cf`` from its position as Arrow or as records, unless it is already in that form (the
        other form is dropped: switching re-decodes from the position). Returns the fetch's size when this
        is its first decoding (its bytes count once), else 0."""
        if (cf.arrow if arrow else cf.records) is not None:
            return 0
        first = cf.arrow is None and cf.records is None
        # Tens of thousands of new tuples at once would run the cyclic GC dozens of times over objects
        # that cannot form cycles; one pass afterwards is enough.
        gc_on = not arrow and gc.isenabled()
        if gc_on:
            gc.disable()
        try:
            res = self._decode(decode_arrow if arrow else decode_records, tp, cf)
        except Errors.KafkaError:
            self._drop(tp)
            raise
        finally:
            if gc_on:
                gc.enable()
        if arrow:
            cf.arrow, cf.arrow_index, cf.records = res.batch, 0, None
        else:
            cf.records, cf.index, cf.arrow = res.records, 0, None
        cf.next_offset, cf.leader_epoch = res.next_offset, res.leader_epoch
        return len(cf.data) if first else 0

    def _handed_out(self, tp: TopicPartition, cf: CompletedFetch, st: Any) -> None:
        """Every record of ``cf`` is handed out: the position moves past what the fetch held beyond its last
        record (control batches, aborted data, compaction gaps), and the fetch is dropped."""
        if cf.next_offset > cf.position:
            st.position = cf.next_offset
        self._drop(tp)

    def take_records(self, max_records: int, only: Iterable[TopicPartition] | None = None
                     ) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Up to ``max_records`` records in fetch order (of ``only``, if given), advancing positions."""
        return self._take(max_records, only, arrow=False)

    def take_arrow(self, max_records: int, only: Iterable[TopicPartition] | None = None
                   ) -> dict[TopicPartition, Any]:
        """Like :meth:`take_records`, as one ``pyarrow.RecordBatch`` per partition (no per-record objects)."""
        return self._take(max_records, only, arrow=True)

    def _take(self, max_records: int, only: Iterable[TopicPartition] | None, *,
              arrow: bool) -> dict[Any, Any]:
        """The one hand-out loop of both forms: per partition in fetch order, decode, take what the budget
        allows, advance the position, drop the fetch once handed out; count records and bytes once."""
        out: dict[TopicPartition, Any] = {}
        budget = max_records
        nbytes = 0
        if budget <= 0:
            return out
        for tp, cf in self._takeable(only):
            fetched = self._decoded(tp, cf, arrow=arrow)
            nbytes += fetched
            chunk, n, position, epoch, done = (_arrow_chunk if arrow else _records_chunk)(cf, budget)
            st = self._subs.state(tp)
            if n or fetched:
                self._metrics.topic_consumed(tp.topic, n, fetched)
            if n:
                out[tp] = chunk
                budget -= n
                st.position = cf.position = position
                st.leader_epoch = epoch
            if done:
                self._handed_out(tp, cf, st)
            if budget <= 0:
                break
        if out or nbytes:
            self._metrics.record_consumed(max_records - budget, nbytes)
        return out

    def drop_buffered(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """Forget buffered data (of some partitions); their next fetch starts at the position."""
        if partitions is None:
            self._completed.clear()
        else:
            for tp in partitions:
                self._completed.pop(tp, None)
        self._wake.set()

    def buffered_partitions(self) -> set[TopicPartition]:
        return set(self._completed)


def _records_chunk(cf: CompletedFetch, budget: int) -> tuple[Any, int, int, int, bool]:
    """The next records of ``cf`` (at most ``budget``), taken: (chunk, count, the position after them and
    their leader epoch, whether ``cf`` is used up)."""
    recs = cast("list[ConsumerRecord]", cf.records)
    i = cf.index
    chunk = recs[i:i + budget] if i or len(recs) > budget else recs
    n = len(chunk)
    cf.index = i + n
    if not n:
        return chunk, 0, cf.position, cf.leader_epoch, cf.index >= len(recs)
    last = chunk[-1]
    return chunk, n, last.offset + 1, last.leader_epoch, cf.index >= len(recs)


def _arrow_chunk(cf: CompletedFetch, budget: int) -> tuple[Any, int, int, int, bool]:
    """:func:`_records_chunk` for ``cf``'s Arrow batch: a slice of it (the offset column is column 4)."""
    batch = cf.arrow
    i = cf.arrow_index
    n = max(0, min(budget, batch.num_rows - i))
    cf.arrow_index = i + n
    done = cf.arrow_index >= batch.num_rows
    if not n:
        return None, 0, cf.position, cf.leader_epoch, done
    chunk = batch if (i == 0 and n == batch.num_rows) else batch.slice(i, n)
    return chunk, n, int(batch.column(4)[i + n - 1].as_py()) + 1, cf.leader_epoch, done

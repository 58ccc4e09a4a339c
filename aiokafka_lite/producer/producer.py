"""The Producer: ``send()`` (serialize, wait for metadata, partition, append) and its lifecycle.

``send()`` only waits for metadata of a topic it has not seen and for buffer memory; everything
network-bound happens in the Sender task. The common path -- known topic, open batch with room --
runs without awaiting anything: a dict lookup for the topic, the partition choice, one append into
the batch builder and a three-field handle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

from .._instrument import telemetry_for
from .._lifecycle import AsyncClient
from .._weak import weak_method
from ..config import PRODUCER, Config, dotted_to_kwargs
from ..errors import (
    IllegalArgumentError,
    IllegalStateError,
    KafkaError,
    KafkaTimeoutError,
    ProducerClosedError,
    UnknownTopicOrPartitionError,
)
from ..metrics.hub import ClientMetrics
from ..metrics.monitor import Entry, Feed
from ..net import KafkaClient
from ..net.retry import Retry, call_with_retries, retry_backoff
from ..records import BATCH_OVERHEAD, RECORD_OVERHEAD_MAX, codec_from_name
from ..structs import OffsetAndMetadata, RecordMetadata, TopicPartition, check_topic_name
from .accumulator import RecordAccumulator
from .batch import ProducerBatch
from .bulk import BulkFuture, check_sizes, serialized_many
from .core import RUNNING, YIELD_BYTES, SendCore, TopicInfo
from .doorbell import Doorbell
from .handles import RecordFuture, make_future
from .idempotence import IdempotenceState
from .interceptors import Interceptors, ProducerRecord
from .memory import MemoryPool
from .metrics import ProducerMetrics, collect
from .partitioner import resolve_partitioner
from .records_check import as_bytes, record_size, record_timestamp, serialize
from .sender import Sender
from .states import LIFECYCLE, Lifecycle, StateMachine
from .transaction import TransactionManager, TxnState

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .._settings import ProducerSettings

__all__ = ["Producer"]

log = logging.getLogger("aiokafka_lite.producer")

#: What the send() fast path reads of the lifecycle (``SendCore._state``): RUNNING or not.
_FAST_STATE = {Lifecycle.RUNNING: RUNNING, Lifecycle.FAILED: 3, Lifecycle.CLOSING: 2, Lifecycle.STOPPED: 2}


class Producer(SendCore, AsyncClient):
    """An asyncio Kafka producer; settings as in ``shared/api.md`` and ``docs/producer.md``."""

    def __init__(self, *, api_version_caps: Mapping[str | int, int] | None = None,
                 **settings: Unpack[ProducerSettings]) -> None:
        """``settings`` are Kafka's producer settings (``docs/configuration.md``); ``api_version_caps``
        (``{"Metadata": 8}``) caps API versions, e.g. for a broker that mis-encodes some."""
        SendCore.__init__(self)
        cfg = self._config = Config(PRODUCER, settings)
        self._client = KafkaClient(cfg, allow_auto_create_topics=cfg.allow_auto_create_topics,
                                   api_version_caps=api_version_caps, closed_error=ProducerClosedError)
        self._key_serializer = cfg.key_serializer
        self._value_serializer = cfg.value_serializer
        for name in ("key_serializer", "value_serializer"):
            fn = getattr(cfg, name)
            if fn is not None and not callable(fn):
                from ..errors import ConfigError

                raise ConfigError(f"setting {name!r} must be callable, got {type(fn).__name__}")
        self._interceptors = Interceptors(cfg.interceptors) if cfg.interceptors else None
        self._partitioner = resolve_partitioner(cfg.partitioner, cfg.partitioner_ignore_keys)
        #: OpenTelemetry hooks (aiokafka_lite.otel) when this producer is instrumented, else None.
        self._otel = telemetry_for("producer", cfg)
        # What the fast path (SendCore.send) reads. An instrumented producer takes the slow path for every
        # record, so the fast path never carries a telemetry check.
        self._plain = (self._interceptors is None and self._key_serializer is None
                       and self._value_serializer is None and self._otel is None)
        self._key_hash = self._partitioner.key_hash
        self._sticky_null = self._partitioner.null_key == "sticky"
        self._codec = codec_from_name(cfg.compression_type) if cfg.compression_type else 0
        self._transactional_id: str | None = cfg.transactional_id
        idempotent = cfg.enable_idempotence or self._transactional_id is not None
        if idempotent:
            from ..errors import ConfigError

            if cfg.acks != -1:
                if "enable_idempotence" in settings and cfg.enable_idempotence:
                    raise ConfigError("enable_idempotence=True needs acks='all'")
                if self._transactional_id is not None:
                    raise ConfigError("transactional_id needs acks='all'")
                idempotent = False  # like Java: idempotence by default yields to an explicit acks
            elif cfg.max_in_flight_requests_per_connection > 5:
                if self._transactional_id is not None or "enable_idempotence" in settings:
                    raise ConfigError("idempotence needs max_in_flight_requests_per_connection <= 5")
                idempotent = False
        self._idempotent = idempotent
        if cfg.delivery_timeout_ms < cfg.linger_ms + cfg.request_timeout_ms:
            from ..errors import ConfigError

            raise ConfigError(f"delivery_timeout_ms ({cfg.delivery_timeout_ms}) must be >= linger_ms + "
                              f"request_timeout_ms ({cfg.linger_ms + cfg.request_timeout_ms})")
        self._batch_size = cfg.batch_size
        self._max_request_size = cfg.max_request_size
        self._buffer_memory = cfg.buffer_memory
        self._max_block = cfg.max_block_ms / 1000
        #: Records whose key+value stay below this need no exact size check.
        self._size_fast_limit = min(cfg.max_request_size, cfg.buffer_memory) - BATCH_OVERHEAD - \
            RECORD_OVERHEAD_MAX
        self._metrics = ProducerMetrics()
        txn_id = self._transactional_id
        # The network client calls it after each metadata update (weakly: see _weak).
        self._metadata_listener = weak_method(self._on_metadata)
        self._hub = ClientMetrics("producer", cfg, self._client, weak_method(self._collect_metrics),
                                  {"transactional_id": txn_id} if txn_id else None)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._acc: RecordAccumulator | None = None
        self._sender: Sender | None = None
        self._idem: IdempotenceState | None = None
        self._txn: TransactionManager | None = None
        self._life = StateMachine("producer", LIFECYCLE, Lifecycle.NEW, self._lifecycle_changed)
        #: Why the producer FAILED (set with that state, kept through stop()).
        self._error: BaseException | None = None
        #: Set by the start() and stop() in progress; a concurrent call waits for them.
        self._start_done: asyncio.Future[None] | None = None
        self._stop_done: asyncio.Future[None] | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Producer:
        """Build from Kafka's dotted names:
        ``Producer.from_config({"bootstrap.servers": ..., "linger.ms": 5})``."""
        return cls(**dotted_to_kwargs(config))

    @property
    def config(self) -> Config:
        return self._config

    @property
    def client(self) -> KafkaClient:
        return self._client

    # -- lifecycle ------------------------------------------------------------------------------

    def _lifecycle_changed(self, old: Lifecycle, new: Lifecycle) -> None:
        self._state = _FAST_STATE.get(new, 0)

    @property
    def _started(self) -> bool:
        return self._life.state in (Lifecycle.RUNNING, Lifecycle.FAILED, Lifecycle.CLOSING)

    @property
    def _closed(self) -> bool:
        return self._life.state in (Lifecycle.CLOSING, Lifecycle.STOPPED)

    async def start(self) -> None:
        """Connect (bootstrap), start the Sender, and with a transactional_id initialize transactions.
        Returns at once when started; a concurrent call waits for the first."""
        state = self._life.state
        if state is Lifecycle.STARTING:
            assert self._start_done is not None
            await asyncio.shield(self._start_done)
            return
        if state in (Lifecycle.RUNNING, Lifecycle.FAILED):
            return
        if state is not Lifecycle.NEW:
            raise ProducerClosedError("this producer was stopped; make a new one")
        self._life.transition_to(Lifecycle.STARTING)
        done = self._start_done = asyncio.get_running_loop().create_future()
        try:
            await self._start()
        except BaseException as exc:
            if not done.done():
                done.set_exception(exc if isinstance(exc, Exception) else ProducerClosedError(
                    "the producer's start() was cancelled"))
                done.exception()  # retrieved: a concurrent start() may not be there to read it
            raise
        else:
            if not done.done():
                done.set_result(None)

    async def _start(self) -> None:
        cfg = self._config
        loop = self._loop = asyncio.get_running_loop()
        try:
            await self._client.start()
        except BaseException:
            self._life.transition_to(Lifecycle.NEW)  # nothing started: start() may be tried again
            raise
        try:
            pool = MemoryPool(cfg.buffer_memory)
            bell = Doorbell(loop)  # the Sender sleeps on it; appends and the transaction manager ring it
            if self._idempotent:
                self._idem = IdempotenceState(transactional=self._transactional_id is not None)
            if self._transactional_id is not None:
                assert self._idem is not None
                self._txn = TransactionManager(
                    self._client, self._idem, self._transactional_id,
                    transaction_timeout_ms=cfg.transaction_timeout_ms, retry_backoff_ms=cfg.retry_backoff_ms,
                    retry_backoff_max_ms=cfg.retry_backoff_max_ms, request_timeout_ms=cfg.request_timeout_ms,
                    wakeup=bell.ring, on_fatal=weak_method(self._on_fatal))
            acc = self._acc = RecordAccumulator(
                batch_size=cfg.batch_size, linger_ms=cfg.linger_ms, compression=self._codec, pool=pool,
                loop=loop, delivery_timeout_ms=cfg.delivery_timeout_ms,
                transactional=self._transactional_id is not None,
                # Without idempotence too: a batch waiting behind one of its partition in flight (all
                # request slots busy on a far link) takes more records instead of queueing small ones.
                max_batch_bytes=min(cfg.max_batch_bytes, cfg.max_request_size - 4096),
                keep_handles=bool(self._interceptors and self._interceptors.wants_acks),
                partitioner=self._partitioner, txn=self._txn, guard=weak_method(self._check_usable),
                bell=bell)
            self._batches, self._put_open = acc.batches, acc.put_open
            sender = self._sender = Sender(
                self._client, acc, acks=cfg.acks, max_request_size=cfg.max_request_size,
                max_in_flight=cfg.max_in_flight_requests_per_connection, retries=cfg.retries,
                request_timeout_ms=cfg.request_timeout_ms, retry_backoff_ms=cfg.retry_backoff_ms,
                retry_backoff_max_ms=cfg.retry_backoff_max_ms, idempotence=self._idem, transactions=self._txn,
                metrics=self._metrics, on_fatal=weak_method(self._on_fatal),
                on_ack=weak_method(self._on_ack) if acc.keep_handles else None)
            self._client.add_metadata_listener(self._metadata_listener)
            sender.start()
            self._hub.start()
            if self._txn is not None:
                await self._txn.initialize(self._max_block)
            if self._error is not None:
                raise self._error
            self._life.transition_to(Lifecycle.RUNNING)
        except BaseException:
            await self._abandon()
            raise

    async def _abandon(self) -> None:
        if self._life.state is not Lifecycle.STOPPED:
            self._life.transition_to(Lifecycle.STOPPED)
        if self._sender is not None:
            self._sender.force_close(ProducerClosedError("the producer failed to start"))
        self._client.remove_metadata_listener(self._metadata_listener)
        await self._hub.close()
        await self._client.close()

    async def stop(self, timeout: float | None = None) -> None:
        """Flush and close. Records not delivered (delivery timeout, or ``timeout`` s passed) fail with a
        clear error on their futures; an open transaction is aborted (within ``request_timeout_ms``
        unless ``timeout`` says otherwise). Every call returns only once the producer is stopped: a
        concurrent one waits for the first (and with a ``timeout`` of its own, cuts it short)."""
        state = self._life.state
        if state is Lifecycle.STARTING:
            assert self._start_done is not None
            await self._client.close()  # wakes a start() waiting for a broker: it fails, then stops
            await asyncio.wait([self._start_done])
            state = self._life.state
        if state is Lifecycle.STOPPED:
            if self._stop_done is not None:
                await asyncio.shield(self._stop_done)
            return
        if state is Lifecycle.CLOSING:
            await self._wait_stopped(timeout)
            return
        if state is Lifecycle.NEW:
            self._life.transition_to(Lifecycle.STOPPED)
            await self._client.close()
            return
        self._life.transition_to(Lifecycle.CLOSING)
        done = self._stop_done = asyncio.get_running_loop().create_future()
        try:
            txn = self._txn
            if txn is not None and self._error is None and txn.state in (
                    TxnState.IN_TRANSACTION, TxnState.ABORTABLE_ERROR):
                budget = timeout if timeout is not None else self._config.request_timeout_ms / 1000
                with contextlib.suppress(KafkaError, asyncio.TimeoutError):
                    await asyncio.wait_for(self._abort(txn, budget), budget)
            assert self._sender is not None
            await self._sender.close(timeout)
        except BaseException:
            # Cancelled (e.g. wait_for(stop(), 1)) or failed: nothing may keep running against the closed
            # client. Every record not yet delivered fails with ProducerClosedError.
            if self._sender is not None:
                self._sender.force_close(ProducerClosedError("the producer was stopped before delivery"))
            raise
        finally:
            try:
                self._client.remove_metadata_listener(self._metadata_listener)
                await self._hub.close()  # the terminating KIP-714 push needs the connections still open
                await self._client.close()
            finally:
                self._life.transition_to(Lifecycle.STOPPED)
                done.set_result(None)

    async def _wait_stopped(self, timeout: float | None) -> None:
        """A second stop(): wait for the first; after its own ``timeout``, fail what is left now."""
        done = self._stop_done
        assert done is not None
        if timeout is not None:
            try:
                await asyncio.wait_for(asyncio.shield(done), timeout)
                return
            except asyncio.TimeoutError:
                if self._sender is not None:
                    self._sender.force_close(ProducerClosedError(
                        f"the producer was stopped and could not deliver within {timeout} s"))
        await asyncio.shield(done)

    close = stop

    def _on_fatal(self, error: BaseException) -> None:
        """The Sender failed (a bug) or the transaction is fatal: every later call raises ``error``. A
        failure while starting is start()'s to raise (and leaves the producer closed)."""
        if self._error is None and self._life.state is not Lifecycle.STARTING:
            self._error = error
            if self._life.allows(Lifecycle.FAILED):
                self._life.transition_to(Lifecycle.FAILED)
            if self._txn is not None:
                self._txn.fatal(error)

    def _raise_unusable(self) -> None:
        if self._error is not None:
            err = self._error
            if isinstance(err, KafkaError):
                raise err
            raise IllegalStateError(f"the producer failed: {err!r}") from err
        if self._closed:
            raise ProducerClosedError("the producer is stopped")
        raise IllegalStateError("the producer is not started: await producer.start() or use 'async with'")

    def _check_usable(self) -> None:
        """The accumulator's guard before each new batch: a send that waited may find the producer
        failed or stopped meanwhile."""
        if self._life.state is not Lifecycle.RUNNING:
            self._raise_unusable()

    # -- metadata -------------------------------------------------------------------------------

    def _on_metadata(self, cluster: Any) -> None:
        # Partition counts and leaders may have changed: rebuild lazily on the next send.
        self._topics.clear()

    def _topic_info(self, topic: str) -> TopicInfo | None:
        cluster = self._client.cluster
        parts = cluster.partitions_for(topic)
        if not parts:
            return None
        info = self._topics[topic] = TopicInfo(topic, parts, cluster.available_partitions_for(topic))
        return info

    async def _wait_on_metadata(self, topic: str, partition: int | None, deadline: float) -> TopicInfo:
        """Metadata trigger 1: wait (up to max_block_ms) for the topic, or for the given partition."""
        check_topic_name(topic)
        loop = asyncio.get_running_loop()
        info = self._topic_info(topic)
        if info is None:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise KafkaTimeoutError(f"topic {topic!r} not present in metadata after "
                                        f"{round(self._max_block * 1000)} ms (max_block_ms)")
            try:
                await self._client.wait_for_topic(topic, max(int(remaining * 1000), 1))
            except KafkaTimeoutError as exc:
                raise KafkaTimeoutError(f"topic {topic!r} not present in metadata after "
                                        f"{round(self._max_block * 1000)} ms (max_block_ms): {exc}") from None
            info = self._topic_info(topic)
            if info is None:
                raise KafkaTimeoutError(f"topic {topic!r} not present in metadata")
        if partition is not None and partition >= info.num_partitions:
            if type(partition) is not int or partition < 0:
                raise IllegalArgumentError(f"partition must be an int >= 0 or None, got {partition!r}")
            info = await self._wait_for_partition(topic, partition, info, deadline)
        return info

    async def _wait_for_partition(self, topic: str, partition: int, info: TopicInfo,
                                  deadline: float) -> TopicInfo:
        """Refresh metadata until ``topic`` has ``partition`` (it grew), up to the loop-time ``deadline``."""
        loop = asyncio.get_running_loop()
        seen = info

        async def attempt() -> TopicInfo:
            nonlocal seen
            await self._client.refresh_metadata((topic,))
            seen = self._topic_info(topic) or seen
            if partition >= seen.num_partitions:
                raise UnknownTopicOrPartitionError(f"{topic}[{partition}]")
            return seen

        retry = Retry(f"Waiting for partition {partition} of topic {topic!r}", deadline - loop.time(),
                      retry_backoff(self._config), wait_out=True, clock=loop.time)
        try:  # any failed refresh is waited out: max_block_ms is the limit
            return await call_with_retries(attempt, retry, retriable=lambda e: isinstance(e, KafkaError))
        except KafkaTimeoutError as exc:
            raise KafkaTimeoutError(
                f"partition {partition} of topic {topic!r} with {seen.num_partitions} partitions not present "
                f"in metadata after {round(self._max_block * 1000)} ms (max_block_ms)") from exc.__cause__

    async def partitions_for(self, topic: str) -> set[int]:
        """The partition ids of ``topic`` (waiting up to max_block_ms for its metadata)."""
        if not self._started or self._closed:
            self._raise_unusable()
        loop = asyncio.get_running_loop()
        info = await self._wait_on_metadata(topic, None, loop.time() + self._max_block)
        return set(info.partitions)

    # -- sending --------------------------------------------------------------------------------

    async def _send_slow(self, topic: str, value: Any, key: Any, partition: int | None,
                         timestamp_ms: int | None, headers: Any, _traced: bool = False) -> RecordFuture:
        """The complete send(): everything the fast path (``core.SendCore.send``) hands over."""
        if self._otel is not None and not _traced:
            return await self._otel.send(self._send_traced, topic, value, key, partition, timestamp_ms,
                                         headers)
        if self._state != RUNNING:
            self._raise_unusable()
        topic, value, key, partition, timestamp_ms, headers = self._prepared(
            topic, value, key, partition, timestamp_ms, headers)
        info = self._topics.get(topic)
        if info is None or (partition is not None and partition >= info.num_partitions):
            assert self._loop is not None
            info = await self._wait_on_metadata(topic, partition, self._loop.time() + self._max_block)
        nbytes = (len(value) if value is not None else 0) + (len(key) if key is not None else 0)
        if headers or nbytes > self._size_fast_limit:
            nbytes = self._check_size(topic, key, value, headers)
        ts = record_timestamp(timestamp_ms)
        acc = self._acc
        assert acc is not None
        try:
            batch, delta, _ = await acc.append_record(info, partition, ts, key, value, headers, nbytes,
                                                           self._max_block)
        except ProducerClosedError:
            self._raise_unusable()
            raise
        # Let other tasks run once per YIELD_BYTES of records, as the fast path does (see there).
        self._unyielded += nbytes
        if self._unyielded >= YIELD_BYTES:
            self._unyielded = 0
            await asyncio.sleep(0)
        fut = make_future(batch.result, delta, ts)
        if batch.handles is not None:
            batch.handles.append(fut)
        return fut

    def _prepared(self, topic: str, value: Any, key: Any, partition: int | None, timestamp_ms: int | None,
                  headers: Any) -> tuple[str, bytes | None, bytes | None, int | None, int | None, Any]:
        """The record after the interceptors and serializers, as bytes, its partition checked."""
        if self._interceptors is not None:
            record = ProducerRecord(topic, value, key, partition, timestamp_ms, headers)
            topic, value, key, partition, timestamp_ms, headers = self._interceptors.on_send(record)
        if self._key_serializer is not None:
            key = serialize(self._key_serializer, key, "key", topic)
        if self._value_serializer is not None:
            value = serialize(self._value_serializer, value, "value", topic)
        if (value is not None and type(value) is not bytes) or (key is not None and type(key) is not bytes):
            key, value = as_bytes(key, "key"), as_bytes(value, "value")
        if partition is not None and (type(partition) is not int or partition < 0):
            raise IllegalArgumentError(f"partition must be an int >= 0 or None, got {partition!r}")
        return topic, value, key, partition, timestamp_ms, headers

    def _send_traced(self, topic: str, value: Any, key: Any, partition: int | None, timestamp_ms: int | None,
                     headers: Any) -> Awaitable[RecordFuture]:
        """The send the telemetry wraps (with the trace context in ``headers``)."""
        return self._send_slow(topic, value, key, partition, timestamp_ms, headers, True)

    def _check_size(self, topic: str, key: bytes | None, value: bytes | None, headers: Any) -> int:
        return record_size(topic, key, value, headers, self._max_request_size, self._buffer_memory)

    async def send_and_wait(self, topic: str, value: Any = None, key: Any = None,
                            partition: int | None = None,
                            timestamp_ms: int | None = None,
                            headers: Sequence[tuple[str, bytes | None]] | None = None) -> RecordMetadata:
        """``send()`` and wait for the broker's acknowledgement."""
        fut = await self.send(topic, value, key, partition, timestamp_ms, headers)
        return await fut

    async def send_many(self, topic: str, values: Sequence[Any], keys: Sequence[Any] | None = None, *,
                        partition: int | None = None, timestamp_ms: int | None = None,
                        headers: Sequence[Any] | None = None) -> BulkFuture:
        """Queue many records of one topic at once (the fast path: whole batches per call).

        ``values`` is a list of ``bytes`` (or what ``value_serializer`` takes), or values that sit in
        one buffer: a :class:`~aiokafka_lite.records.ValueBuffer` or a pyarrow binary/string array,
        each value copied once, from there into its batch.
        ``keys``/``headers`` are parallel to ``values`` (or None). Returns a :class:`BulkFuture`:
        ``await`` it for the number of records delivered (it raises the first failure), or call
        ``metadata()`` once done for per-record results in input order.
        """
        if self._life.state is not Lifecycle.RUNNING:
            self._raise_unusable()
        if self._otel is not None:
            return await self._otel.send_many(self._send_many, topic, values, keys, partition, timestamp_ms,
                                              headers)
        return await self._send_many(topic, values, keys, partition, timestamp_ms, headers)

    async def _send_many(self, topic: str, values: Sequence[Any], keys: Sequence[Any] | None,
                         partition: int | None, timestamp_ms: int | None, headers: Sequence[Any] | None
                         ) -> BulkFuture:
        if self._interceptors is not None:
            raise IllegalArgumentError("send_many does not run interceptors; use send() when interceptors "
                                       "are set")
        values, keys = serialized_many(topic, values, keys, headers, self._key_serializer,
                                       self._value_serializer)
        if partition is not None and (type(partition) is not int or partition < 0):
            raise IllegalArgumentError(f"partition must be an int >= 0 or None, got {partition!r}")
        info = self._topics.get(topic)
        if info is None or (partition is not None and partition >= info.num_partitions):
            assert self._loop is not None
            info = await self._wait_on_metadata(topic, partition, self._loop.time() + self._max_block)
        check_sizes(topic, values, keys, headers, self._size_fast_limit, self._check_size)
        ts = record_timestamp(timestamp_ms)
        acc = self._acc
        assert acc is not None
        try:
            segments = await acc.append_records(info, partition, values, keys, ts, headers,
                                                self._max_block) if values else []
        except ProducerClosedError:
            self._raise_unusable()
            raise
        return BulkFuture(len(values), ts, segments)

    async def flush(self, timeout: float | None = None) -> None:
        """Send everything queued now and wait until each of those records has an outcome."""
        if not self._started or self._acc is None:
            self._raise_unusable()
        acc = self._acc
        sender = self._sender
        assert acc is not None and sender is not None
        pending = list(acc.incomplete)
        if not pending:
            if self._error is not None:
                self._raise_unusable()
            return
        acc.flushes_in_progress += 1
        sender.wakeup()
        try:
            await acc.wait_for(pending, timeout)
        finally:
            acc.flushes_in_progress -= 1
        if self._error is not None:
            self._raise_unusable()

    def _on_ack(self, batch: ProducerBatch) -> None:
        interceptors = self._interceptors
        if interceptors is None or not batch.handles:
            return
        for handle in batch.handles:
            if handle.cancelled():  # the caller stopped waiting; the record was still delivered
                handle = handle.follow()
            try:
                md = handle.result()
                interceptors.on_acknowledgement(md, None)
            except BaseException as exc:
                interceptors.on_acknowledgement(None, exc)

    # -- transactions ---------------------------------------------------------------------------

    def _txn_or_raise(self) -> TransactionManager:
        if self._txn is None:
            raise IllegalStateError("transactions need a transactional_id setting")
        if not self._started or self._closed:
            self._raise_unusable()
        return self._txn

    async def begin_transaction(self) -> None:
        """Open a transaction: records sent until commit or abort are written atomically."""
        self._txn_or_raise().begin()

    async def commit_transaction(self) -> None:
        """Flush the transaction's records, then commit them (visible to read_committed consumers)."""
        txn = self._txn_or_raise()
        txn.begin_commit()
        await self.flush()
        await txn.end(True, self._max_block)

    async def abort_transaction(self) -> None:
        """Drop the transaction's unsent records and abort it (read_committed consumers never see them)."""
        await self._abort(self._txn_or_raise(), self._max_block)

    async def _abort(self, txn: TransactionManager, timeout: float) -> None:
        txn.begin_abort()
        acc = self._acc
        assert acc is not None
        from ..errors import KafkaError as _KE

        error = _KE("the transaction was aborted before this record was sent")
        assert self._sender is not None
        self._sender.abort_queued(error)
        # Records already in flight will land (and be aborted by the markers): wait for their answers.
        await acc.wait_for(list(acc.incomplete))
        await txn.end(False, timeout)

    async def send_offsets_to_transaction(self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
                                          group_id: str) -> None:
        """Commit a consumer group's offsets as part of the transaction (consume-transform-produce)."""
        txn = self._txn_or_raise()
        if not isinstance(group_id, str) or not group_id:
            raise IllegalArgumentError(f"group_id must be a non-empty str, got {group_id!r}")
        await txn.send_offsets(offsets, group_id, self._max_block)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Producer]:
        """``async with producer.transaction(): ...`` commits on exit and aborts on an exception, or when
        the commit fails because a record of the transaction failed (the error is raised either way)."""
        await self.begin_transaction()
        txn = self._txn
        assert txn is not None
        try:
            yield self
        except BaseException:
            if txn.state in (TxnState.IN_TRANSACTION, TxnState.ABORTABLE_ERROR, TxnState.COMMITTING):
                await self.abort_transaction()
            raise
        try:
            await self.commit_transaction()
        except KafkaError:
            if txn.state is TxnState.ABORTABLE_ERROR:
                await self.abort_transaction()
            raise

    # -- metrics --------------------------------------------------------------------------------

    @overload
    def metrics(self, tagged: Literal[False] = False) -> dict[str, Any]: ...
    @overload
    def metrics(self, tagged: Literal[True]) -> list[Entry]: ...

    def metrics(self, tagged: bool = False) -> dict[str, Any] | list[Entry]:
        """Records and bytes sent, batch size, compression ratio, request latency, requests in flight,
        buffer available, retries and errors (Kafka's producer metric names), as lifetime figures.

        ``tagged=True``: Java's metrics (``producer-metrics``, ``producer-node-metrics``,
        ``producer-topic-metrics``) with windowed rates, as ``{"group", "name", "tags", "value"}``."""
        if tagged:
            return self._hub.snapshot()
        acc = self._acc
        if acc is None:
            return self._metrics.snapshot(buffer_total=self._buffer_memory,
                                          buffer_available=self._buffer_memory,
                                          waiting_senders=0, queued_batches=0)
        return self._metrics.snapshot(buffer_total=acc.pool.total, buffer_available=acc.pool.available,
                                      waiting_senders=acc.pool.queued,
                                      queued_batches=sum(len(dq) for dq in acc.batches.values()))

    def _collect_metrics(self, feed: Feed) -> None:
        collect(feed, self._metrics, self._acc, self._buffer_memory)

    def __repr__(self) -> str:
        return f"<Producer {self._life.state.value} client_id={self._config.client_id!r}>"


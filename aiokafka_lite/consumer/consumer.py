"""The public Consumer: subscribe or assign, poll records (or Arrow batches), commit, seek.

Everything long-running happens in background tasks (the fetcher; for a group, heartbeats and the membership
task that joins, rebalances and calls the rebalance listener) or inside ``poll()`` (position lookups,
auto-commit); ``poll()`` is where their failures surface. Names and meanings
follow aiokafka's AIOKafkaConsumer (``getmany``, ``getone``, ``async for``) and the Java consumer's settings.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, Literal, cast, overload

from .. import errors as Errors
from .._instrument import telemetry_for
from .._lifecycle import AsyncClient
from .._weak import weak_method
from ..config import CONSUMER, Config, dotted_to_kwargs
from ..metrics.hub import ClientMetrics
from ..metrics.monitor import Entry, Feed
from ..net._ratelimit import RateLimitedWarning
from ..structs import KT, VT, ConsumerRecord, OffsetAndMetadata, TopicPartition, check_topic_name
from . import cluster_view as cv
from ._consumer_args import (
    _check_group_protocol,
    _make_client,
    _maybe_await,
    _offset_and_metadata,
    _partitions,
    _spread,
    deserialize,
)
from .assignors import make_assignors
from .coordinator import ClassicProtocol
from .fetcher import Fetcher
from .group848 import KIP848Protocol
from .membership import GroupMembership
from .metrics import ConsumerMetrics, collect
from .offsets import EARLIEST, LATEST, OffsetAndTimestamp, OffsetLookup
from .positions import PositionResolver
from .subscription import OffsetResetStrategy, SubscriptionState, SubscriptionType

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .._settings import ConsumerBaseSettings
    from ..net import KafkaClient

log = logging.getLogger(__name__)

_FOREVER = 365 * 24 * 3600.0


class Consumer(AsyncClient, Generic[KT, VT]):
    """An asyncio Kafka consumer.

    ``Consumer("topic", bootstrap_servers="127.0.0.1:9092", group_id="g")`` subscribes to the topics given
    positionally; without a ``group_id`` use :meth:`assign`. See ``docs/consumer.md``. Generic in the key and
    value types its records carry: ``bytes``, or what ``key_deserializer`` / ``value_deserializer`` return.
    """

    def __init__(self, *topics: str, client: KafkaClient | None = None,
                 key_deserializer: Callable[[bytes], KT] | None = None,
                 value_deserializer: Callable[[bytes], VT] | None = None,
                 **settings: Unpack[ConsumerBaseSettings]) -> None:
        given: dict[str, Any] = dict(settings)
        if key_deserializer is not None:
            given["key_deserializer"] = key_deserializer
        if value_deserializer is not None:
            given["value_deserializer"] = value_deserializer
        self._config = Config(CONSUMER, given)
        cfg = self._config
        self._assignors = make_assignors(cfg.partition_assignment_strategy)
        self._subs = SubscriptionState(cfg.auto_offset_reset)
        self._metrics = ConsumerMetrics()
        self._client = client if client is not None else _make_client(cfg)
        self._owns_client = client is None
        self._fetcher = Fetcher(self._client, self._subs, cfg, self._metrics)
        self._hub = ClientMetrics("consumer", cfg, self._client, weak_method(self._collect_metrics),
                                  {"group_id": cfg.group_id} if cfg.group_id else None)
        self._offsets = OffsetLookup(self._client, cfg.isolation_level, cfg.retry_backoff_ms,
                                     cfg.retry_backoff_max_ms)
        self._coordinator: GroupMembership | None = None
        _check_group_protocol(cfg, settings)
        if cfg.group_id is not None:
            strategy = KIP848Protocol if cfg.group_protocol == "consumer" else ClassicProtocol
            client, subs, assignors = self._client, self._subs, self._assignors
            self._coordinator = GroupMembership(
                client, subs, cfg, self._metrics, self._fetcher.drop_buffered,
                lambda membership: strategy(membership, client, subs, cfg, assignors))
        elif cfg.group_instance_id is not None:
            raise Errors.ConfigError("setting 'group_instance_id' needs a 'group_id'")
        self._positions = PositionResolver(self._subs, self._fetcher, self._offsets, self._coordinator,
                                           cfg.request_timeout_ms / 1000.0, cfg.retry_backoff_max_ms / 1000.0,
                                           self._client)
        self._key_deserializer: Callable[[Any], Any] | None = cfg.key_deserializer
        self._value_deserializer: Callable[[Any], Any] | None = cfg.value_deserializer
        for name in ("key_deserializer", "value_deserializer"):
            fn = getattr(cfg, name)
            if fn is not None and not callable(fn):
                raise Errors.ConfigError(f"setting {name!r} must be callable, got {type(fn).__name__}")
        self._initial_topics = tuple(topics)
        for t in topics:
            if not isinstance(t, str) or not t:
                raise Errors.IllegalArgumentError(f"topic names must be non-empty strings, got {t!r}")
        self._started = False
        self._closed = False
        self._stopping: asyncio.Future[None] | None = None
        self._leaving = False
        self._missing_topic_warning = RateLimitedWarning(log)
        self._topics_changed_at = 0.0
        self._stop_event = asyncio.Event()
        #: OpenTelemetry hooks (aiokafka_lite.otel) when this consumer is instrumented, else None.
        self._otel = telemetry_for("consumer", cfg)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *topics: str) -> Consumer[Any, Any]:
        """Build from Kafka's dotted names: ``Consumer.from_config({"bootstrap.servers": ...})``."""
        return cls(*topics, **dotted_to_kwargs(config))

    @property
    def config(self) -> Config:
        return self._config

    @property
    def _timeout(self) -> float:
        return float(self._config.request_timeout_ms) / 1000.0

    def _track_topics(self) -> None:
        """Keep the client's metadata refresh covering what we subscribe to and are assigned."""
        names = set(self._subs.subscription) | {tp.topic for tp in self._subs.assigned_partitions()}
        self._topics_changed_at = time.monotonic()
        if names:
            cv.track_topics(self._client, names)

    # -- lifecycle ---------------------------------------------------------------------------------------
    async def start(self) -> None:
        if self._closed:  # before _started: a stopped consumer stays started-and-closed
            raise Errors.ConsumerStoppedError("a stopped consumer cannot be started again")
        if self._started:
            return
        if self._owns_client:
            await self._client.start()
        self._subs.add_change_listener(weak_method(self._track_topics))
        try:
            # Every topic once, so that partitions_for_topic() answers for any topic (as aiokafka's does).
            await cv.refresh_all_topics(self._client, self._timeout, keep_tracking=False)
        except Errors.KafkaError as exc:
            log.warning("initial metadata refresh failed: %s", exc)
        if self._coordinator is not None:
            try:
                await self._coordinator.check_broker(self._timeout)
            except Errors.KafkaError:
                self._closed = True
                if self._owns_client:
                    await self._client.close()
                raise
        self._started = True
        if self._initial_topics:
            self.subscribe(self._initial_topics)
        self._fetcher.start()
        self._hub.start()
        if self._coordinator is not None:
            self._coordinator.start()
        elif self._initial_topics:
            # As aiokafka: a group-less consumer owns its topics' partitions once started, so seek() works.
            await self._assign_all_without_group()

    async def stop(self) -> None:
        """Commit (with auto-commit), revoke through the listener, leave the group, close connections.

        Every call returns only once the consumer is stopped; cancelling one does not stop the stopping.
        """
        if self._stopping is None:
            if self._closed:  # start() failed and closed what it had opened
                return
            self._closed = True
            self._stop_event.set()
            self._stopping = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stopping)

    async def _stop(self) -> None:
        if self._otel is not None:
            self._otel.close()
        try:
            if self._coordinator is not None and self._started:
                self._leaving = True  # the listener's on_partitions_revoked may still commit()
                await self._coordinator.close(commit=True, timeout=self._config.request_timeout_ms / 1000.0)
        finally:
            self._leaving = False
            await self._fetcher.stop()
            await self._positions.stop()
            await self._hub.close()  # before the connections close: the terminating KIP-714 push
            if self._owns_client:
                await self._client.close()

    close = stop

    def _check_open(self) -> None:
        if self._closed:
            raise Errors.ConsumerStoppedError("the consumer is stopped")
        if not self._started:
            raise Errors.IllegalStateError("the consumer is not started: call start() or use 'async with'")

    # -- subscription ------------------------------------------------------------------------------------
    def subscribe(self, topics: Iterable[str] = (), pattern: str | re.Pattern[str] | None = None,
                  listener: Any = None, *, revoke_before_every_join: bool = False) -> None:
        """Subscribe to ``topics``, or to every topic matching ``pattern`` (re.match); replaces any before.

        ``revoke_before_every_join``: call ``listener.on_partitions_revoked`` before every JoinGroup, with
        an empty set when nothing is owned (before the first assignment too), as aiokafka does; by default
        it is called only when partitions are revoked. Classic groups only."""
        if isinstance(topics, str):
            topics = [topics]
        topics = list(topics)
        if bool(topics) == (pattern is not None):
            raise Errors.IllegalArgumentError("subscribe() takes topics or a pattern (exactly one)")
        if listener is not None and not hasattr(listener, "on_partitions_revoked") and not hasattr(
                listener, "on_partitions_assigned"):
            raise Errors.IllegalArgumentError(
                "listener must have on_partitions_revoked/on_partitions_assigned methods")
        for topic in topics:
            check_topic_name(topic)  # an illegal name would otherwise wait forever for its metadata
        if pattern is not None:
            self._subs.subscribe_pattern(pattern, listener)
            cv.track_all_topics(self._client, True)  # new matching topics show up in metadata
        else:
            self._subs.subscribe(topics, listener)
        self._subs.revoke_before_every_join = revoke_before_every_join
        if self._coordinator is not None and self._started and not self._closed:
            self._coordinator.kick()  # the membership task joins (or rejoins) now, not at the next poll

    def unsubscribe(self) -> None:
        """Stop reading everything; a group member leaves the group (in the background)."""
        was_member = self._subs.partitions_auto_assigned
        self._subs.unsubscribe()
        self._fetcher.drop_buffered()
        if self._coordinator is not None and was_member:
            self._coordinator.leave_in_background("the consumer unsubscribed")

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly these partitions, without group management (commits still go to group_id if set).

        Raises IllegalArgumentError (a ValueError) at once for anything but TopicPartitions of legal topic
        names and non-negative int partitions. A partition the cluster does not have is not refused here
        (it may be created later): its error reaches poll() once, and the other partitions keep delivering.
        """
        parts = list(partitions)
        for tp in parts:
            if not isinstance(tp, TopicPartition):
                raise Errors.IllegalArgumentError(f"assign() takes TopicPartition objects, got {tp!r}")
            check_topic_name(tp.topic)
            if type(tp.partition) is not int or tp.partition < 0:
                raise Errors.IllegalArgumentError(
                    f"assign(): partition of {tp!r} must be a non-negative int, got {tp.partition!r}")
        self._subs.assign_from_user(parts)
        self._fetcher.drop_buffered(set(self._fetcher.buffered_partitions()) - set(parts))

    def assignment(self) -> set[TopicPartition]:
        return self._subs.assigned_partitions()

    def subscription(self) -> set[str]:
        return set(self._subs.subscription)

    @property
    def closed(self) -> bool:
        """True once stop() began: every call but stop() raises ConsumerStoppedError from then on."""
        return self._closed

    async def wait_for_assignment(self, timeout: float | None = None) -> set[TopicPartition]:
        """The assignment, once this consumer has one: for a group member, once the group's assignment for
        the current subscription is installed (the listener's on_partitions_assigned has run; it may be
        empty when the group has more members than partitions) and no rebalance is pending; without a
        group, once every subscribed topic's partitions are known; after assign(), at once.

        start() does not wait for this (a group member gets its assignment in the background, and poll()
        returns records as soon as there is one); call it to make position(), seek() or commit({tp: ..})
        right after start() safe, or so that a record produced right after it is not missed with
        ``auto_offset_reset="latest"``. Raises KafkaTimeoutError after ``timeout`` seconds (None: no
        limit), what the group ran into meanwhile (as poll() would), ConsumerStoppedError if stop() is
        called meanwhile or was before, IllegalStateError before start() or with nothing subscribed or
        assigned. Cancelling it leaves the consumer as it was.
        """
        self._check_open()
        if self._subs.subscription_type is SubscriptionType.NONE:
            raise Errors.IllegalStateError("wait_for_assignment() needs subscribe() or assign() first")
        deadline = None if timeout is None else time.monotonic() + timeout
        coordinator = self._coordinator
        while True:
            if self._closed:
                raise Errors.ConsumerStoppedError("the consumer was stopped while waiting for an assignment")
            if not self._subs.partitions_auto_assigned:
                return self._subs.assigned_partitions()
            if coordinator is not None:
                coordinator.raise_if_failed()
                if coordinator.has_assignment():
                    return self._subs.assigned_partitions()
                coordinator.wakeup.clear()
                events = [coordinator.wakeup, self._stop_event]
                pause: float | None = None
            else:
                await self._assign_all_without_group()
                if all(cv.partitions_for(self._client, t) is not None for t in self._subs.subscription) \
                        and self._subs.subscription:
                    return self._subs.assigned_partitions()
                self._subs.needs_rejoin = True  # look the missing topics up again
                events = [self._stop_event]
                pause = self._config.retry_backoff_ms / 1000.0
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise Errors.KafkaTimeoutError(f"no assignment within {timeout} s")
            if pause is not None:
                left = pause if left is None else min(left, pause)
            tasks = [asyncio.ensure_future(e.wait()) for e in events]
            try:
                await asyncio.wait(tasks, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for t in tasks:
                    t.cancel()

    # -- polling -----------------------------------------------------------------------------------------
    async def poll(self, *partitions: TopicPartition, timeout_ms: int = 0,
                   max_records: int | None = None) -> dict[TopicPartition, list[ConsumerRecord[KT, VT]]]:
        """Records by partition, at most ``max_records`` (default ``max_poll_records``) in total.

        Waits up to ``timeout_ms`` for data. Raises what a background task or the group ran into.
        """
        if self._otel is not None:
            return await self._otel.poll(self._poll_records, partitions, timeout_ms, max_records)
        return await self._poll_records(partitions, timeout_ms, max_records)

    getmany = poll

    async def _poll_records(self, partitions: tuple[TopicPartition, ...], timeout_ms: int,
                            max_records: int | None) -> dict[TopicPartition, list[ConsumerRecord[KT, VT]]]:
        limit = self._limit(max_records)
        result: dict[TopicPartition, list[ConsumerRecord]] = await self._poll(
            partitions, timeout_ms, lambda: self._fetcher.take_records(limit, partitions or None))
        if result and (self._key_deserializer is not None or self._value_deserializer is not None):
            result = self._deserialize(result)
        # bytes records, or what the deserializers made of them: KT and VT say which.
        return cast("dict[TopicPartition, list[ConsumerRecord[KT, VT]]]", result)

    async def poll_arrow(self, *partitions: TopicPartition, timeout_ms: int = 0,
                         max_records: int | None = None) -> dict[TopicPartition, Any]:
        """Like :meth:`poll`, as one ``pyarrow.RecordBatch`` per partition, decoded straight from the batches.

        Columns: key, value, topic, partition, offset, timestamp, timestampType, headers (raw bytes;
        deserializers are not applied). ``max_records`` defaults to ``max_poll_records``.
        """
        limit = self._limit(max_records)
        take = lambda: self._fetcher.take_arrow(limit, partitions or None)  # noqa: E731
        poll = self._poll if self._otel is None else partial(self._otel.poll, self._poll)
        result: dict[TopicPartition, Any] = await poll(partitions, timeout_ms, take)
        return result

    async def getone(self, *partitions: TopicPartition) -> ConsumerRecord[KT, VT]:
        """The next record (of ``partitions``, if given), waiting as long as it takes."""
        if self._otel is not None:  # a "process" span covers the caller's handling of the record
            record: ConsumerRecord[KT, VT] = await self._otel.getone(self._getone, *partitions)
            return record
        return await self._getone(*partitions)

    async def _getone(self, *partitions: TopicPartition) -> ConsumerRecord[KT, VT]:
        if not partitions and self._fast_path_open():
            record = self._fetcher.take_one()
            if record is not None:
                if self._key_deserializer is not None or self._value_deserializer is not None:
                    record = self._deserialize({TopicPartition(record.topic, record.partition): [record]}
                                               ).popitem()[1][0]
                return cast("ConsumerRecord[KT, VT]", record)
        while True:
            batch = await self._poll_records(partitions, int(_FOREVER * 1000), 1)
            for records in batch.values():
                return records[0]

    def __aiter__(self) -> Consumer[KT, VT]:
        """``async for record in consumer``: over a stopped consumer raises ConsumerStoppedError; a stop()
        during the iteration ends it (StopAsyncIteration), as aiokafka's."""
        if self._closed:
            raise Errors.ConsumerStoppedError("the consumer is stopped")
        return self

    async def __anext__(self) -> ConsumerRecord[KT, VT]:
        try:
            return await self.getone()
        except Errors.ConsumerStoppedError:
            raise StopAsyncIteration from None

    def _limit(self, max_records: int | None) -> int:
        if max_records is None:
            return int(self._config.max_poll_records)
        if not isinstance(max_records, int) or isinstance(max_records, bool) or max_records < 1:
            raise Errors.IllegalArgumentError(f"max_records must be a positive int, got {max_records!r}")
        return max_records

    async def _poll(self, partitions: tuple[TopicPartition, ...], timeout_ms: float,
                    take: Callable[[], dict[TopicPartition, Any]]) -> dict[TopicPartition, Any]:
        self._check_open()
        try:
            return await self._poll_open(partitions, timeout_ms, take)
        except Exception as exc:
            # A stop() that raced this poll: whatever the interrupted step raised, the caller learns
            # the one thing that matters.
            if self._closed and not isinstance(exc, Errors.ConsumerStoppedError):
                raise Errors.ConsumerStoppedError("the consumer was stopped while polling") from exc
            raise

    async def _poll_open(self, partitions: tuple[TopicPartition, ...], timeout_ms: float,
                         take: Callable[[], dict[TopicPartition, Any]]) -> dict[TopicPartition, Any]:
        if not isinstance(timeout_ms, (int, float)) or timeout_ms < 0:
            raise Errors.IllegalArgumentError(f"timeout_ms must be a non-negative number, got {timeout_ms!r}")
        for tp in partitions:
            if not self._subs.is_assigned(tp):
                raise Errors.IllegalStateError(f"partition {tp} is not assigned")
        coordinator = self._coordinator
        if self._fast_path_open():
            result = take()
            if result:
                return result
        deadline = time.monotonic() + min(timeout_ms / 1000.0, _FOREVER)
        while True:
            self._fetcher.raise_if_failed()
            self._fetcher.raise_partition_errors()
            if coordinator is not None:
                coordinator.poll()
            else:
                self._metrics.last_poll = time.monotonic()
                if self._subs.partitions_auto_assigned:
                    await self._assign_all_without_group()
            await self._positions.poll(deadline)
            result = take()
            if result:
                return result
            self._warn_missing_topics()
            left = deadline - time.monotonic()
            if left <= 0:
                return {}
            self._fetcher.data_ready.clear()
            self._positions.changed.clear()  # no await since positions.poll(): nothing is missed
            waiters = [self._fetcher.data_ready.wait(), self._stop_event.wait(),
                       self._positions.changed.wait()]
            if coordinator is not None:
                waiters.append(coordinator.wakeup.wait())
            tasks = [asyncio.ensure_future(w) for w in waiters]
            try:
                await asyncio.wait(tasks, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for t in tasks:
                    t.cancel()
            if self._closed:
                raise Errors.ConsumerStoppedError("the consumer was stopped while polling")

    def _warn_missing_topics(self) -> None:
        """A subscribed topic the broker says does not exist would leave poll() waiting in silence."""
        if cv.metadata_updated_at(self._client) <= self._topics_changed_at:
            return  # no metadata answer covers the current subscription yet
        for topic in self._subs.subscription:
            if cv.partitions_for(self._client, topic) is None:  # an error, or absent from the answer
                self._missing_topic_warning.warn(
                    topic, "subscribed topic %r does not exist on the cluster (metadata has no partitions "
                    "for it); this consumer gets none of its records until it is created", topic)

    def _fast_path_open(self) -> bool:
        """Data is buffered and nothing else needs poll()'s attention (a busy consumer's common case)."""
        if not (self._started and not self._closed and self._fetcher.has_buffered()
                and self._fetcher.healthy() and self._positions.settled()):
            return False
        if self._coordinator is not None:
            return self._coordinator.quick_poll()
        self._metrics.last_poll = time.monotonic()
        return not self._subs.needs_rejoin

    def _deserialize(self, result: dict[TopicPartition, list[ConsumerRecord]]
                     ) -> dict[TopicPartition, list[ConsumerRecord]]:
        return deserialize(result, self._key_deserializer, self._value_deserializer, self._subs)

    async def _assign_all_without_group(self) -> None:
        """subscribe() without a group_id (as aiokafka allows): every partition of the subscribed topics."""
        if self._subs.pattern is not None:
            matched = {t for t in cv.topics(self._client, self._config.exclude_internal_topics)
                       if self._subs.matches_pattern(t)}
            self._subs.change_subscription(matched)
        wanted = {TopicPartition(t, p) for t in self._subs.subscription for p in (cv.partitions_for(
            self._client, t) or ())}
        missing_topics = [t for t in self._subs.subscription if cv.partitions_for(self._client, t) is None]
        if missing_topics and self._subs.needs_rejoin:
            try:
                await cv.refresh_metadata(self._client, missing_topics, self._timeout)
            except Errors.KafkaError as exc:
                log.warning("metadata for %s failed: %s", missing_topics, exc)
            wanted = {TopicPartition(t, p) for t in self._subs.subscription for p in (cv.partitions_for(
                self._client, t) or ())}
        self._subs.needs_rejoin = False
        current = self._subs.assigned_partitions()
        if wanted == current:
            return
        revoked, added = current - wanted, wanted - current
        listener = self._subs.listener
        if revoked and listener is not None:
            await _maybe_await(listener.on_partitions_revoked(revoked))
        self._subs.assign_from_subscribed(wanted)
        self._fetcher.drop_buffered(revoked)
        if listener is not None:
            await _maybe_await(listener.on_partitions_assigned(added))

    # -- offsets -----------------------------------------------------------------------------------------
    async def commit(self, offsets: Mapping[TopicPartition, Any] | None = None) -> None:
        """Commit the positions of everything polled so far, or the given ``{tp: offset}``.

        An offset is the next one to read (last processed + 1); it may be an int, an
        :class:`OffsetAndMetadata` or an ``(offset, metadata)`` tuple. Works in the rebalance listener's
        ``on_partitions_revoked`` while stop() hands partitions back.
        """
        if not self._leaving:
            self._check_open()
        self._require_group("commit")
        if offsets is None:
            to_commit = self._subs.all_consumed()
        else:
            to_commit = {}
            for tp, value in offsets.items():
                if not isinstance(tp, TopicPartition):
                    raise Errors.IllegalArgumentError(f"commit() keys must be TopicPartition, got {tp!r}")
                to_commit[tp] = _offset_and_metadata(value)
        await (self._commit(to_commit) if self._otel is None else self._otel.commit(self._commit, to_commit))

    async def _commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        coordinator = self._require_group("commit")
        await coordinator.commit_sync(offsets, self._config.request_timeout_ms / 1000.0)

    async def committed(self, tp: TopicPartition) -> int | None:
        """The group's committed offset of ``tp`` (None if nothing is committed)."""
        self._check_open()
        coordinator = self._require_group("committed")
        res = await coordinator.committer.fetch({tp}, self._config.request_timeout_ms / 1000.0)
        om = res.get(tp)
        return None if om is None else om.offset

    async def position(self, tp: TopicPartition) -> int:
        """Offset of the next record poll() will return for ``tp`` (looked up if not yet known)."""
        self._check_open()
        st = self._subs.state(tp)
        deadline = time.monotonic() + self._config.request_timeout_ms / 1000.0
        while not st.has_valid_position:
            await self._positions.poll(deadline, wait=True)
            if time.monotonic() > deadline and not st.has_valid_position:
                raise Errors.KafkaTimeoutError(f"no position for {tp} within request_timeout_ms")
        assert st.position is not None
        return st.position

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """Read ``tp`` from ``offset`` on (buffered data of ``tp`` is dropped)."""
        if not isinstance(tp, TopicPartition):
            raise Errors.IllegalArgumentError(f"seek() takes a TopicPartition, got {tp!r}")
        self._subs.seek(tp, offset)
        self._fetcher.drop_buffered([tp])

    async def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        await self._seek_to(partitions, OffsetResetStrategy.EARLIEST)

    async def seek_to_end(self, *partitions: TopicPartition) -> None:
        await self._seek_to(partitions, OffsetResetStrategy.LATEST)

    async def seek_to_committed(self, *partitions: TopicPartition) -> dict[TopicPartition, int | None]:
        self._check_open()
        tps = _partitions(partitions) or self._subs.assigned_partitions()
        coordinator = self._require_group("seek_to_committed")
        res = await coordinator.committer.fetch(tps, self._config.request_timeout_ms / 1000.0)
        out: dict[TopicPartition, int | None] = {}
        for tp, om in res.items():
            out[tp] = None if om is None else om.offset
            if om is not None:
                self.seek(tp, om.offset)
        return out

    async def _seek_to(self, partitions: Iterable[TopicPartition], strategy: OffsetResetStrategy) -> None:
        self._check_open()
        tps = _partitions(partitions) or self._subs.assigned_partitions()
        for tp in tps:
            self._subs.request_reset(tp, strategy)
        self._fetcher.drop_buffered(tps)
        await self._positions.reset_now(tps, time.monotonic() + self._config.request_timeout_ms / 1000.0)

    async def beginning_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return await self._list(partitions, EARLIEST)

    async def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return await self._list(partitions, LATEST)

    async def _list(self, partitions: Iterable[TopicPartition], ts: int) -> dict[TopicPartition, int]:
        self._check_open()
        tps = _partitions(partitions)
        res = await self._offsets.list_offsets({tp: ts for tp in tps}, self._timeout)
        return {tp: (r.offset if r is not None else -1) for tp, r in res.items()}

    async def offsets_for_times(self, timestamps: Mapping[TopicPartition, int]
                                ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """For each partition, the earliest offset whose timestamp is >= the given ms (None if none)."""
        self._check_open()
        for tp, ts in timestamps.items():
            if not isinstance(tp, TopicPartition):
                raise Errors.IllegalArgumentError(
                    f"offsets_for_times() keys must be TopicPartition, got {tp!r}")
            if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
                raise Errors.IllegalArgumentError(
                    f"timestamp for {tp} must be a non-negative int (ms), got {ts!r}")
        return await self._offsets.list_offsets(dict(timestamps), self._config.request_timeout_ms / 1000.0)

    def highwater(self, tp: TopicPartition) -> int | None:
        """The partition's high watermark from the last fetch response (None before one)."""
        hw = self._subs.state(tp).high_watermark
        return None if hw < 0 else hw

    def last_poll_timestamp(self, tp: TopicPartition) -> int | None:
        """Wall-clock ms of the last fetch answer for ``tp`` (None before one), as aiokafka's."""
        ms = self._subs.state(tp).last_fetch_ms
        return None if ms < 0 else ms

    def last_stable_offset(self, tp: TopicPartition) -> int | None:
        lso = self._subs.state(tp).last_stable_offset
        return None if lso < 0 else lso

    # -- pause / resume ----------------------------------------------------------------------------------
    def pause(self, *partitions: TopicPartition | Iterable[TopicPartition]) -> None:
        """Stop fetching these partitions (``pause(tp1, tp2)``, or one collection of them)."""
        for tp in _spread(partitions):
            self._subs.pause(tp)

    def resume(self, *partitions: TopicPartition | Iterable[TopicPartition]) -> None:
        for tp in _spread(partitions):
            self._subs.resume(tp)

    def paused(self) -> set[TopicPartition]:
        return self._subs.paused_partitions()

    # -- metadata ----------------------------------------------------------------------------------------
    async def topics(self) -> set[str]:
        self._check_open()
        await cv.refresh_all_topics(self._client, self._timeout, keep_tracking=self._subs.pattern is not None)
        return cv.topics(self._client, exclude_internal=False)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        """Partition ids of ``topic`` from cached metadata (None if the topic is unknown)."""
        return cv.partitions_for(self._client, topic)

    # -- metrics -----------------------------------------------------------------------------------------
    @overload
    def metrics(self, tagged: Literal[False] = False) -> dict[str, Any]: ...
    @overload
    def metrics(self, tagged: Literal[True]) -> list[Entry]: ...

    def metrics(self, tagged: bool = False) -> dict[str, Any] | list[Entry]:
        """Records and bytes consumed, fetch latency, lag per partition, rebalances, commits.

        ``tagged=True``: Java's metrics (``consumer-metrics``, ``consumer-fetch-manager-metrics``,
        ``consumer-coordinator-metrics``) with windowed rates, as ``{"group", "name", "tags", "value"}``."""
        if tagged:
            return self._hub.snapshot()
        lags = {tp: self._subs.lag(tp) for tp in self._subs.assigned_partitions()}
        return self._metrics.snapshot(lags)

    def _collect_metrics(self, feed: Feed) -> None:
        tps = self._subs.assigned_partitions()
        collect(feed, self._metrics, {tp: self._subs.lag(tp) for tp in tps},
                {tp: self._subs.lead(tp) for tp in tps})

    # -- helpers -----------------------------------------------------------------------------------------
    def _require_group(self, what: str) -> GroupMembership:
        if self._coordinator is None:
            raise Errors.IllegalStateError(f"{what}() needs a group_id")
        return self._coordinator

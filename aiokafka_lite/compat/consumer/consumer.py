"""aiokafka's ``AIOKafkaConsumer`` over :class:`aiokafka_lite.Consumer` (``aiokafka.consumer.consumer``).

What aiokafka's callers rely on and the native consumer answers differently: records are aiokafka's
``ConsumerRecord`` dataclass; ``subscribe()`` takes a list (a bare string is a ``TypeError``) and a
``ConsumerRebalanceListener``; ``seek(partition, offset)`` and ``seek_to_*`` check their arguments with
aiokafka's ``TypeError``/``ValueError``; a listener's exception is logged, not raised from ``getone()``; a
consumer without a group never calls its listener; ``getmany()`` interrupted by ``stop()`` returns ``{}``;
``async for`` over a stopped consumer raises ``ConsumerStoppedError``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from ... import errors
from ...consumer import Consumer
from ...consumer import cluster_view as cv
from ...consumer.listener import ConsumerRebalanceListener
from ...structs import TopicPartition
from .._settings import adapt, warn_unclosed
from ..structs import ConsumerRecord, OffsetAndTimestamp, consumer_record

log = logging.getLogger(__name__)


class _LoggedListener:
    """The user's listener, each call's exception logged as aiokafka's coordinator does (the rebalance
    goes on, and the caller of getone()/getmany() never sees it)."""

    def __init__(self, listener: Any, group_id: str | None) -> None:
        self.listener = listener
        self.group_id = group_id

    async def _call(self, method: str, partitions: set[TopicPartition]) -> None:
        try:
            result = getattr(self.listener, method)(partitions)
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception("User provided consumer rebalance listener %s for group %s failed on %s",
                          self.listener, self.group_id, method)

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self._call("on_partitions_revoked", revoked)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        await self._call("on_partitions_assigned", assigned)

    async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        # aiokafka has no "lost": it revokes.
        await self._call("on_partitions_revoked", lost)


class _SubscriptionView:
    """What aiokafka's ``consumer._subscription`` (its SubscriptionState) shows of the subscription."""

    def __init__(self, consumer: AIOKafkaConsumer) -> None:
        self._consumer = consumer

    @property
    def topics(self) -> set[str]:
        return self._consumer.subscription()

    @property
    def subscription(self) -> Any:
        return self if self._consumer.subscription() else None

    def assigned_partitions(self) -> set[TopicPartition]:
        return self._consumer.assignment()


def _validated_offsets(offsets: Any) -> dict[TopicPartition, tuple[int, str]]:
    """aiokafka's structure check of commit()'s offsets."""
    if not offsets or not isinstance(offsets, dict):
        raise ValueError(offsets)
    out: dict[TopicPartition, tuple[int, str]] = {}
    for tp, value in offsets.items():
        if not isinstance(tp, TopicPartition):
            raise TypeError("Key should be TopicPartition instance")
        if isinstance(value, int):
            out[tp] = (value, "")
            continue
        try:
            offset, metadata = value
        except Exception as exc:
            raise ValueError(offsets) from exc
        if not isinstance(metadata, str):
            raise TypeError("Metadata should be a string")
        out[tp] = (offset, metadata)
    return out


def _check_partitions(partitions: Iterable[Any]) -> None:
    if not all(isinstance(p, TopicPartition) for p in partitions):
        raise TypeError("partitions must be TopicPartition instances")


class AIOKafkaConsumer(Consumer[Any, Any]):
    """aiokafka's consumer signature over :class:`aiokafka_lite.Consumer`."""

    def __init__(self, *topics: str, **settings: Any) -> None:
        strategy = settings.get("partition_assignment_strategy")
        if strategy is not None and not isinstance(strategy, (str, list, tuple)):
            raise errors.ConfigError("setting 'partition_assignment_strategy': give a list of assignors")
        isolation = settings.get("isolation_level", "read_uncommitted")
        if isolation not in ("read_uncommitted", "read_committed"):
            raise ValueError(f"Incorrect isolation level {isolation}")
        max_poll = settings.get("max_poll_records")
        if max_poll is not None and (not isinstance(max_poll, int) or max_poll < 1):
            raise ValueError("`max_poll_records` should be positive Integer")
        # aiokafka's Metadata requests create a subscribed topic that does not exist yet.
        settings.setdefault("allow_auto_create_topics", True)
        # aiokafka's session timeout: a member that stops is noticed (and a new group formed) as quickly.
        settings.setdefault("session_timeout_ms", 10000)
        super().__init__(*topics, **adapt(settings, {}, "AIOKafkaConsumer"))
        #: aiokafka's private attributes that frameworks read (FastStream's rebalance logging).
        self._group_id: str | None = self.config.group_id
        self._subscription = _SubscriptionView(self)

    def __del__(self) -> None:
        warn_unclosed(self, "AIOKafkaConsumer")

    async def start(self) -> None:
        """aiokafka's start(): a group member returns once it has its first assignment, its positions
        looked up (so ``auto_offset_reset="latest"`` means the end as of start(), not of the first poll)."""
        await super().start()
        if self._group_id is not None and self.subscription():
            await self._wait_first_assignment()
        elif self.subscription() and self._subs.pattern is None:
            await self._wait_topics()

    async def _wait_topics(self) -> None:
        """A consumer without a group owns every partition of its topics once start() returns (aiokafka
        waits for each topic's metadata, which creates a missing one): assign them and look up positions."""
        timeout = self.config.request_timeout_ms / 1000.0
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            owned = {tp.topic for tp in self.assignment()}
            missing = [t for t in self.subscription() if t not in owned]
            if not missing:
                break
            await cv.refresh_metadata(self._client, missing, timeout)
            await self._assign_all_without_group()
            if not {tp.topic for tp in self.assignment()} >= set(missing):
                await asyncio.sleep(self.config.retry_backoff_ms / 1000.0)
        await self._look_up_positions(deadline)

    async def _wait_first_assignment(self) -> None:
        """The native wait for the group's first assignment, then its positions (as aiokafka's start())."""
        await self.wait_for_assignment()
        await self._look_up_positions(time.monotonic() + self.config.request_timeout_ms / 1000.0)

    async def _look_up_positions(self, deadline: float) -> None:
        """Positions now rather than at the first poll; a failure (no offset with auto_offset_reset="none")
        is left for the poll to raise, as aiokafka's start() does not raise it."""
        try:
            await self._positions.poll(deadline, wait=True)
        except errors.KafkaError as exc:
            log.debug("positions at start() not known yet: %s", exc)

    # -- subscription ------------------------------------------------------------------------------------
    def subscribe(self, topics: Iterable[str] = (), pattern: str | None = None,  # type: ignore[override]
                  listener: Any = None) -> None:
        """aiokafka's checks: topics or a pattern, a list (not a str) of topics, a
        ConsumerRebalanceListener; an invalid pattern is a ValueError."""
        if not (topics or pattern):
            raise TypeError("You should provide either `topics` or `pattern`")
        if topics and pattern:
            raise TypeError("You can't provide both `topics` and `pattern`")
        if listener is not None and not isinstance(listener, ConsumerRebalanceListener):
            raise TypeError(f"listener should be an instance of ConsumerRebalanceListener, got {listener!r}")
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as err:
                raise ValueError(f"{pattern!r} is not a valid pattern: {err}") from err
        elif not isinstance(topics, (tuple, set, list, frozenset)):
            raise TypeError("Topics should be list of strings")
        if listener is not None:
            # Without a group there is no rebalance, so aiokafka never calls the listener.
            listener = _LoggedListener(listener, self._group_id) if self._group_id is not None else None
        # aiokafka calls on_partitions_revoked(set()) before the first join too (classic groups).
        super().subscribe(topics, pattern, listener, revoke_before_every_join=True)

    # -- offsets ---------------------------------------------------------------------------------------------
    async def commit(self, offsets: Mapping[TopicPartition, Any] | None = None) -> None:
        """aiokafka's checks before the native commit: a group, a subscription with an assignment, a dict of
        ``TopicPartition`` to an offset or ``(offset, str metadata)``, for assigned partitions only."""
        if self._group_id is None:
            raise errors.IllegalOperation("Requires group_id")
        assignment = self.assignment()
        if not self.subscription() and not assignment:
            raise errors.IllegalStateError("Not subscribed to any topics")
        if not assignment:
            raise errors.IllegalStateError("No partitions assigned")
        if offsets is not None:
            offsets = _validated_offsets(offsets)
            for tp in offsets:
                if tp not in assignment:
                    raise errors.IllegalStateError(f"Partition {tp} is not assigned")
        await super().commit(offsets)

    # -- positions ---------------------------------------------------------------------------------------
    def seek(self, partition: TopicPartition, offset: int) -> None:
        if not isinstance(offset, int) or offset < 0:
            raise ValueError("Offset must be a positive integer")
        if not isinstance(partition, TopicPartition):
            raise TypeError("partition must be a TopicPartition")
        if partition not in self.assignment():
            raise errors.IllegalStateError(f"No current assignment for partition {partition}")
        super().seek(partition, offset)

    async def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        _check_partitions(partitions)
        await super().seek_to_beginning(*partitions)

    async def seek_to_end(self, *partitions: TopicPartition) -> None:
        _check_partitions(partitions)
        await super().seek_to_end(*partitions)

    async def seek_to_committed(self, *partitions: TopicPartition) -> dict[TopicPartition, int | None]:
        _check_partitions(partitions)
        return await super().seek_to_committed(*partitions)

    async def offsets_for_times(  # type: ignore[override]
            self, timestamps: Any) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        for tp, ts in timestamps.items():
            if not isinstance(ts, int) or ts < 0:
                raise ValueError(f"The target time for partition {tp} is {ts}. The target time cannot "
                                 "be negative.")
        found = await super().offsets_for_times(timestamps)
        return {tp: None if v is None else OffsetAndTimestamp(v.offset, v.timestamp)
                for tp, v in found.items()}

    def last_poll_timestamp(self, partition: TopicPartition) -> int:
        """aiokafka's: ms of the last fetch answer for ``partition``; raises before one, as aiokafka's
        asserts."""
        ms = super().last_poll_timestamp(partition)
        if ms is None:
            raise errors.IllegalStateError(f"no fetch answer for {partition} yet")
        return ms

    # -- records -----------------------------------------------------------------------------------------
    async def getone(self, *partitions: TopicPartition) -> ConsumerRecord[Any, Any]:  # type: ignore[override]
        return consumer_record(await super().getone(*partitions))

    async def getmany(self, *partitions: TopicPartition, timeout_ms: int = 0,  # type: ignore[override]
                      max_records: int | None = None) -> dict[TopicPartition, list[ConsumerRecord[Any, Any]]]:
        if max_records is not None and (not isinstance(max_records, int) or max_records < 1):
            raise ValueError("`max_records` must be a positive Integer")
        if self._closed:
            raise errors.ConsumerStoppedError("the consumer is stopped")
        try:
            batch = await super().getmany(*partitions, timeout_ms=timeout_ms, max_records=max_records)
        except errors.ConsumerStoppedError:
            return {}  # stop() during the wait: aiokafka's getmany() returns what it has, nothing
        return {tp: [consumer_record(r) for r in records] for tp, records in batch.items()}

    def __aiter__(self) -> AIOKafkaConsumer:
        if self._closed:
            raise errors.ConsumerStoppedError("the consumer is stopped")
        return self

    async def __anext__(self) -> ConsumerRecord[Any, Any]:  # type: ignore[override]
        try:
            return await self.getone()
        except errors.ConsumerStoppedError:
            raise StopAsyncIteration from None


__all__ = ["AIOKafkaConsumer"]

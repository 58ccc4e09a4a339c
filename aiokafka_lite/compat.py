"""aiokafka's names for aiokafka_lite's clients: moving from aiokafka is a change of import.

``from aiokafka_lite.compat import AIOKafkaProducer, AIOKafkaConsumer`` (or ``import aiokafka_lite.compat
as aiokafka``) runs code written for aiokafka 0.x. This module only adapts names and signatures
(aiokafka-only arguments such as ``loop`` and ``api_version="auto"``, ``None`` meaning "the default",
``max_batch_size``, assignor classes, ``create_batch``/``send_batch``); behaviour, defaults included, is
aiokafka_lite's own. docs/migrating-from-aiokafka.md lists what differs.
"""

from __future__ import annotations

import asyncio
import ssl
import warnings
from collections.abc import Sequence
from typing import Any

from . import errors
from .admin import Admin
from .consumer import Consumer
from .consumer.assignors import (
    CooperativeStickyAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
)
from .consumer.listener import ConsumerRebalanceListener
from .consumer.offsets import OffsetAndTimestamp
from .errors import ConfigError
from .producer import Producer
from .structs import ConsumerRecord, OffsetAndMetadata, RecordMetadata, TopicPartition

# aiokafka's assignor class names (aiokafka.coordinator.assignors.*).
RoundRobinPartitionAssignor = RoundRobinAssignor
RangePartitionAssignor = RangeAssignor
StickyPartitionAssignor = StickyAssignor
CooperativeStickyPartitionAssignor = CooperativeStickyAssignor

# Settings for which aiokafka takes None to mean "the default" (or "no limit").
_NONE_IS_DEFAULT = ("client_id", "max_poll_records", "metadata_max_age_ms", "partitioner")
# aiokafka-only arguments that tune aiokafka's own machinery and have no counterpart here.
_IGNORED = ("loop", "consumer_timeout_ms", "send_backoff_ms")


def _adapt(settings: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if key in _IGNORED:
            continue
        if key == "api_version":
            if value not in ("auto", None):
                warnings.warn(f"api_version={value!r} is ignored: aiokafka_lite negotiates versions with "
                              "ApiVersions", stacklevel=3)
            continue
        if value is None and key in _NONE_IS_DEFAULT:
            continue
        out[renames.get(key, key)] = value
    return out


def create_ssl_context(*, cafile: str | None = None, capath: str | None = None, cadata: str | None = None,
                       certfile: str | None = None, keyfile: str | None = None, password: str | None = None,
                       crlfile: str | None = None) -> ssl.SSLContext:
    """aiokafka.helpers.create_ssl_context: a client context that verifies the broker (host name included)
    against the given CAs, with a client certificate when ``certfile`` is given."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile, capath=capath,
                                         cadata=cadata)
    if crlfile is not None:
        context.load_verify_locations(crlfile)
        context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    if certfile is not None:
        context.load_cert_chain(certfile, keyfile, password)
    return context


class BatchBuilder:
    """aiokafka's ``producer.create_batch()``: records gathered for one ``send_batch`` to one partition.

    ``append`` returns None once the batch holds ``max_size`` bytes (estimated as the encoded record
    sizes), as aiokafka's does; the producer then sends the records together to one partition.
    """

    _RECORD_OVERHEAD = 21  # varint lengths, attributes, deltas of a record v2, at most

    def __init__(self, max_size: int) -> None:
        self._max_size = max_size
        self._size = 61  # a record batch v2 header
        self._records: list[tuple[Any, Any, int | None, list[tuple[str, bytes]]]] = []
        self._closed = False

    def append(self, *, timestamp: int | None, key: bytes | None, value: bytes | None,
               headers: Sequence[tuple[str, bytes]] = ()) -> _BatchRecordMetadata | None:
        if self._closed:
            return None
        size = self._RECORD_OVERHEAD + len(key or b"") + len(value or b"") + sum(
            len(h) + len(v or b"") + 10 for h, v in headers)
        if self._records and self._size + size > self._max_size:
            return None
        self._records.append((key, value, timestamp, list(headers)))
        self._size += size
        return _BatchRecordMetadata(len(self._records) - 1, size, timestamp or -1)

    def close(self) -> None:
        """No more appends (aiokafka closes the batch before sending it)."""
        self._closed = True

    def size(self) -> int:
        return self._size

    def record_count(self) -> int:
        return len(self._records)


class _BatchRecordMetadata:
    """What ``BatchBuilder.append`` returns: the record's place in the batch, its size and timestamp."""

    __slots__ = ("crc", "offset", "size", "timestamp")

    def __init__(self, offset: int, size: int, timestamp: int) -> None:
        self.offset, self.size, self.timestamp, self.crc = offset, size, timestamp, None


class AIOKafkaProducer(Producer):
    """aiokafka's producer signature over :class:`aiokafka_lite.Producer`."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**_adapt(settings, {"max_batch_size": "batch_size"}))

    def create_batch(self) -> BatchBuilder:
        return BatchBuilder(self.config.batch_size)

    async def send_batch(self, batch: BatchBuilder, topic: str, *, partition: int) -> asyncio.Future[Any]:
        """Send ``batch``'s records to ``topic[partition]``; the returned future gives the first record's
        RecordMetadata (aiokafka's gives the batch's), or the first error."""
        batch.close()
        futures = [await self.send(topic, value, key=key, partition=partition, timestamp_ms=timestamp,
                                   headers=headers or None)
                   for key, value, timestamp, headers in batch._records]

        async def first() -> Any:
            results = [await f for f in futures]
            return results[0] if results else None

        return asyncio.ensure_future(first())


class AIOKafkaConsumer(Consumer):
    """aiokafka's consumer signature over :class:`aiokafka_lite.Consumer`."""

    def __init__(self, *topics: str, **settings: Any) -> None:
        strategy = settings.get("partition_assignment_strategy")
        if strategy is not None and not isinstance(strategy, (str, list, tuple)):
            raise ConfigError("setting 'partition_assignment_strategy': give a list of assignors")
        super().__init__(*topics, **_adapt(settings, {}))

    def last_poll_timestamp(self, partition: TopicPartition) -> int:
        """aiokafka's: ms of the last fetch answer for ``partition``; raises before one, as aiokafka's
        asserts."""
        ms = super().last_poll_timestamp(partition)
        if ms is None:
            raise errors.IllegalStateError(f"no fetch answer for {partition} yet")
        return ms


class AIOKafkaAdminClient(Admin):
    """aiokafka's admin client name over :class:`aiokafka_lite.Admin`."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**_adapt(settings, {}))

    async def close(self) -> None:
        """aiokafka's admin client has ``close()`` where ours has ``stop()``."""
        await self.stop()


__all__ = [
    "AIOKafkaAdminClient",
    "AIOKafkaConsumer",
    "AIOKafkaProducer",
    "BatchBuilder",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "CooperativeStickyPartitionAssignor",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "RangePartitionAssignor",
    "RecordMetadata",
    "RoundRobinPartitionAssignor",
    "StickyPartitionAssignor",
    "TopicPartition",
    "create_ssl_context",
    "errors",
]

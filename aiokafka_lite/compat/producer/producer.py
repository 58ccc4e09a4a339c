"""aiokafka's ``AIOKafkaProducer`` over :class:`aiokafka_lite.Producer` (``aiokafka.producer.producer``).

What aiokafka's callers rely on and the native producer answers differently: ``send()`` returns an
``asyncio.Future`` of aiokafka's ``RecordMetadata`` (``None`` with ``acks=0``, where no answer comes); a
``str`` value without a serializer is a ``TypeError``; a record over ``max_request_size`` is a
``MessageSizeTooLargeError``; ``send_offsets_to_transaction`` outside a transaction is an
``IllegalOperation`` before any argument is looked at.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ...errors import (
    IllegalOperation,
    MessageSizeTooLargeError,
    RecordTooLargeError,
    SerializationError,
)
from ...producer import Producer
from ...producer.transaction import TxnState
from .._settings import _missing, adapt, warn_unclosed
from ..partitioner import DefaultPartitioner
from ..structs import RecordMetadata, record_metadata


class MessageSizeTooLarge(RecordTooLargeError, MessageSizeTooLargeError):
    """A record over ``max_request_size`` or ``buffer_memory``, refused before sending: aiokafka raises
    ``MessageSizeTooLargeError`` there; this is also the native ``RecordTooLargeError``."""


class SerializationTypeError(SerializationError, TypeError):
    """A key or value that is not bytes and no serializer for it: aiokafka's TypeError."""


def _chain(source: Any, target: asyncio.Future[Any], acks_zero: bool) -> None:
    if target.done():
        return
    exc = source.exception()
    if exc is not None:
        target.set_exception(exc)
    else:
        target.set_result(None if acks_zero else record_metadata(source.result()))


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
        partitioner = settings.get("partitioner")
        if partitioner is DefaultPartitioner or isinstance(partitioner, DefaultPartitioner):
            settings.pop("partitioner")  # murmur2 for keys, as the native default
        super().__init__(**adapt(settings, {"max_batch_size": "batch_size"}, "AIOKafkaProducer"))
        self._acks_zero = self.config.acks == 0

    def __del__(self) -> None:
        warn_unclosed(self, "AIOKafkaProducer")

    async def send(  # type: ignore[override]
            self, topic: str, value: Any = None, key: Any = None, partition: int | None = None,
            timestamp_ms: int | None = None, headers: Sequence[tuple[str, bytes | None]] | None = None
    ) -> asyncio.Future[RecordMetadata | None]:
        """Queue one record; the returned future gives aiokafka's RecordMetadata (None with acks=0)."""
        try:
            native = await super().send(topic, value, key, partition, timestamp_ms, headers)
        except RecordTooLargeError as exc:
            raise MessageSizeTooLarge(*exc.args) from exc
        except SerializationError as exc:
            if exc.__cause__ is None:  # no serializer: the value was simply not bytes
                raise SerializationTypeError(*exc.args) from exc
            raise
        fut: asyncio.Future[RecordMetadata | None] = asyncio.get_running_loop().create_future()
        if native.done():
            _chain(native, fut, self._acks_zero)
        else:
            native.add_done_callback(lambda src: _chain(src, fut, self._acks_zero))
        return fut

    async def send_and_wait(self, topic: str, value: Any = None, key: Any = None,  # type: ignore[override]
                            partition: int | None = None, timestamp_ms: int | None = None,
                            headers: Sequence[tuple[str, bytes | None]] | None = None
                            ) -> RecordMetadata | None:
        return await (await self.send(topic, value, key, partition, timestamp_ms, headers))

    async def send_offsets_to_transaction(self, offsets: Any, group_id: str) -> None:
        if self._txn is None:
            raise IllegalOperation("the producer is not transactional (no transactional_id)")
        if self._txn.state is not TxnState.IN_TRANSACTION:
            raise IllegalOperation("Not in the middle of a transaction")
        if not group_id or not isinstance(group_id, str):
            raise ValueError(group_id)
        await super().send_offsets_to_transaction(offsets, group_id)

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


__all__ = ["AIOKafkaProducer", "BatchBuilder", "_missing"]

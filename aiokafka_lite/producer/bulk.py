"""``send_many``: many records of one topic per call, appended a whole batch at a time.

Per-record ``send()`` pays for a coroutine, a partition choice and a handle per record. Here the
partition is chosen once per batch (keyless records; KIP-794 switches partitions per full batch
anyway) or once per key, records go into the batch builder through its bulk ``append_many``, and the
caller gets one :class:`BulkFuture` for the lot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import IllegalArgumentError, ProducerClosedError
from ..structs import RecordMetadata, TopicPartition
from .handles import BatchResult
from .records_check import record_timestamp, serialize, with_bytes

if TYPE_CHECKING:
    from .producer import Producer

__all__ = ["BulkFuture", "send_many"]


class BulkFuture:
    """The outcome of one ``send_many`` call.

    ``await`` it: returns how many records were delivered, or raises the first failure. After that,
    :meth:`metadata` gives each record's :class:`RecordMetadata` (or its exception) in input order.
    """

    __slots__ = ("_segments", "_timestamps", "count")

    def __init__(self, count: int, timestamps: int | Sequence[int]) -> None:
        self.count = count
        self._timestamps = timestamps
        #: (batch result, first input index, record count, first offset delta in the batch, input indices)
        self._segments: list[tuple[BatchResult, int, int, int, Sequence[int] | None]] = []

    def done(self) -> bool:
        return all(seg[0].done for seg in self._segments)

    def __await__(self) -> Generator[Any, None, int]:
        for seg in self._segments:
            result = seg[0]
            if not result.done:
                yield from result.waiter().__await__()
        for result, _, n, delta, _ in self._segments:
            if result.parts is not None:  # split (MESSAGE_TOO_LARGE): each record has its part's outcome
                for j in range(n):
                    error = result.locate(delta + j)[0].error
                    if error is not None:
                        raise error
            elif result.error is not None:
                raise result.error
        return self.count

    def metadata(self) -> list[RecordMetadata | BaseException]:
        """Per-record results in input order (only once done)."""
        if not self.done():
            raise asyncio.InvalidStateError("records not yet acknowledged")
        out: list[Any] = [None] * self.count
        ts = self._timestamps
        for whole, first, n, delta, indices in self._segments:
            for j in range(n):
                i = indices[first + j] if indices is not None else first + j
                result, index = whole.locate(delta + j) if whole.parts is not None else (whole, delta + j)
                if result.error is not None:
                    out[i] = result.error
                    continue
                t = ts if isinstance(ts, int) else ts[i]
                lat = result.log_append_time
                off = result.base_offset + index if result.base_offset >= 0 else -1
                out[i] = RecordMetadata(result.topic, result.partition, off, lat if lat >= 0 else t, lat)
        return out


async def send_many(producer: Producer, topic: str, values: Sequence[Any], keys: Sequence[Any] | None,
                    partition: int | None, timestamp_ms: int | None,
                    headers: Sequence[Any] | None) -> BulkFuture:
    """The body of :meth:`Producer.send_many` (kept here so the producer module stays readable)."""
    values, keys = _serialized(producer, topic, values, keys, headers)
    n = len(values)
    loop = asyncio.get_running_loop()
    info = producer._topics.get(topic)
    if info is None or (partition is not None and partition >= info.num_partitions):
        info = await producer._wait_on_metadata(topic, partition, loop.time() + producer._max_block)
    _check_sizes(producer, topic, values, keys, headers)
    ts = record_timestamp(timestamp_ms)
    bulk = BulkFuture(n, ts)
    if n == 0:
        return bulk
    txn = producer._txn
    if partition is not None:
        await _append_run(producer, bulk, info.tps[partition], values, keys, ts, headers, None, txn)
    elif keys is not None and producer._partitioner.key_hash is not None:
        for p, idx in _by_partition(producer, topic, info, keys).items():
            sub_h = [headers[i] for i in idx] if headers is not None else None
            await _append_run(producer, bulk, info.tps[p], [values[i] for i in idx], [keys[i] for i in idx],
                              ts, sub_h, idx, txn)
    elif producer._sticky_null:
        await _append_sticky(producer, bulk, info, values, keys, ts, headers, txn)
    else:
        for i in range(n):
            p = producer._choose_slow(topic, keys[i] if keys is not None else None, info)
            await _append_run(producer, bulk, info.tps[p], [values[i]],
                              [keys[i]] if keys is not None else None, ts,
                              [headers[i]] if headers is not None else None, [i], txn)
    return bulk


def _serialized(producer: Producer, topic: str, values: Sequence[Any], keys: Sequence[Any] | None,
                headers: Sequence[Any] | None) -> tuple[Sequence[Any], Sequence[Any] | None]:
    """The arguments checked, and the values and keys serialized to bytes."""
    n = len(values)
    if keys is not None and len(keys) != n:
        raise IllegalArgumentError(f"send_many: {len(keys)} keys for {n} values")
    if headers is not None and len(headers) != n:
        raise IllegalArgumentError(f"send_many: {len(headers)} header lists for {n} values")
    if producer._interceptors is not None:
        raise IllegalArgumentError(
            "send_many does not run interceptors; use send() when interceptors are set")
    if producer._value_serializer is not None:
        values = [serialize(producer._value_serializer, v, "value", topic) for v in values]
    if keys is not None and producer._key_serializer is not None:
        keys = [serialize(producer._key_serializer, k, "key", topic) for k in keys]
    return with_bytes(values, "value"), with_bytes(keys, "key") if keys is not None else None


def _check_sizes(producer: Producer, topic: str, values: Sequence[Any], keys: Sequence[Any] | None,
                 headers: Sequence[Any] | None) -> None:
    """Size limits, record by record, when the largest key and value could break one (or with headers)."""
    longest = max((len(v) for v in values if v is not None), default=0)
    if keys is not None:
        longest += max((len(k) for k in keys if k is not None), default=0)
    if headers is not None or longest > producer._size_fast_limit:
        for i in range(len(values)):
            producer._check_size(topic, keys[i] if keys is not None else None, values[i],
                                 headers[i] if headers is not None else None)


def _by_partition(producer: Producer, topic: str, info: Any, keys: Sequence[Any]) -> dict[int, list[int]]:
    """Record indexes by partition: keyed records by the key hash, keyless ones by the null-key rule."""
    spec = producer._partitioner
    groups: dict[int, list[int]] = {}
    nparts = info.num_partitions
    key_hash = spec.key_hash
    assert key_hash is not None  # the caller checked
    null_p = -1
    for i, k in enumerate(keys):
        if k is not None:
            p = key_hash(k, nparts)
        elif spec.null_key != "sticky":
            p = producer._choose_slow(topic, None, info)
        else:
            if null_p < 0:
                null_p = info.sticky_partition
                if null_p < 0:
                    null_p = producer._switch_sticky(info)
            p = null_p
        g = groups.get(p)
        if g is None:
            groups[p] = [i]
        else:
            g.append(i)
    return groups


async def _append_sticky(producer: Producer, bulk: BulkFuture, info: Any, values: Sequence[Any],
                         keys: Sequence[Any] | None, ts: int, headers: Sequence[Any] | None,
                         txn: Any) -> None:
    """Keyless records to the sticky partition, switching it as a batch fills (KIP-794)."""
    acc = producer._acc
    assert acc is not None
    pos = 0
    while pos < len(values):
        p = info.sticky_partition
        full = info.sticky_produced >= producer._batch_size
        if p < 0 or (full and acc.open_batch(info.tps[p]) is None):
            p = producer._switch_sticky(info)  # KIP-794, as in Producer._send_slow
        added, nbytes = await _append_once(producer, bulk, info.tps[p], values, keys, ts, headers, pos,
                                           txn, grow=len(info.available) <= 1)
        pos += added
        info.sticky_produced += nbytes


async def _append_run(producer: Producer, bulk: BulkFuture, tp: TopicPartition, values: Sequence[Any],
                      keys: Sequence[Any] | None, ts: int, headers: Sequence[Any] | None,
                      indices: Sequence[int] | None, txn: Any) -> None:
    pos = 0
    while pos < len(values):
        added, _ = await _append_once(producer, bulk, tp, values, keys, ts, headers, pos, txn, indices)
        pos += added


async def _append_once(producer: Producer, bulk: BulkFuture, tp: TopicPartition, values: Sequence[Any],
                       keys: Sequence[Any] | None, ts: int, headers: Sequence[Any] | None, pos: int, txn: Any,
                       indices: Sequence[int] | None = None, grow: bool = True) -> tuple[int, int]:
    """Fill the open batch of ``tp`` (or a new one) from ``values[pos:]``; returns (records, bytes) added."""
    acc = producer._acc
    assert acc is not None
    if producer._error is not None or producer._closed:
        producer._raise_unusable()
    if txn is not None:
        txn.check_send(tp)
    first = (len(values[pos]) if values[pos] is not None else 0) + (
        len(keys[pos]) if keys is not None and keys[pos] is not None else 0)
    try:
        batch = await acc.reserve_batch(tp, first, producer._max_block)
    except ProducerClosedError:
        producer._raise_unusable()
    builder = batch.builder
    assert builder is not None
    before_count = builder.record_count
    before_size = builder.size
    added = acc.append_many(batch, values, keys, ts, headers, pos, grow)
    if added:
        bulk._segments.append((batch.result, pos, added, before_count, indices))
    return added, builder.size - before_size

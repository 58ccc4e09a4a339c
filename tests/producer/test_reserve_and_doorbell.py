"""A new batch reserves a first share of buffer_memory and more as it fills (append.FIRST_RESERVE), so many
partitions with a lingering record each do not exhaust the pool; a batch built for sending keeps only its
bytes' worth, so batches in flight do not exhaust it either; and the Sender's doorbell is rung by a
new batch only when the Sender sleeps past the batch's linger (never when a round is coming anyway)."""

from __future__ import annotations

import asyncio

import pytest

from aiokafka_lite.errors import KafkaTimeoutError
from aiokafka_lite.producer.accumulator import RecordAccumulator
from aiokafka_lite.producer.append import FIRST_RESERVE
from aiokafka_lite.producer.core import TopicInfo
from aiokafka_lite.producer.doorbell import Doorbell
from aiokafka_lite.producer.memory import MemoryPool

BATCH = 256 * 1024


async def test_many_partitions_fit_and_a_batch_takes_more_as_it_fills() -> None:
    loop = asyncio.get_running_loop()
    pool = MemoryPool(8 << 20)
    acc = RecordAccumulator(batch_size=BATCH, linger_ms=5000, compression=0, pool=pool, loop=loop,
                            delivery_timeout_ms=60000)
    info = TopicInfo("t", range(300), range(300))
    # 300 partitions x 256 KiB would need 75 MiB: each new batch takes its first share only, at once.
    for p in range(300):
        batch, _, opened = await asyncio.wait_for(
            acc.append_record(info, p, 1, None, b"x" * 100, None, 100, max_block=0.05), 1)
        assert opened and batch.reserved == FIRST_RESERVE
    assert pool.total - pool.available == 300 * FIRST_RESERVE
    # One partition's batch takes records up to batch_size, reserving as it goes, still one batch.
    value = b"v" * 1000
    for _ in range(200):
        batch, _, opened = await acc.append_record(info, 0, 1, None, value, None, 1000, max_block=0.05)
        assert not opened
    assert len(acc.batches[info.tps[0]]) == 1
    assert 200 * 1000 < batch.reserved <= BATCH and batch.builder is not None
    assert batch.builder.batch_size == batch.reserved
    assert pool.total - pool.available == 299 * FIRST_RESERVE + batch.reserved


async def test_a_built_batch_gives_back_what_it_reserved_beyond_its_bytes() -> None:
    loop = asyncio.get_running_loop()
    pool = MemoryPool(FIRST_RESERVE * 2 + 1000)
    acc = RecordAccumulator(batch_size=BATCH, linger_ms=5000, compression=0, pool=pool, loop=loop,
                            delivery_timeout_ms=60000)
    info = TopicInfo("t", range(3), range(3))
    first, _, _ = await acc.append_record(info, 0, 1, None, b"a" * 100, None, 100, max_block=0.05)
    await acc.append_record(info, 1, 1, None, b"b" * 100, None, 100, max_block=0.05)
    assert pool.available == 1000
    # A third partition's send waits for memory; the first batch going out (not yet answered) frees it.
    third = asyncio.ensure_future(acc.append_record(info, 2, 1, None, b"c" * 100, None, 100, max_block=5))
    await asyncio.sleep(0)
    assert not third.done()
    data = acc.close_batch(first)
    assert data == first.data and first.reserved == len(data) < 200
    await asyncio.wait_for(third, 1)
    assert pool.total - pool.available == len(data) + 2 * FIRST_RESERVE
    assert acc.close_batch(first) is data and first.reserved == len(data)  # a retry: nothing more
    acc.complete(first)
    assert pool.total - pool.available == 2 * FIRST_RESERVE


async def test_an_empty_pool_closes_the_batch_instead_of_waiting() -> None:
    loop = asyncio.get_running_loop()
    pool = MemoryPool(FIRST_RESERVE * 2)
    acc = RecordAccumulator(batch_size=BATCH, linger_ms=5000, compression=0, pool=pool, loop=loop,
                            delivery_timeout_ms=60000)
    info = TopicInfo("t", range(2), range(2))
    first, _, _ = await acc.append_record(info, 0, 1, None, b"a" * 100, None, 100, max_block=0.05)
    other, _, _ = await acc.append_record(info, 1, 1, None, b"b" * 100, None, 100, max_block=0.05)
    assert pool.available == 0
    # The first batch cannot take more memory: it closes full at its first share (and the record then
    # waits for memory for a new batch, in vain).
    with pytest.raises(KafkaTimeoutError):
        for _ in range(FIRST_RESERVE // 1000 + 1):
            await acc.append_to(info.tps[0], 1, None, b"c" * 1000, None, 1000, max_block=0.05)
    assert not first.is_open and first.reserved == FIRST_RESERVE and other.is_open


async def test_a_new_batch_rings_only_a_sleeper_that_would_wake_later() -> None:
    loop = asyncio.get_running_loop()
    bell = Doorbell(loop)
    bell.ring_by(loop.time() + 1)  # nobody sleeps: a round is coming anyway, no ring
    sleeper = asyncio.ensure_future(bell.sleep(30))
    await asyncio.sleep(0)
    assert not sleeper.done()  # the ring_by above left nothing behind to cut this sleep short
    bell.ring_by(loop.time() + 60)  # it wakes before that anyway
    await asyncio.sleep(0)
    assert not sleeper.done()
    bell.ring_by(loop.time() + 1)  # it would sleep past that: wake it
    await asyncio.wait_for(sleeper, 1)
    bell.ring()  # a ring while nobody sleeps cuts the next sleep short
    await asyncio.wait_for(bell.sleep(30), 1)


async def test_a_store_sized_from_the_last_batch_is_reserved_whole_or_not_at_all() -> None:
    """A partition's new batch starts its store at the size its last batch reached (no doubling
    copies), the whole batch_size when that one filled most of it (one record more than the last
    batch held would double the store), and reserves that at once, so buffer_memory still bounds
    what stores hold; with too little memory free it starts small, as any batch does."""
    loop = asyncio.get_running_loop()
    pool = MemoryPool(4 << 20)
    acc = RecordAccumulator(batch_size=BATCH, linger_ms=5000, compression=0, pool=pool, loop=loop,
                            delivery_timeout_ms=60000)
    info = TopicInfo("t", range(2), range(2))
    value = b"v" * 10_000
    first = None
    for _ in range(20):
        first, _, _ = await acc.append_record(info, 0, 1, None, value, None, 10_000, max_block=0.05)
    assert first is not None and acc.batches[info.tps[0]].popleft() is first  # drained, as the Sender does
    acc.close_batch(first)
    last = acc.last_size[info.tps[0]]
    assert 200_000 < last < BATCH
    acc.complete(first)
    assert pool.used == 0
    second, _, opened = await acc.append_record(info, 0, 1, None, b"x", None, 1, max_block=0.05)
    assert opened and second.reserved == BATCH and pool.used == second.reserved  # last > BATCH / 2
    assert second.builder is not None and second.builder.batch_size == FIRST_RESERVE  # full at the same point
    for _ in range(24):  # fills to batch_size reserving nothing more, within what the store holds
        await acc.append_record(info, 0, 1, None, value, None, 10_000, max_block=0.05)
    assert len(acc.batches[info.tps[0]]) == 1 and second.reserved == second.builder.batch_size == BATCH
    assert pool.used == BATCH
    # Memory short: the other partition's last size is known, but its next batch starts small.
    acc.last_size[info.tps[1]] = 4 << 20  # more than is free
    third, _, opened = await acc.append_record(info, 1, 1, None, b"y", None, 1, max_block=0.05)
    assert opened and third.reserved == FIRST_RESERVE and pool.used == BATCH + FIRST_RESERVE

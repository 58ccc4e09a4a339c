"""MemoryPool: the buffer_memory bound, FIFO waiting, one waiter woken per freed batch."""

from __future__ import annotations

import asyncio

import pytest

from aiokafka_lite.errors import KafkaTimeoutError, ProducerClosedError, RecordTooLargeError
from aiokafka_lite.producer.memory import MemoryPool


async def test_reserve_and_release() -> None:
    pool = MemoryPool(100)
    await pool.reserve(60, 1)
    assert pool.available == 40 and pool.used == 60
    assert not pool.try_reserve(50)
    pool.release(60)
    assert pool.available == 100


async def test_max_block_zero_fails_at_once() -> None:
    pool = MemoryPool(100)
    await pool.reserve(100, 1)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with pytest.raises(KafkaTimeoutError, match="max_block_ms=0"):
        await pool.reserve(10, 0)
    assert loop.time() - t0 < 0.05


async def test_waits_then_times_out_with_clear_error() -> None:
    pool = MemoryPool(100)
    await pool.reserve(100, 1)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with pytest.raises(KafkaTimeoutError, match="max_block_ms"):
        await pool.reserve(10, 0.2)
    assert 0.18 < loop.time() - t0 < 1.0
    assert pool.queued == 0  # the timed-out waiter left the queue


async def test_too_large_for_the_whole_pool() -> None:
    with pytest.raises(RecordTooLargeError, match="buffer_memory=100"):
        await MemoryPool(100).reserve(101, 1)


async def test_one_release_wakes_exactly_one_waiter_fifo() -> None:
    pool = MemoryPool(100)
    await pool.reserve(100, 1)
    woken: list[int] = []

    async def waiter(i: int) -> None:
        await pool.reserve(50, 5)
        woken.append(i)

    tasks = [asyncio.ensure_future(waiter(i)) for i in range(5)]
    await asyncio.sleep(0.01)
    assert pool.queued == 5
    pool.release(50)  # room for one
    await asyncio.sleep(0.01)
    assert woken == [0]
    assert pool.queued == 4
    pool.release(50)
    await asyncio.sleep(0.01)
    assert woken == [0, 1]
    pool.release(100)  # room for two more
    await asyncio.sleep(0.01)
    assert woken == [0, 1, 2, 3]
    pool.release(50)
    await asyncio.gather(*tasks)
    assert woken == [0, 1, 2, 3, 4]
    assert pool.available == 0


async def test_no_queue_jumping() -> None:
    pool = MemoryPool(100)
    await pool.reserve(90, 1)
    big = asyncio.ensure_future(pool.reserve(50, 5))
    await asyncio.sleep(0.01)
    # 10 bytes are free, but a waiter is queued first: a small request must not overtake it.
    assert not pool.try_reserve(5)
    pool.release(90)
    await big
    assert pool.available == 50


async def test_cancelled_waiter_passes_memory_on() -> None:
    pool = MemoryPool(100)
    await pool.reserve(100, 1)
    first = asyncio.ensure_future(pool.reserve(60, 5))
    second = asyncio.ensure_future(pool.reserve(40, 5))
    await asyncio.sleep(0.01)
    pool.release(60)  # handed to `first`, whose task has not resumed yet...
    first.cancel()  # ...and now never will: the 60 bytes must go on to `second`
    await asyncio.wait_for(second, 1)
    assert first.cancelled()
    assert pool.available == 20


async def test_close_fails_waiters() -> None:
    pool = MemoryPool(100)
    await pool.reserve(100, 1)
    w = asyncio.ensure_future(pool.reserve(10, 5))
    await asyncio.sleep(0.01)
    pool.close(ProducerClosedError("stopped"))
    with pytest.raises(ProducerClosedError):
        await w
    with pytest.raises(ProducerClosedError):
        await pool.reserve(1, 1)

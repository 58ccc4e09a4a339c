"""RecordAccumulator with the real record-batch builder: readiness, draining, retries, expiry."""

from __future__ import annotations

import asyncio
import itertools
import random

from aiokafka_lite.producer.accumulator import RecordAccumulator
from aiokafka_lite.producer.batch import BatchState
from aiokafka_lite.producer.core import TopicInfo
from aiokafka_lite.producer.doorbell import Doorbell
from aiokafka_lite.producer.memory import MemoryPool
from aiokafka_lite.structs import TopicPartition

T0, T1, T2 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
LEADERS = {T0: 1, T1: 2, T2: 1}


def make(loop: asyncio.AbstractEventLoop, **kw: int) -> RecordAccumulator:
    args = dict(batch_size=1000, linger_ms=50, compression=0, pool=MemoryPool(kw.pop("memory", 100_000)),
                loop=loop, delivery_timeout_ms=1000)
    args.update(kw)
    return RecordAccumulator(**args)  # type: ignore[arg-type]


def fill(acc: RecordAccumulator, tp: TopicPartition, n: int, size: int = 10) -> None:
    for _ in range(n):
        batch = acc.open_batch(tp)
        if batch is None or batch.builder.append(1, None, b"x" * size, None) is None:  # type: ignore[union-attr]
            if batch is not None:
                batch.transition_to(BatchState.SEALED)
            assert acc.pool.try_reserve(acc.batch_size)
            batch = acc.new_batch(tp, acc.batch_size)
            assert batch.builder.append(1, None, b"x" * size, None) == 0  # type: ignore[union-attr]


async def test_linger_then_ready() -> None:
    loop = asyncio.get_running_loop()
    acc = make(loop)
    fill(acc, T0, 3)
    now = loop.time()
    nodes, delay, unknown = acc.ready(LEADERS.get, now)
    assert nodes == set() and 0.04 < delay <= 0.0501 and not unknown  # uvloop's clock: whole ms
    nodes, _, _ = acc.ready(LEADERS.get, now + 0.051)
    assert nodes == {1}


async def test_full_flush_exhausted_and_closed_make_ready() -> None:
    loop = asyncio.get_running_loop()
    acc = make(loop)
    fill(acc, T0, 200)  # several batches of 1000 bytes
    assert len(acc.batches[T0]) > 1
    fill(acc, T1, 1)
    now = loop.time()
    assert acc.ready(LEADERS.get, now)[0] == {1}
    acc.flushes_in_progress = 1
    assert acc.ready(LEADERS.get, now)[0] == {1, 2}
    acc.flushes_in_progress = 0
    acc.closed = True
    assert acc.ready(LEADERS.get, now)[0] == {1, 2}


async def test_unknown_leader_reported() -> None:
    loop = asyncio.get_running_loop()
    acc = make(loop)
    fill(acc, TopicPartition("c", 0), 1)
    fill(acc, TopicPartition("d", 0), 1)
    leaders = {TopicPartition("d", 0): -1}
    nodes, _, unknown = acc.ready(leaders.get, loop.time() + 1)
    assert nodes == set() and unknown == {"c", "d"}


async def test_drain_respects_max_size_and_rotates() -> None:
    loop = asyncio.get_running_loop()
    acc = make(loop)
    fill(acc, T0, 150)
    fill(acc, T2, 150)
    now = loop.time() + 1
    first = acc.drain(LEADERS.get, {1}, 1500, now)[1]
    assert len(first) == 1  # two batches of ~1000 bytes do not fit in 1500
    second = acc.drain(LEADERS.get, {1}, 1500, now)[1]
    assert {first[0].tp, second[0].tp} == {T0, T2}  # the start partition rotates
    everything = acc.drain(LEADERS.get, {1}, 1 << 20, now)[1]
    assert {b.tp for b in everything} == {T0, T2}


async def test_muted_and_in_backoff_are_skipped() -> None:
    loop = asyncio.get_running_loop()
    acc = make(loop)
    fill(acc, T0, 1)
    fill(acc, T2, 1)
    acc.muted.add(T0)
    now = loop.time() + 1
    drained = acc.drain(LEADERS.get, {1}, 1 << 20, now)[1]
    assert [b.tp for b in drained] == [T2]
    acc.muted.clear()
    batch = acc.drain(LEADERS.get, {1}, 1 << 20, now)[1][0]
    batch.attempts = 1
    acc.reenqueue(batch, now + 0.1)
    assert acc.ready(LEADERS.get, now)[0] == set()  # backing off
    assert acc.drain(LEADERS.get, {1}, 1 << 20, now) == {}
    assert acc.ready(LEADERS.get, now + 0.11)[0] == {1}


async def test_reenqueue_keeps_sequence_order() -> None:
    loop = asyncio.get_running_loop()
    acc = make(loop)
    fill(acc, T0, 300)
    now = loop.time() + 1
    batches = []
    while acc.batches[T0]:
        batches.extend(acc.drain(LEADERS.get, {1}, 1 << 20, now)[1])
    for seq, b in enumerate(batches):
        b.base_sequence = seq * 100
    # Answers come back out of order: re-queue 2, 0, 1 -> queue order 0, 1, 2.
    for b in (batches[2], batches[0], batches[1]):
        acc.reenqueue(b, now)
    assert [b.base_sequence for b in acc.batches[T0]] == [0, 100, 200]


async def test_expiry_and_memory_release() -> None:
    loop = asyncio.get_running_loop()
    acc = make(loop, memory=5000)
    fill(acc, T0, 150)
    used = acc.pool.used
    assert used >= 2000
    expired = acc.expired(loop.time() + 1.0)
    assert expired and not acc.batches[T0]
    for b in expired:
        acc.fail_batch(b, TimeoutError("x"))
        assert b.result.done and isinstance(b.result.error, TimeoutError)
    assert acc.pool.used == 0 and not acc.incomplete


async def test_a_full_batch_grows_only_when_it_cannot_go_yet() -> None:
    """Growth (accumulator docstring): the first batch of an idle partition closes at batch_size; one
    queued behind another batch takes more records, up to max_batch_bytes, with memory reserved."""
    loop = asyncio.get_running_loop()
    acc = make(loop, max_batch_bytes=3000)
    fill(acc, T0, 1)
    first = acc.batches[T0][0]
    assert not acc.try_grow(first)  # nothing ahead of it: it goes at its normal size
    fill(acc, T0, 60, size=20)  # ~30 B a record: the first batch fills, a second one opens behind it
    assert len(acc.batches[T0]) == 2
    second = acc.batches[T0][1]
    free = acc.pool.available
    assert acc.try_grow(second)
    assert second.builder.batch_size == 2000 and second.reserved == 2000  # type: ignore[union-attr]
    assert acc.pool.available == free - 1000
    assert acc.try_grow(second)
    assert not acc.try_grow(second)  # 4000 would pass max_batch_bytes
    assert not acc.try_grow(first)  # not the open batch


async def test_a_batch_in_flight_lets_the_next_one_grow() -> None:
    loop = asyncio.get_running_loop()
    acc = make(loop, max_batch_bytes=5000)
    fill(acc, T0, 1)
    now = loop.time() + 1
    sent = acc.drain(LEADERS.get, {1}, 1 << 20, now)[1][0]
    fill(acc, T0, 1)
    waiting = acc.batches[T0][0]
    assert acc.try_grow(waiting)  # its partition has a batch out
    acc.complete(sent)
    assert acc.sending == {}


async def test_no_growth_without_max_batch_bytes() -> None:
    loop = asyncio.get_running_loop()
    acc = make(loop)  # max_batch_bytes=0: a producer without idempotence keeps Java's batch sizes
    fill(acc, T0, 60, size=20)
    assert len(acc.batches[T0]) == 2
    assert not acc.try_grow(acc.batches[T0][1])


async def test_a_new_lone_batch_asks_for_a_look_by_its_linger_not_now() -> None:
    """A burst to many partitions opens a batch on each: each asks the Sender to look by the time it
    lingers out (ring_by), not at once (ring) -- a round per new batch scans every partition, which
    cost 64 us of CPU per record with 1,000 partitions (bench/matrix.py). A new batch that closes the
    one before it makes that one sendable now, so it wakes the Sender."""
    loop = asyncio.get_running_loop()
    woken: list[str] = []

    class Bell(Doorbell):
        def ring(self) -> None:
            woken.append("now")

        def ring_by(self, when: float) -> None:
            woken.append(f"by {when - acc.batches[T0][-1].created:.3f}")

    acc = make(loop, bell=Bell(loop))  # type: ignore[arg-type]
    fill(acc, T0, 1)
    assert woken == ["by 0.050"]
    fill(acc, T0, 60, size=20)  # the first batch fills and a second opens behind it
    assert woken[-1] == "now"


async def test_a_full_batch_left_open_by_the_sticky_switch_goes_with_its_answer() -> None:
    """Keyless records leave their partition's full batch open when they move on, to grow on the next
    visit (append.AppendCore._sticky_next); it still goes as soon as the batch ahead of it is answered,
    as a closed full batch would, not linger_ms later."""
    loop = asyncio.get_running_loop()
    acc = make(loop, linger_ms=10_000, max_batch_bytes=50_000)
    acc.chooser.sticky._rng = random.Random(1)
    info = TopicInfo("a", range(2), range(2))
    await acc.append_record(info, None, 1, None, b"x" * 50, None, 50, 1.0)
    p = info.sticky_partition
    tp = info.tps[p]
    ahead = acc.drain(LEADERS.get, {LEADERS[tp]}, 1 << 20, loop.time())[LEADERS[tp]][0]
    ahead.close()
    ahead.transition_to(BatchState.IN_FLIGHT)
    for _ in range(1000):  # until the records move on from p
        await acc.append_record(info, None, 1, None, b"x" * 50, None, 50, 1.0)
        if info.sticky_partition != p:
            break
    assert info.sticky_partition != p
    left = acc.batches[tp][-1]
    assert left.is_open and left in acc.left_full and acc.may_grow(left)
    acc.complete(ahead)
    assert LEADERS[tp] in acc.ready(LEADERS.get, loop.time())[0]  # at once, not after 10 s of linger
    assert acc.drain(LEADERS.get, {LEADERS[tp]}, 1 << 20, loop.time())[LEADERS[tp]][0] is left
    assert not acc.left_full


async def _fill_behind_a_batch_out(acc: RecordAccumulator, value: bytes, n: int
                                   ) -> tuple[int, list[int], list[int]]:
    """send()'s two paths on one partition with a batch in flight: the fast path's append to the open
    batch (``builder.append``), else the append core. Returns how many records took the append core,
    and the open batch's size and the free buffer_memory after each of those."""
    info = TopicInfo("a", range(1), range(1))
    await acc.append_record(info, 0, 1, None, value, None, len(value), 1.0)
    acc.drain(LEADERS.get, {1}, 1 << 20, asyncio.get_running_loop().time() + 1)  # it is out
    slow, sizes, free = 0, [], []
    for _ in range(n):
        batch = acc.open_batch(T0)
        if batch is None or batch.builder.append(1, None, value, None) is None:  # type: ignore[union-attr]
            slow += 1
            batch = (await acc.append_record(info, 0, 1, None, value, None, len(value), 1.0))[0]
            sizes.append(batch.builder.batch_size)  # type: ignore[union-attr]
            free.append(acc.pool.available)
    return slow, sizes, free


async def test_large_records_behind_a_batch_out_mostly_take_the_fast_path() -> None:
    """16 KiB values at batch_size 16384 (Java's default) while their partition's batch is out: the open
    batch grows by what it holds (AppendCore._grow_step), so send()'s fast path takes most records. Grown
    by one batch_size per refusal, it admitted exactly one more record each time and every record went
    through the append core (issue 27)."""
    loop = asyncio.get_running_loop()
    acc = make(loop, batch_size=16384, max_batch_bytes=1_000_000, memory=32 << 20)
    slow, sizes, _ = await _fill_behind_a_batch_out(acc, b"x" * 16384, 60)
    assert len(acc.batches[T0]) == 1  # one batch took them all
    assert slow <= 8, (slow, sizes)  # a new batch, then ~log2(60) growth steps
    assert sizes[-1] <= 1_000_000
    assert acc.pool.used == sum(b.reserved for b in acc.incomplete)


async def test_a_batch_grows_by_batch_size_once_buffer_memory_is_half_taken() -> None:
    """The doubling takes only the upper half of buffer_memory: a batch's unfilled reservation is held
    until it is built, so with memory short it grows one batch_size at a time, as before, and never
    past what buffer_memory has."""
    loop = asyncio.get_running_loop()
    total = 256 << 10
    acc = make(loop, batch_size=16384, max_batch_bytes=1_000_000, memory=total)
    _, sizes, free = await _fill_behind_a_batch_out(acc, b"x" * 16384, 10)
    steps = [b - a for a, b in itertools.pairwise(sizes)]
    assert steps[0] > 16384  # memory is plentiful: it doubles
    assert all(free[i + 1] >= total // 2 for i, step in enumerate(steps) if step > 16384), (steps, free)
    assert steps[-1] == 16384 and acc.pool.available < total // 2  # short: one batch_size at a time
    assert acc.pool.used == sum(b.reserved for b in acc.incomplete) <= total


async def test_a_batch_sized_from_its_last_one_grows_into_what_it_already_holds() -> None:
    """A new batch whose store was sized from its partition's last batch holds that reservation from the
    start (new_batch): growing, it counts what it holds and has not used as spare (_grow_step), so it
    keeps doubling inside its own reservation, taking nothing more from buffer_memory, though the
    pool's upper half is gone. Counted without it, it grew one batch_size per refusal."""
    loop = asyncio.get_running_loop()
    total = 400 << 10
    acc = make(loop, batch_size=16384, max_batch_bytes=1_000_000, memory=total)
    value = b"x" * 16384
    info = TopicInfo("a", range(1), range(1))
    await acc.append_record(info, 0, 1, None, value, None, len(value), 1.0)
    acc.drain(LEADERS.get, {1}, 1 << 20, loop.time() + 1)  # it is out: the next batch may grow
    acc.last_size[T0] = 200_000  # as if that one had reached 200 KB: the next holds that from the start
    sizes, free = [], []
    for _ in range(12):
        batch = acc.open_batch(T0)
        if batch is None or batch.builder.append(1, None, value, None) is None:  # type: ignore[union-attr]
            batch = (await acc.append_record(info, 0, 1, None, value, None, len(value), 1.0))[0]
            sizes.append(batch.builder.batch_size)  # type: ignore[union-attr]
            free.append(acc.pool.available)
    batch = acc.open_batch(T0)
    assert batch is not None and batch.reserved >= 200_000 and len(acc.batches[T0]) == 1
    assert free[0] < total // 2  # from the start the pool has no spare of its own for doubling
    held = [s for s in sizes if s <= 200_000]
    steps = [b - a for a, b in itertools.pairwise(held)]
    # Inside its reservation it doubles (the last step to what it holds), the pool untouched ...
    assert len(held) >= 4 and all(step > 16384 for step in steps), sizes
    assert len(set(free[:len(held)])) == 1, free
    # ... and past it, with the pool's upper half gone, it takes one batch_size at a time.
    assert sizes[len(held)] - held[-1] == 16384 and free[len(held)] < free[0], (sizes, free)
    assert acc.pool.used == sum(b.reserved for b in acc.incomplete)

"""The send fast path has one source (_send.py), compiled with _send.pxd and run as Python: both forms hold
the same state with the same defaults, offer the same methods and build the same bytes from the same
records, so AIOKAFKA_LITE_PURE=1 exercises what users run."""
from __future__ import annotations

import asyncio
import importlib
import itertools
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from aiokafka_lite._native import is_compiled, pure_module
from aiokafka_lite.errors import IllegalArgumentError
from aiokafka_lite.producer import core, handles
from aiokafka_lite.producer.accumulator import RecordAccumulator
from aiokafka_lite.producer.append import FIRST_RESERVE
from aiokafka_lite.producer.batch import BatchState
from aiokafka_lite.producer.core import RUNNING
from aiokafka_lite.producer.memory import MemoryPool
from aiokafka_lite.producer.partitioner import murmur2_partition
from aiokafka_lite.records import decode_records
from aiokafka_lite.structs import TopicPartition

_FIELDS = ("_state", "_plain", "_topics", "_batches", "_key_hash", "_sticky_null", "_txn", "_size_fast_limit",
           "_unyielded")
_INFO = ("topic", "partitions", "num_partitions", "available", "tps", "sticky_partition", "sticky_produced",
         "sticky_batch", "sticky_mark", "deques")


# The same source run as Python, even where the compiled form is built.
_send_py = pure_module("aiokafka_lite.producer._send")


def _compiled() -> Any:
    # The compiled module must be built in this tree (setup.py build_ext --inplace); no skip.
    module = importlib.import_module("aiokafka_lite.producer._send")
    assert is_compiled(module)
    return module


def test_compiled_send_core_in_use() -> None:
    if handles.PURE:
        pytest.skip("pure-Python run requested (AIOKAFKA_LITE_PURE)")
    assert core.COMPILED and core.SendCore is _compiled().SendCore
    assert not is_compiled(_send_py) and _send_py.SendCore is not core.SendCore


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "pure"])
async def test_send_stamps_records_with_the_wall_clock(compiled: bool) -> None:
    """A record sent without a timestamp gets the wall clock's milliseconds (the compiled form reads the
    C clock, the Python form time.time_ns: the same clock)."""
    if compiled and handles.PURE:
        pytest.skip("pure-Python run requested (AIOKAFKA_LITE_PURE)")
    mod = _compiled() if compiled else _send_py
    before = time.time_ns() // 1_000_000
    built, _, _ = await _drive(mod, False, [(None, b"v", 0, None)] * 3)
    after = time.time_ns() // 1_000_000
    stamps = [r.timestamp for batches in built.values() for b in batches
              for r in decode_records(b, "t", 0).records]
    assert len(stamps) == 3 and all(before <= t <= after for t in stamps), (before, stamps, after)


def test_send_core_twins_agree() -> None:
    compiled = _compiled()
    cc, pc = compiled.SendCore(), _send_py.SendCore()  # type: ignore[attr-defined]
    for name in _FIELDS:
        assert getattr(cc, name) == getattr(pc, name), name
    for name in ("send", "_send_slow"):
        assert callable(getattr(cc, name)) and callable(getattr(pc, name)), name


@pytest.mark.parametrize(("partitions", "available"), [([0, 1, 2], [0, 2]), ([], []), ([3, 0], [3])])
def test_topic_info_twins_agree(partitions: list[int], available: list[int]) -> None:
    compiled = _compiled()
    ci = compiled.TopicInfo("t", partitions, available)  # type: ignore[attr-defined]
    pi = _send_py.TopicInfo("t", partitions, available)
    for name in _INFO:
        assert getattr(ci, name) == getattr(pi, name), name


class _Recorder:
    """The open transaction as the append core sees it: which partitions it was told of, in order."""

    def __init__(self) -> None:
        self.told: list[TopicPartition] = []
        # The fast path appends only to partitions already registered (TransactionManager.sendable).
        self.sendable: set[TopicPartition] = set()

    def check_send(self, tp: TopicPartition) -> None:
        self.told.append(tp)
        self.sendable.add(tp)


def _records(n: int, seed: int) -> list[tuple[bytes | None, bytes | None, int | None, int]]:
    """(key, value, partition, timestamp): keyless, keyed and explicit-partition records of mixed sizes."""
    rng = random.Random(seed)
    out: list[tuple[bytes | None, bytes | None, int | None, int]] = []
    for i in range(n):
        kind = rng.random()
        key = None if kind < 0.5 else b"k%d" % rng.randrange(50)
        partition = rng.randrange(4) if 0.9 < kind else None
        value = None if rng.random() < 0.02 else rng.randbytes(rng.choice((0, 10, 100, 1000, 5000)))
        out.append((key, value, partition, 1_700_000_000_000 + i))
    return out


Built = dict[TopicPartition, list[bytes]]


async def _drive(mod: Any, txn: bool, records: list[Any]) -> tuple[Built, int, Any]:
    """Send ``records`` through ``mod``'s SendCore.send (its fast path, and the append core behind it)."""
    loop = asyncio.get_running_loop()
    gate = _Recorder() if txn else None
    acc = RecordAccumulator(batch_size=4096, linger_ms=1000, compression=0, pool=MemoryPool(1 << 26),
                            loop=loop, delivery_timeout_ms=60000, transactional=txn, txn=gate)
    acc.chooser.sticky._rng = random.Random(7)  # the same sticky draws on both sides

    class Harness(mod.SendCore):  # type: ignore[misc, name-defined]
        slow = 0

        async def _send_slow(self, topic: str, value: Any, key: Any, partition: int | None,
                             timestamp_ms: int | None, headers: Any) -> Any:
            type(self).slow += 1
            n = (len(value) if value is not None else 0) + (len(key) if key is not None else 0)
            ts = timestamp_ms if timestamp_ms is not None else time.time_ns() // 1_000_000
            info = self._topics[topic]
            batch, delta, _ = await acc.append_record(info, partition, ts, key, value, headers, n, 1.0)
            return (batch, delta)

    core = Harness()
    core._state, core._size_fast_limit, core._batches, core._txn = RUNNING, 1 << 20, acc.batches, gate
    core._put_open = acc.put_open
    core._key_hash, core._sticky_null = murmur2_partition, True
    core._topics["t"] = mod.TopicInfo("t", range(4), range(4))
    for key, value, partition, ts in records:
        await core.send("t", value, key, partition, ts)
        # Every partition holding records is registered with the transaction before records go in (a
        # KIP-794 switch of the sticky partition included).
        assert gate is None or set(acc.batches) <= gate.sendable
    built = {tp: [b.builder.build() for b in dq] for tp, dq in acc.batches.items()}
    return built, Harness.slow, gate


@pytest.mark.parametrize("txn", [False, True], ids=["plain", "transactional"])
async def test_send_cores_build_the_same_bytes(txn: bool) -> None:
    """The same records through the compiled and the pure send core give byte-identical batches in the
    same partitions, taking the slow path for the same records."""
    if handles.PURE:
        pytest.skip("pure-Python run requested (AIOKAFKA_LITE_PURE): the compiled core is not in use")
    records = _records(3000, seed=3)
    compiled, c_slow, c_gate = await _drive(_compiled(), txn, records)
    pure, p_slow, p_gate = await _drive(_send_py, txn, records)
    assert sum(len(v) for v in compiled.values()) > 20  # many batches, every partition
    assert set(compiled) == {TopicPartition("t", p) for p in range(4)}
    assert c_slow == p_slow and 20 < c_slow < len(records) // 2  # the fast path took most records
    assert compiled == pure
    if txn:
        assert c_gate.told == p_gate.told


def _keyless_accumulator(loop: asyncio.AbstractEventLoop, answers_pending: bool) -> RecordAccumulator:
    acc = RecordAccumulator(batch_size=4096, linger_ms=1000, compression=0, pool=MemoryPool(1 << 26),
                            loop=loop, delivery_timeout_ms=60000, max_batch_bytes=64 << 10)
    acc.chooser.sticky._rng = random.Random(11)  # the same sticky draws on both sides
    if answers_pending:
        # Every partition has a batch out (its answer not back): open batches may grow (try_grow).
        for p in range(4):
            acc.sending[TopicPartition("t", p)] = object()  # type: ignore[assignment]
    return acc


def _linger_out(acc: RecordAccumulator) -> None:
    """Close every open batch, as the Sender does when they linger out (their size then is arbitrary)."""
    for dq in acc.batches.values():
        if dq and dq[-1].is_open:
            dq[-1].transition_to(BatchState.SEALED)


@pytest.mark.parametrize("answers_pending", [False, True], ids=["queued", "answers-pending"])
async def test_send_and_send_many_switch_at_the_same_byte_count(answers_pending: bool) -> None:
    """KIP-794's sticky switch is one rule with one byte count: keyless records sent one by one through
    send() (its fast path and the append core) and the same records in send_many() calls land in the
    same partitions, in the same batches, byte for byte -- batches filling up and lingering out alike."""
    loop = asyncio.get_running_loop()
    rng = random.Random(5)
    values = [rng.randbytes(rng.choice((10, 100, 100, 100, 300, 1000))) for _ in range(4000)]
    # Where batches linger out, and send_many's calls (of every size, across batch boundaries) end.
    cuts = sorted({*rng.sample(range(1, len(values)), 150), len(values)})
    lingers = set(cuts[::2])
    ts = 1_700_000_000_000
    one = _keyless_accumulator(loop, answers_pending)
    module = _compiled() if not handles.PURE else _send_py

    class Harness(module.SendCore):  # type: ignore[misc, name-defined]
        async def _send_slow(self, topic: str, value: Any, key: Any, partition: int | None,
                             timestamp_ms: int | None, headers: Any) -> Any:
            info = self._topics[topic]
            return await one.append_record(info, partition, ts, key, value, headers, len(value), 1.0)

    core = Harness()
    core._state, core._size_fast_limit, core._batches = RUNNING, 1 << 20, one.batches
    core._key_hash, core._sticky_null = murmur2_partition, True
    core._topics["t"] = module.TopicInfo("t", range(4), range(4))
    for i, value in enumerate(values):
        if i in lingers:
            _linger_out(one)
        await core.send("t", value, None, None, ts)

    many = _keyless_accumulator(loop, answers_pending)
    info = module.TopicInfo("t", range(4), range(4))
    for start, end in itertools.pairwise([0, *cuts]):
        if start in lingers:
            _linger_out(many)
        await many.append_records(info, None, values[start:end], None, ts, None, 1.0)

    def built(acc: RecordAccumulator) -> dict[TopicPartition, list[bytes]]:
        return {tp: [b.builder.build() for b in dq] for tp, dq in acc.batches.items()}

    sizes = [b.builder.size for dq in one.batches.values() for b in dq]
    assert len(one.batches) == 4 and len(sizes) > 8  # the records did switch partitions, many times
    assert built(one) == built(many)
    # Batches with one of their partition's ahead of them grow past batch_size (try_grow).
    assert max(sizes) > 2 * 4096


def test_pure_form_runs_without_cython() -> None:
    """Cython is a build dependency only: the Python form of the one source imports and sends without it."""
    code = ("import sys; sys.modules['cython'] = None\n"
            "from aiokafka_lite.producer import core\n"
            "assert not core.COMPILED\n"
            "import runpy; sys.argv = ['send_path', '-n', '300']; runpy.run_path('bench/send_path.py',"
            " run_name='__main__')\n")
    env = {**os.environ, "AIOKAFKA_LITE_PURE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).parents[2])
    assert out.returncode == 0, out.stderr
    assert '"compiled": false' in out.stdout


async def _fill(mod: Any, records: list[tuple[Any, bytes, int, int]], put_open: bool, *, batch_size: int,
                ahead: bool) -> tuple[Built, int]:
    """The records through a send core (with ``put_open`` or, without it, every refused record through
    the slow path): the batches built per partition, and how many records took the slow path. With
    ``ahead`` every partition has a batch out, so open batches may grow past batch_size (try_grow)."""
    acc = RecordAccumulator(batch_size=batch_size, linger_ms=1000, compression=0, pool=MemoryPool(1 << 26),
                            loop=asyncio.get_running_loop(), delivery_timeout_ms=60000,
                            max_batch_bytes=1 << 20)
    if ahead:
        for p in range(4):
            acc.sending[TopicPartition("t", p)] = object()  # type: ignore[assignment]

    class Harness(mod.SendCore):  # type: ignore[misc, name-defined]
        slow = 0

        async def _send_slow(self, topic: str, value: Any, key: Any, partition: int | None,
                             timestamp_ms: int | None, headers: Any) -> Any:
            type(self).slow += 1
            assert timestamp_ms is not None
            n = len(value) + (len(key) if key is not None else 0)
            return await acc.append_record(self._topics[topic], partition, timestamp_ms, key, value,
                                           headers, n, 1.0)

    core = Harness()
    core._state, core._size_fast_limit, core._batches = RUNNING, 1 << 20, acc.batches
    core._key_hash, core._sticky_null = murmur2_partition, True
    core._put_open = acc.put_open if put_open else None
    core._topics["t"] = mod.TopicInfo("t", range(4), range(4))
    for key, value, partition, ts in records:
        await core.send("t", value, key, partition, ts)
    return {tp: [b.builder.build() for b in dq] for tp, dq in acc.batches.items()}, Harness.slow


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "pure"])
async def test_fast_path_takes_a_batch_to_batch_size_as_the_append_core_does(compiled: bool) -> None:
    """A batch starts with FIRST_RESERVE bytes and takes more as it fills, up to batch_size (_extend),
    with nothing of its partition ahead of it: a record it refused on the fast path goes in the same way
    (put_open told the batch refused it still extends it) -- the same batches as the slow path's, each
    near batch_size, and one slow-path visit per batch."""
    if compiled and handles.PURE:
        pytest.skip("pure-Python run requested (AIOKAFKA_LITE_PURE)")
    mod = _compiled() if compiled else _send_py
    rng = random.Random(13)
    records = [(None, rng.randbytes(rng.choice((500, 1000, 3000))), i % 2, 1_700_000_000_000 + i)
               for i in range(400)]
    fast, fast_slow = await _fill(mod, records, True, batch_size=4 * FIRST_RESERVE, ahead=False)
    slow, slow_slow = await _fill(mod, records, False, batch_size=4 * FIRST_RESERVE, ahead=False)
    assert fast == slow
    batches = sum(len(v) for v in fast.values())
    assert fast_slow == batches < slow_slow, (fast_slow, batches, slow_slow)
    assert all(len(b) > 3 * FIRST_RESERVE for v in fast.values() for b in v[:-1])  # full (the last: open)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "pure"])
async def test_fast_path_grows_a_refused_batch_as_the_append_core_does(compiled: bool) -> None:
    """A record with a partition (or a key) that its open batch refused is placed by the append core's
    one ``put_open`` without the slow path, when the batch may grow (a batch of its partition is out
    ahead of it): the same batches, byte for byte, as the slow path builds, and no slow-path visits
    but each batch's first record."""
    if compiled and handles.PURE:
        pytest.skip("pure-Python run requested (AIOKAFKA_LITE_PURE)")
    mod = _compiled() if compiled else _send_py
    rng = random.Random(9)
    records = [(None if i % 3 else b"k%d" % i, rng.randbytes(rng.choice((3000, 5000, 9000))), i % 2,
                1_700_000_000_000 + i) for i in range(300)]

    async def run(put_open: bool) -> tuple[Built, int]:
        return await _fill(mod, records, put_open, batch_size=4096, ahead=True)

    fast, fast_slow = await run(True)
    slow, slow_slow = await run(False)
    assert fast == slow
    batches = sum(len(v) for v in fast.values())
    # One slow visit per batch (its first record) where each growth step took one before.
    assert fast_slow == batches < 5 and slow_slow > 3 * batches, (fast_slow, batches, slow_slow)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "pure"])
async def test_a_timestamp_out_of_range_is_refused_alike(compiled: bool) -> None:
    """A timestamp beyond 64 bits leaves the fast path (compiled, it is no C integer) and is refused by
    the append core with the declared error, in both forms."""
    if compiled and handles.PURE:
        pytest.skip("pure-Python run requested (AIOKAFKA_LITE_PURE)")
    mod = _compiled() if compiled else _send_py
    # One record first, so that partition 0 has an open batch the fast path could take.
    with pytest.raises(IllegalArgumentError):
        await _drive(mod, False, [(None, b"v", 0, 1_700_000_000_000), (None, b"v", 0, 1 << 64)])

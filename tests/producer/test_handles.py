"""RecordFuture / BatchResult (compiled and pure-Python twins): the handles behave like asyncio futures
for gather, wait, wait_for and callbacks (cancellation: test_record_future_contract.py)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from types import ModuleType

import pytest

from aiokafka_lite._native import is_compiled, pure_module
from aiokafka_lite.errors import NotLeaderOrFollowerError
from aiokafka_lite.producer import _handles, handles
from aiokafka_lite.structs import RecordMetadata

# One source (_handles.py), run as Python and compiled (with _handles.pxd): both must behave the same.
_pure = pure_module("aiokafka_lite.producer._handles")
IMPLS = [pytest.param(_pure, id="python")]
if not handles.PURE:
    IMPLS.append(pytest.param(_handles, id="compiled"))


def test_compiled_handles_in_use() -> None:
    if handles.PURE:
        pytest.skip("pure-Python run requested (AIOKAFKA_LITE_PURE)")
    assert is_compiled(_handles) and handles.RecordFuture is _handles.RecordFuture
    assert not is_compiled(_pure) and _pure.RecordFuture is not _handles.RecordFuture


_WHICH = """
import sys
from aiokafka_lite import records
from aiokafka_lite._native import is_compiled
from aiokafka_lite.producer import core, handles, partitioner
print(records.IMPLEMENTATION == "cython", core.COMPILED,
      is_compiled(sys.modules[handles.RecordFuture.__module__]),
      partitioner.murmur2.__module__.endswith("_hash"))
"""


@pytest.mark.parametrize("env", [{}, {"AIOKAFKA_LITE_PURE": "1"}, {"AIOKAFKA_LITE_NO_EXT": "1"}],
                         ids=["default", "pure", "no-ext"])
def test_one_switch_for_every_compiled_module(env: dict[str, str]) -> None:
    """Every module with a compiled form (records core, send fast path, handles, key hashes) obeys one
    switch: all compiled, or all pure-Python."""
    base = {k: v for k, v in os.environ.items() if k not in ("AIOKAFKA_LITE_PURE", "AIOKAFKA_LITE_NO_EXT")}
    out = subprocess.run([sys.executable, "-c", _WHICH], env={**base, **env}, capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    assert out == [str(not env)] * 4, out


@pytest.mark.parametrize("impl", IMPLS)
async def test_result_offsets_and_timestamps(impl: ModuleType) -> None:
    loop = asyncio.get_running_loop()
    b = impl.BatchResult("t", 3, loop)
    futs = [impl.make_future(b, i, 1000 + i) for i in range(3)]
    assert not futs[0].done()
    with pytest.raises(asyncio.InvalidStateError):
        futs[0].result()
    b.set_result(40)
    assert [await f for f in futs] == [RecordMetadata("t", 3, 40 + i, 1000 + i, -1) for i in range(3)]
    # LogAppendTime: the broker's time wins.
    b2 = impl.BatchResult("t", 0, loop)
    f2 = impl.make_future(b2, 1, 5)
    b2.set_result(7, 99)
    assert f2.result() == RecordMetadata("t", 0, 8, 99, 99)
    # acks=0: no offset known.
    b3 = impl.BatchResult("t", 0, loop)
    f3 = impl.make_future(b3, 4, 5)
    b3.set_result(-1)
    assert f3.result().offset == -1


@pytest.mark.parametrize("impl", IMPLS)
async def test_every_task_awaiting_a_batch_wakes(impl: ModuleType) -> None:
    loop = asyncio.get_running_loop()
    b = impl.BatchResult("t", 0, loop)
    futs = [impl.make_future(b, i, 0) for i in range(100)]
    waiters = [asyncio.ensure_future(_await(f)) for f in futs]
    await asyncio.sleep(0)
    loop.call_later(0.01, b.set_result, 10)
    results = await asyncio.gather(*waiters)
    assert [r.offset for r in results] == list(range(10, 110))


async def _await(f: object) -> RecordMetadata:
    return await f  # type: ignore[misc]


@pytest.mark.parametrize("impl", IMPLS)
async def test_errors_reach_every_record(impl: ModuleType) -> None:
    loop = asyncio.get_running_loop()
    b = impl.BatchResult("t", 0, loop)
    futs = [impl.make_future(b, i, 0) for i in range(3)]
    err = NotLeaderOrFollowerError("t-0")
    loop.call_later(0.01, b.set_exception, err)
    for f in futs:
        with pytest.raises(NotLeaderOrFollowerError):
            await f
        assert f.exception() is err


@pytest.mark.parametrize("impl", IMPLS)
async def test_asyncio_future_protocol(impl: ModuleType) -> None:
    loop = asyncio.get_running_loop()
    b = impl.BatchResult("t", 1, loop)
    f = impl.make_future(b, 0, 0)
    assert asyncio.isfuture(f)
    assert f.get_loop() is loop and not f.cancelled()
    seen: list[object] = []
    f.add_done_callback(seen.append)
    g = impl.make_future(b, 1, 0)
    g.add_done_callback(seen.append)
    assert g.remove_done_callback(seen.append) == 1
    gathered = asyncio.gather(f, impl.make_future(b, 2, 0))
    waited = asyncio.ensure_future(asyncio.wait([f], timeout=5))
    loop.call_later(0.01, b.set_result, 5)
    assert [m.offset for m in await gathered] == [5, 7]
    done, _ = await waited
    assert done == {f}
    await asyncio.sleep(0)
    assert seen == [f]
    assert (await asyncio.wait_for(f, 1)).offset == 5
    # A callback added after completion still runs (soon, like asyncio).
    late: list[object] = []
    f.add_done_callback(late.append)
    await asyncio.sleep(0)
    assert late == [f]


@pytest.mark.parametrize("impl", IMPLS)
async def test_unawaited_failed_batch_logs_nothing(impl: ModuleType,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    loop = asyncio.get_running_loop()
    b = impl.BatchResult("t", 0, loop)
    b.waiter()
    b.set_exception(NotLeaderOrFollowerError("x"))
    del b
    import gc

    gc.collect()
    await asyncio.sleep(0)
    assert "never retrieved" not in caplog.text

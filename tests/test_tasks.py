"""``_tasks.cancel_and_wait``: every owner ends its background tasks through it."""

from __future__ import annotations

import asyncio

import pytest

from aiokafka_lite._tasks import cancel_and_wait


async def test_cancels_every_task_and_waits_for_each_to_end() -> None:
    ended: list[str] = []

    async def worker(name: str) -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            await asyncio.sleep(0)  # cleanup that needs the loop: still waited for
            ended.append(name)

    tasks = [asyncio.ensure_future(worker(n)) for n in "ab"]
    await asyncio.sleep(0)
    await cancel_and_wait(tasks[0], None, tasks[1])
    assert sorted(ended) == ["a", "b"] and all(t.cancelled() for t in tasks)


async def test_a_task_that_failed_is_raised_unless_quiet() -> None:
    async def fail() -> None:
        raise ValueError("boom")

    for quiet in (False, True):
        task = asyncio.ensure_future(fail())
        await asyncio.sleep(0)
        if quiet:
            await cancel_and_wait(task, quiet=True)
        else:
            with pytest.raises(ValueError, match="boom"):
                await cancel_and_wait(task)


async def test_the_calling_task_is_left_alone() -> None:
    """A membership task that ends its own membership lists itself among the tasks: it must end the
    others and go on, not wait for itself (or cancel itself)."""
    other = asyncio.ensure_future(asyncio.sleep(3600))
    done: list[bool] = []

    async def owner() -> None:
        me = asyncio.current_task()
        async with asyncio.timeout(5):  # not wait_for: that would run the call in another task
            await cancel_and_wait(me, other)
        done.append(True)

    await asyncio.wait_for(asyncio.ensure_future(owner()), 10)
    assert done == [True] and other.cancelled()

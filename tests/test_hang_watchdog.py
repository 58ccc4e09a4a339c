"""tests/conftest.py's watchdog: a hung async test fails, naming where each task of its loop waits."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

HUNG = '''
import asyncio

import pytest


@pytest.mark.timeout(31)
async def test_hangs_on_a_busy_loop() -> None:
    async def spin() -> None:
        while True:
            await asyncio.sleep(0)

    await asyncio.gather(spin(), asyncio.Event().wait())
'''


def test_a_hung_async_test_fails_naming_where_its_tasks_wait(pytester: pytest.Pytester) -> None:
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_hung=HUNG)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-o", "asyncio_mode=auto",
                                           "-o", "asyncio_default_fixture_loop_scope=function", timeout=60)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*hung: still running after 1 s*"])
    result.stdout.fnmatch_lines(["*spin at *test_hung.py:10*"])  # (the tasks come in no set order)
    result.stdout.fnmatch_lines(["*Event.wait at *"])

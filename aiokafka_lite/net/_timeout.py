"""A timeout that never loses a cancellation.

Python 3.11's ``asyncio.wait_for`` swallows a cancellation that arrives while the awaited thing is
finishing (CPython gh-86296): a long-lived task cancelled at that moment keeps running forever.
``asyncio.timeout`` (3.11+) does not have that flaw; Python 3.10 falls back to ``wait_for``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["run_with_timeout"]

_T = TypeVar("_T")


async def run_with_timeout(awaitable: Awaitable[_T], seconds: float) -> _T:
    """``await awaitable``, raising :class:`asyncio.TimeoutError` after ``seconds``."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await awaitable
    return await asyncio.wait_for(awaitable, seconds)  # pragma: no cover - Python 3.10

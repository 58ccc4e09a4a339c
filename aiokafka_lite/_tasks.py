"""Ending a background task: cancel it and wait until it has finished, once for every owner."""

from __future__ import annotations

import asyncio
from typing import Any


async def cancel_and_wait(task: asyncio.Future[Any] | None) -> None:
    """Cancel ``task`` (None: nothing to do) and return once it has ended, so nothing of it runs after.

    Its CancelledError is the expected outcome and is not raised; any other exception it ends with is.
    """
    if task is None:
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass

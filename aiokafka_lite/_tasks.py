"""Ending background tasks: cancel them and wait until they have finished, once for every owner."""

from __future__ import annotations

import asyncio
from typing import Any


async def cancel_and_wait(*tasks: asyncio.Future[Any] | None, quiet: bool = False) -> None:
    """Cancel each of ``tasks`` (None: nothing to do) and return once all have ended, so nothing of them
    runs after. The calling task itself, if listed (a membership task ending its own membership), is
    left alone: it cannot wait for itself.

    Their CancelledError is the expected outcome and is not raised; any other exception one ends with is,
    unless ``quiet``: an owner closing down whose tasks already reported their failure elsewhere (to the
    waiters, the next call) passes ``quiet=True`` so close() does not raise it a second time.
    """
    current = asyncio.current_task()
    live = [t for t in tasks if t is not None and t is not current]
    for task in live:
        task.cancel()
    outcomes = await asyncio.gather(*live, return_exceptions=True)
    if quiet:
        return
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, asyncio.CancelledError):
            raise outcome

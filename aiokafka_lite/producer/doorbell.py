"""The Sender's doorbell: how the send side and the transaction manager tell the Sender task to look again.

One object, made before the accumulator, the transaction manager and the Sender, and given to each at
construction: the append side rings it when a batch fills up (or by when a new lone batch lingers out),
the transaction manager when a request is due, and the Sender sleeps on it between rounds.
"""

from __future__ import annotations

import asyncio
from math import inf  # not float("inf"), which parses its string at every call (once per round)

__all__ = ["Doorbell"]


def _set_none(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Doorbell:
    """Wakes one sleeper early; a ring while nobody sleeps makes the next sleep return at once."""

    __slots__ = ("_at", "_fut", "_loop", "_rung")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._fut: asyncio.Future[None] | None = None
        #: When the current sleep ends (loop time; valid while ``_fut`` is set).
        self._at = 0.0
        self._rung = False

    def ring(self) -> None:
        """Look again now (cheap: called for every new batch)."""
        fut = self._fut
        if fut is not None:
            if not fut.done():
                fut.set_result(None)
        else:
            self._rung = True

    def ring_by(self, when: float) -> None:
        """Look again by loop time ``when`` at the latest: no early round if the current sleep already
        ends by then, nor when the sleeper is not asleep (it is about to start a round, which will see
        what changed). Called from the send side only, never from within a round. (A burst to many
        partitions opens a batch on each; a round per new batch would scan every partition each time --
        60 us of CPU per record with 1,000 partitions.)"""
        if self._fut is not None and when < self._at:
            self.ring()

    async def sleep(self, delay: float) -> None:
        """Sleep ``delay`` s (``inf``: until rung), or less when rung; always yields to the loop once."""
        if self._rung:
            self._rung = False
            if delay > 0:
                await asyncio.sleep(0)
                return
        if delay <= 0:
            await asyncio.sleep(0)
            return
        loop = self._loop
        fut = self._fut = loop.create_future()
        self._at = loop.time() + delay
        handle = loop.call_later(delay, _set_none, fut) if delay != inf else None
        try:
            await fut
        finally:
            self._fut = None
            self._rung = False
            if handle is not None:
                handle.cancel()

"""A dependency-free progress bar on stderr for long CLI work (produce from a file, bench, smoke)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

_WIDTH = 28


def _human(n: float) -> str:
    for unit in ("", "k", "M", "G"):
        if abs(n) < 1000:
            return f"{n:.0f}{unit}" if unit == "" else f"{n:.1f}{unit}"
        n /= 1000
    return f"{n:.1f}T"


class Progress:
    """Counts work done; redraws at most ten times a second so it never slows the work it measures.

    ``total`` may be ``None`` (unknown, e.g. stdin). When disabled, every method is a cheap no-op, so
    callers update it unconditionally.
    """

    def __init__(self, label: str, total: int | None = None, *, enabled: bool = True,
                 unit: str = "rec", stream: TextIO | None = None) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.extra = ""
        self._start = time.monotonic()
        self._last_draw = self._start  # first draw after 0.1 s: no "1 rec, 20 rec/s" flash
        self._drawn = False

    def update(self, n: int = 1, *, extra: str | None = None) -> None:
        self.done += n
        if extra is not None:
            self.extra = extra
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last_draw >= 0.1:
            self._last_draw = now
            self._draw(now)

    def _line(self, now: float) -> str:
        elapsed = max(now - self._start, 1e-9)
        rate = f"{_human(self.done / elapsed)} {self.unit}/s"
        if self.total:
            frac = min(self.done / self.total, 1.0)
            filled = int(frac * _WIDTH)
            bar = "#" * filled + "." * (_WIDTH - filled)
            text = f"{self.label} [{bar}] {frac * 100:5.1f}% {_human(self.done)}/{_human(self.total)} {rate}"
        else:
            text = f"{self.label} {_human(self.done)} {self.unit} {rate}"
        if self.extra:
            text += f" {self.extra}"
        return text + f" {elapsed:.1f}s"

    def _draw(self, now: float) -> None:
        self.stream.write("\r\x1b[K" + self._line(now))
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Draw the final state and end the line (only if anything was drawn)."""
        if self.enabled:
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False

"""What the CLI tests share (imported by name: the tests directories are not packages)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]

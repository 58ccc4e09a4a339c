"""Seeded chaos tests: parametrization over ``--chaos-seeds`` and the results table.

A test taking ``chaos_seed`` runs once per seed 0..N-1 (``--chaos-seeds N``, default 8); a test
taking ``proxy_seed`` runs over the first min(N, 4) seeds (the proxy runs are on two real brokers,
so fewer seeds keep ``make test`` short). Each run adds one row to the ``chaos_table``; the table is
printed at the end of the session and appended to ``chaos-table.txt`` under pytest's base temp dir.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The peer readers and the proxy live next to the producer tests.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "producer"))

PROXY_SEEDS_MAX = 4
#: mock-replays: copies the mock wrote again because it does not check idempotent sequences (see
#: _batches.py); they are not counted in dup.
COLUMNS = ("seed", "client", "acked", "lost", "dup", "out-of-order", "failed", "mock-replays")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    n = metafunc.config.getoption("--chaos-seeds")
    if "chaos_seed" in metafunc.fixturenames:
        metafunc.parametrize("chaos_seed", range(n), ids=[f"seed{s}" for s in range(n)])
    if "proxy_seed" in metafunc.fixturenames:
        m = min(n, PROXY_SEEDS_MAX)
        metafunc.parametrize("proxy_seed", range(m), ids=[f"seed{s}" for s in range(m)])


class ChaosTable:
    """Rows ``seed | client | acked | lost | dup | out-of-order | failed | mock-replays``, kept and
    appended to a file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[tuple[object, ...]] = []

    def add(self, seed: int, client: str, acked: int, lost: int, dup: int, out_of_order: int,
            failed: int, replayed: int | str = "-") -> None:
        row = (seed, client, acked, lost, dup, out_of_order, failed, replayed)
        self.rows.append(row)
        with self.path.open("a") as f:
            f.write(" | ".join(str(c) for c in row) + "\n")

    def render(self) -> str:
        widths = [max(len(str(c)) for c in col) for col in zip(COLUMNS, *self.rows, strict=False)]
        lines = [" | ".join(str(c).rjust(w) for c, w in zip(row, widths, strict=True))
                 for row in (COLUMNS, *sorted(self.rows, key=lambda r: (str(r[1]), r[0])))]
        return "\n".join(lines)


_TABLE = pytest.StashKey[ChaosTable]()


@pytest.fixture(scope="session")
def chaos_table(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ChaosTable:
    config = request.config
    if _TABLE not in config.stash:
        path = tmp_path_factory.getbasetemp() / "chaos-table.txt"
        path.write_text(" | ".join(COLUMNS) + "\n")
        config.stash[_TABLE] = ChaosTable(path)
    return config.stash[_TABLE]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    table = config.stash.get(_TABLE, None)
    if table is None:
        table = _workers_table(config)
    if table is None or not table.rows:
        return
    terminalreporter.section("chaos results")
    terminalreporter.write_line(table.render())
    terminalreporter.write_line(f"rows appended to {table.path}")


def _workers_table(config: pytest.Config) -> ChaosTable | None:
    """Under pytest-xdist the rows are in the workers' files (``<basetemp>/popen-gw*/chaos-table.txt``): the
    controller gathers them into one table."""
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None or not config.pluginmanager.has_plugin("dsession"):
        return None
    base = factory.getbasetemp()
    table = ChaosTable(base / "chaos-table.txt")
    for part in sorted(base.glob("*gw*/chaos-table.txt")):
        for line in part.read_text().splitlines()[1:]:
            seed, *rest = (c.strip() for c in line.split(" | "))
            table.rows.append((int(seed), *rest))
    if table.rows:
        table.path.write_text("\n".join([" | ".join(COLUMNS), *(" | ".join(map(str, r)) for r in table.rows)])
                              + "\n")
    return table

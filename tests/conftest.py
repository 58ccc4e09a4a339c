"""Fixtures shared by the whole suite: real brokers, the mock cluster, unique topic names.

* ``tansu`` / ``noida``: one :class:`EmbeddedBroker` each per session, started on first use,
  stopped at session end (and restarted if a test left it dead).
* ``broker``: parametrized over both (ids ``tansu`` and ``noida``): use it for integration tests.
* ``mock_cluster``: a factory, ``mock_cluster(brokers=3) -> MockCluster``; every cluster it made is
  stopped after the test.
* ``new_topic``: a factory, ``new_topic(prefix="") -> str``, of topic names unique in the session
  (brokers are shared between tests, so never hard-code a topic name).

When a test that used a broker or mock cluster fails, the tail of that process's log is attached
to the failure report. ``AIOKAFKA_LITE_LOOP=uvloop`` runs every async test and fixture on uvloop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import itertools
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.testing import MockCluster
from aiokafka_lite.testing.pytest_plugin import run_broker

# --------------------------------------------------------------------------------------------------
# Event loop: AIOKAFKA_LITE_LOOP=uvloop switches the whole suite. pytest-asyncio 1.5 deprecates
# overriding ``event_loop_policy`` in favour of this hook; it is only defined when asked for, so the
# default run keeps pytest-asyncio's own loop handling untouched.

# Every Spark JVM a test starts (local sessions, the standalone cluster, Spark Connect, the docs' examples in
# their own interpreters) reads its defaults from tests/spark/conf: JVM settings only (see the files there).
os.environ.setdefault("SPARK_CONF_DIR", str(Path(__file__).resolve().parent / "spark" / "conf"))

LOOP = os.environ.get("AIOKAFKA_LITE_LOOP", "asyncio").strip().lower() or "asyncio"
if LOOP not in ("asyncio", "uvloop"):
    raise pytest.UsageError(f"AIOKAFKA_LITE_LOOP must be 'asyncio' or 'uvloop', got {LOOP!r}")

if LOOP == "uvloop":
    import uvloop

    def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> Mapping[str, Any]:
        return {"uvloop": uvloop.new_event_loop}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--chaos-seeds", type=int, default=8, metavar="N",
                     help="tests/chaos runs its fault schedules for seeds 0..N-1 (fixed, so CI is "
                          "deterministic; default 8)")


def pytest_report_header(config: pytest.Config) -> str:
    return f"aiokafka_lite event loop: {LOOP} (AIOKAFKA_LITE_LOOP)"


# --------------------------------------------------------------------------------------------------
# Parallel runs (pytest-xdist, ``-n N --dist loadgroup``, as ``make test`` runs them): tests go out to the
# workers one by one, except
# * a module whose tests share a module- or class-scoped fixture (a TLS or SASL front, a KDC) stays on one
#   worker, so that fixture starts once;
# * the tests on tests/spark's ``spark`` session are one group on one worker: a Spark session is a JVM,
#   and several at once on a small machine starve each other and the rest (the standalone cluster and
#   Spark Connect tests start their own JVMs and run beside that group);
# * a module may name its own group (tests/test_docs_blocks.py: the docs build on each other, in order).
# xdist hands out the largest groups first, so the Spark group starts at once and overlaps everything else.


def _group(item: pytest.Item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    if "spark" in getattr(item, "fixturenames", ()) and item.path.parent.name == "spark":
        return "spark"
    info = getattr(item, "_fixtureinfo", None)
    if info is not None and any(d.scope in ("module", "class", "package")
                                for defs in info.name2fixturedefs.values() for d in defs):
        return item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput") or config.getoption("dist", "no") != "no" \
            or not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        group = _group(item)
        if group is None:
            continue
        item.add_marker(pytest.mark.xdist_group(group))
        # xdist hands a group to one worker by a "@group" suffix on the test id. pytest 9.2 keeps the id
        # as a structured NodeId, so xdist 3.8's own suffix (on the old _nodeid attribute) is lost and
        # loadgroup silently stops grouping (pytest-xdist issue 1386); set it where pytest reads it.
        # The suffix goes on the last name with the parameters folded in (xdist splits at an "@" after the
        # last "]"), so the id reads the same however pytest renders it.
        node_id = getattr(item, "_id", None)
        if dataclasses.is_dataclass(node_id) and getattr(node_id, "names", ()) and "@" not in str(node_id):
            last = node_id.names[-1] + (f"[{node_id.params}]" if node_id.params is not None else "")
            names = (*node_id.names[:-1], f"{last}@{group}")
            item._id = dataclasses.replace(node_id, names=names, params=None)


# --------------------------------------------------------------------------------------------------
# Brokers


@pytest.fixture(scope="session")
def tansu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """The session's Tansu broker (in-memory; node id 111)."""
    yield from run_broker("tansu", tmp_path_factory)


@pytest.fixture(scope="session")
def noida(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """The session's noida-db broker (transactions, timestamps, DeleteRecords work here)."""
    yield from run_broker("noida", tmp_path_factory)


@pytest.fixture(autouse=True)
def _revive_session_brokers(request: pytest.FixtureRequest) -> None:
    """A broker killed by an earlier test must not fail every later one: restart it (new port)."""
    for kind in ("tansu", "noida"):
        if kind in request.fixturenames:
            broker: EmbeddedBroker = request.getfixturevalue(kind)
            if not broker.running:
                broker.start()


@pytest.fixture(params=["tansu", "noida"], ids=["tansu", "noida"])
def broker(request: pytest.FixtureRequest) -> EmbeddedBroker:
    """Each integration test runs once against Tansu and once against noida-db."""
    b: EmbeddedBroker = request.getfixturevalue(request.param)
    if not b.running:
        b.start()
    return b


class MockClusterFactory:
    """``mock_cluster(brokers=3)`` starts a :class:`MockCluster`; all are stopped after the test."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.clusters: list[MockCluster] = []

    def __call__(self, brokers: int = 3) -> MockCluster:
        cluster = MockCluster(brokers, log_dir=self.log_dir)
        self.clusters.append(cluster)
        cluster.start()
        return cluster

    def stop_all(self) -> None:
        for cluster in self.clusters:
            cluster.stop()


@pytest.fixture
def mock_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockClusterFactory]:
    factory = MockClusterFactory(tmp_path_factory.mktemp("mock-log"))
    try:
        yield factory
    finally:
        factory.stop_all()


_topic_counter = itertools.count()


@pytest.fixture
def new_topic(request: pytest.FixtureRequest) -> Callable[..., str]:
    """``new_topic(prefix="")`` returns a fresh legal topic name derived from the test's name."""
    base = re.sub(r"[^a-zA-Z0-9-]+", "-", request.node.name).strip("-")[:60] or "t"
    session_tag = f"{os.getpid():x}"

    def make(prefix: str = "") -> str:
        stem = f"{prefix}-{base}" if prefix else base
        return f"{stem}-{session_tag}-{next(_topic_counter)}"

    return make


# --------------------------------------------------------------------------------------------------
# Broker log tail on failure


def _log_sources(item: pytest.Item) -> list[tuple[str, Path | None, Callable[[], str]]]:
    sources: list[tuple[str, Path | None, Callable[[], str]]] = []
    seen: set[int] = set()
    for value in getattr(item, "funcargs", {}).values():
        candidates: list[Any] = value.clusters if isinstance(value, MockClusterFactory) else [value]
        for obj in candidates:
            if isinstance(obj, (EmbeddedBroker, MockCluster)) and id(obj) not in seen:
                seen.add(id(obj))
                sources.append((repr(obj), obj.log_path, obj.log_tail))
    return sources


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.failed and report.when in ("setup", "call"):
        for name, path, tail in _log_sources(item):
            text = tail()
            if text:
                report.sections.append((f"log tail of {name} ({path})", text))
    return report


#: An async test still running this long before its pytest-timeout limit prints where every task of its
#: loop waits and is cancelled. pytest-timeout's SIGALRM raises in whatever the loop runs, and asyncio logs
#: an exception raised in a callback instead of propagating it, so on a busy loop the timeout alone never
#: ended a hung test (a fresh-clone run waited on one for 15 minutes without a word).
_WATCHDOG_MARGIN = 30.0


def _await_chain(task: asyncio.Task[Any]) -> list[str]:
    """Where ``task`` waits: its coroutine and every coroutine or generator it awaits, outermost first."""
    where: list[str] = []
    obj: Any = task.get_coro()
    while obj is not None and len(where) < 40:
        frame = getattr(obj, "cr_frame", None) or getattr(obj, "gi_frame", None)
        name = getattr(obj, "__qualname__", type(obj).__name__)
        where.append(f"{name} at {frame.f_code.co_filename}:{frame.f_lineno}" if frame else name)
        obj = getattr(obj, "cr_await", None) or getattr(obj, "gi_yieldfrom", None)
    return where


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    test = getattr(item, "obj", None)
    if not inspect.iscoroutinefunction(test):
        return
    marker = item.get_closest_marker("timeout")
    limit = float(marker.args[0] if marker is not None and marker.args else item.config.getini("timeout"))
    if limit <= _WATCHDOG_MARGIN:
        return

    @functools.wraps(test)
    async def watched(*args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        me = asyncio.current_task()
        assert me is not None
        fired = False

        def fire() -> None:
            nonlocal fired
            fired = True
            print(f"{item.nodeid} still running after {limit - _WATCHDOG_MARGIN:.0f} s; its loop's tasks:",
                  file=sys.stderr)
            for task in asyncio.all_tasks(loop):
                print(f"  {task.get_name()}:", *(f"\n    {w}" for w in _await_chain(task)), file=sys.stderr)
            me.cancel()

        watchdog = loop.call_later(limit - _WATCHDOG_MARGIN, fire)
        try:
            return await test(*args, **kwargs)
        except asyncio.CancelledError:
            if fired:
                pytest.fail(f"hung: still running after {limit - _WATCHDOG_MARGIN:.0f} s (each task's wait "
                            "is on stderr)", pytrace=False)
            raise
        finally:
            watchdog.cancel()

    item.obj = watched  # type: ignore[attr-defined]

"""pytest fixtures for applications built on aiokafka_lite (installed with ``aiokafka-lite[testing]``).

The plugin is registered as the ``aiokafka_lite`` entry point (``pytest11``), so a suite gets these
fixtures with nothing to configure:

* ``kafka_broker``: one embedded broker per session (``--kafka-broker=noida`` by default, or ``tansu``),
  started on first use; a test that stopped it gets a fresh one at the next test.
* ``kafka_cluster``: a 3-broker librdkafka mock cluster per test, with fault injection (``set_leader``,
  ``broker_down``, ``push_request_errors``, ``delayed_link``); stopped after the test.
* ``kafka_topic``: a :class:`~aiokafka_lite.testing.TopicFactory`; ``await kafka_topic(partitions=3)``
  makes a fresh topic on ``kafka_broker``, ``await kafka_topic(on=kafka_cluster)`` on the cluster.

The fixtures are plain (not async), so they work under any pytest-asyncio mode or anyio. Names start with
``kafka_`` so they never shadow a suite's own ``broker`` or ``topic``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pytest

from ..embedded import EmbeddedBroker
from .kit import TopicFactory
from .mockcluster import MockCluster

__all__ = ["kafka_broker", "kafka_cluster", "kafka_topic", "run_broker"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("aiokafka_lite", "aiokafka_lite testing kit")
    group.addoption("--kafka-broker", choices=("noida", "tansu"), default=None,
                    help="embedded broker of the kafka_broker fixture (default: the ini value "
                         "aiokafka_lite_broker, else noida)")
    parser.addini("aiokafka_lite_broker", "embedded broker of the kafka_broker fixture: noida or tansu",
                  default="noida")


def run_broker(kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """The body of a broker fixture: start one logging under the session's temporary directory, yield it,
    stop it (whoever restarted it meanwhile)."""
    broker = EmbeddedBroker(kind, log_dir=tmp_path_factory.mktemp(f"{kind}-log"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def _aiokafka_lite_session_broker(request: pytest.FixtureRequest,
                                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    kind = request.config.getoption("--kafka-broker") or request.config.getini("aiokafka_lite_broker")
    yield from run_broker(kind, tmp_path_factory)


@pytest.fixture
def kafka_broker(_aiokafka_lite_session_broker: EmbeddedBroker) -> EmbeddedBroker:
    """The session's embedded broker, running (restarted on a new port if an earlier test stopped it)."""
    broker = _aiokafka_lite_session_broker
    if not broker.running:
        broker.start()
    return broker


@pytest.fixture
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockCluster]:
    """A fresh 3-broker mock cluster (broker ids 1..3) for this test; ``.bootstrap`` is its address."""
    cluster = MockCluster(3, log_dir=tmp_path_factory.mktemp("kafka-cluster"))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def kafka_topic(request: pytest.FixtureRequest) -> TopicFactory:
    """``await kafka_topic(partitions=1, on=None)``: a fresh topic named after the test, on ``kafka_broker``
    unless ``on=`` names another broker or cluster."""

    class _Lazy:
        @property
        def bootstrap(self) -> str:
            broker: EmbeddedBroker = request.getfixturevalue("kafka_broker")
            return broker.bootstrap

    return TopicFactory(_Lazy(), prefix=request.node.name[:60])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """A failed test that used a kit broker or cluster gets the tail of its log in the report."""
    report: pytest.TestReport = yield
    if report.failed and report.when in ("setup", "call"):
        funcargs = getattr(item, "funcargs", {})
        for value in (funcargs.get("kafka_broker"), funcargs.get("kafka_cluster")):
            if isinstance(value, (EmbeddedBroker, MockCluster)):
                tail = value.log_tail()
                if tail:
                    report.sections.append((f"log tail of {value!r} ({value.log_path})", tail))
    return report

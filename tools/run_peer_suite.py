"""Run aiokafka's own test suite against ``aiokafka_lite.compat`` (or against real aiokafka) on an
embedded broker, and count the public-API tests that pass.

    python tools/run_peer_suite.py /tmp/aiokafka-src --client compat --broker tansu
    python tools/run_peer_suite.py /tmp/aiokafka-src --client aiokafka --broker noida \\
        --files test_transactional_producer.py test_transactional_consumer.py
    python tools/run_peer_suite.py --compare base.json ours.json

PEER is a checkout of aio-libs/aiokafka (only its ``tests/`` is read; nothing of it enters this
repository). The peer's tests are copied into a temporary directory and run there with two pieces of
ours written at run time:

* ``conftest.py`` replaces the peer's, whose fixtures start Kafka in docker: the broker is an
  :class:`~aiokafka_lite.embedded.EmbeddedBroker` on a free loopback port, every topic a test names is
  created with 2 partitions first (the peer's docker image sets ``NUM_PARTITIONS=2``; Tansu would
  auto-create 4), and fixtures that drive the container (ACLs, Kerberos, SCRAM users, SSL certificates)
  are None, so the tests that need them fail the same way for both clients.
* ``peer_shim.py`` (with ``--client compat``): aiokafka's public modules (``aiokafka``,
  ``aiokafka.consumer``, ``aiokafka.errors``, ``aiokafka.admin`` ...) become ``aiokafka_lite.compat``'s;
  aiokafka's internals (client, conn, protocol, record, coordinator, fetcher) stay the real ones so
  every test module imports, and the helper ``wait_topic`` (which reads the peer's internal client)
  waits through our public API. It also classifies tests: one whose body reaches aiokafka internals
  (a private attribute of another object, ``.client``, ``mock.patch``, internal classes, the docker
  container) is "internal" and left out of the public count.

Each run writes a JSON report (``--report``) of every test's outcome and whether it is public;
``--compare BASE OURS`` lists the public tests BASE passes and OURS does not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PUBLIC_FILES = ["test_consumer.py", "test_producer.py", "test_admin.py", "test_pep492.py",
                "test_partitioner.py"]
TXN_FILES = ["test_transactional_producer.py", "test_transactional_consumer.py"]

CONFTEST = r'''
"""Written by aiokafka_lite's tools/run_peer_suite.py: the peer's docker fixtures, replaced."""
import asyncio
import gc
import inspect
import os
import threading

import pytest

from aiokafka_lite.embedded import free_port
from aiokafka_lite.testing.pytest_plugin import run_broker


@pytest.fixture(scope="session")
def kafka_server(tmp_path_factory):
    yield from run_broker(os.environ["PEER_BROKER"], tmp_path_factory)


@pytest.fixture(scope="session")
def unused_port():
    return free_port


@pytest.fixture(scope="class")
def loop(request):
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    if not loop.is_closed():
        loop.call_soon(loop.stop)
        loop.run_forever()
        loop.close()
    gc.collect()
    asyncio.set_event_loop(None)


@pytest.fixture(autouse=True)
def collect_garbage():
    yield
    gc.collect()


@pytest.fixture(scope="class")
def setup_test_class_serverless(request, loop):
    request.cls.loop = loop


@pytest.fixture(scope="class")
def setup_test_class(request, loop, kafka_server):
    host, port = kafka_server.bootstrap.rsplit(":", 1)
    cls = request.cls
    cls.loop = loop
    cls.kafka_host, cls.kafka_port = host, int(port)
    cls.kafka_ssl_port = cls.kafka_sasl_plain_port = cls.kafka_sasl_ssl_port = None
    cls.ssl_folder = cls.acl_manager = cls.kerberos_utils = cls.kafka_config = None
    cls.hosts = [kafka_server.bootstrap]
    cls.kafka_version = os.environ.get("PEER_KAFKA_VERSION", "2.8.1")
    _BOOTSTRAP[0] = kafka_server.bootstrap


_BOOTSTRAP = [""]
_MADE: set = set()


def _create_topic(name):
    """Create ``name`` with 2 partitions on the test broker (aiokafka_lite's own Admin, in a thread,
    since the peer may call this from inside its running loop)."""
    if not _BOOTSTRAP[0] or name in _MADE:
        return
    _MADE.add(name)

    async def make():
        from aiokafka_lite import Admin, NewTopic
        admin = Admin(bootstrap_servers=_BOOTSTRAP[0])
        await admin.start()
        try:
            await admin.create_topics([NewTopic(name, num_partitions=2, replication_factor=1)])
        except Exception:
            pass
        finally:
            await admin.stop()

    t = threading.Thread(target=lambda: asyncio.run(make()))
    t.start()
    t.join()


def pytest_collection_modifyitems(session, config, items):
    from tests import _testutil

    case = _testutil.KafkaIntegrationTestCase
    orig_setup, orig_name = case.setUp, case.random_topic_name

    def setUp(self):
        orig_setup(self)
        # A test that creates its topics itself expects them absent.
        if "create_topics" not in inspect.getsource(getattr(self, self._testMethodName)):
            _create_topic(self.topic)

    def random_topic_name(self):
        name = orig_name(self)
        if "create_topics" not in inspect.getsource(getattr(self, self._testMethodName)):
            _create_topic(name)
        return name

    case.setUp, case.random_topic_name = setUp, random_topic_name
    if os.environ.get("PEER_CLIENT") == "compat":
        async def wait_topic(self, client, topic):
            from aiokafka_lite import Admin
            admin = Admin(bootstrap_servers=self.hosts)
            await admin.start()
            try:
                for _ in range(10):
                    if topic in await admin.list_topics():
                        return
                    await asyncio.sleep(0.5)
            finally:
                await admin.stop()
            raise AssertionError(f"No topic {topic!r} exists")
        case.wait_topic = wait_topic
'''

SHIM = r'''
"""Written by aiokafka_lite's tools/run_peer_suite.py: aiokafka's public modules as aiokafka_lite.compat
(with --client compat), and the public/internal classification of the peer's tests."""
import importlib
import inspect
import json
import os
import pkgutil
import re
import sys
import types

PUBLIC_MODULES = [
    "aiokafka", "aiokafka.abc", "aiokafka.admin", "aiokafka.admin.client", "aiokafka.admin.config_resource",
    "aiokafka.admin.new_partitions", "aiokafka.admin.new_topic", "aiokafka.admin.records_to_delete",
    "aiokafka.consumer", "aiokafka.consumer.consumer", "aiokafka.errors", "aiokafka.helpers",
    "aiokafka.partitioner", "aiokafka.producer", "aiokafka.producer.producer", "aiokafka.structs",
    "aiokafka.coordinator.assignors.roundrobin", "aiokafka.coordinator.assignors.abstract",
]


def _ours(compat, name):
    """compat's module for aiokafka's ``name``: its submodule of that path, else compat itself."""
    mod = compat
    for part in name.split(".")[1:]:
        mod = getattr(mod, part, None)
        if not isinstance(mod, types.ModuleType):
            return compat if name != "aiokafka.errors" else compat.errors
    return mod


def _alias_compat():
    import aiokafka as real

    for info in pkgutil.walk_packages(real.__path__, "aiokafka."):
        try:
            importlib.import_module(info.name)
        except Exception:
            pass
    import aiokafka_lite.compat as compat

    for name in PUBLIC_MODULES:
        real_mod = sys.modules.get(name)
        ours = _ours(compat, name)
        proxy = types.ModuleType(name)
        proxy.__dict__.update(vars(ours))
        proxy.__name__ = name
        if real_mod is not None:
            proxy.__getattr__ = (lambda r: lambda attr: getattr(r, attr))(real_mod)
            if hasattr(real_mod, "__path__"):
                proxy.__path__ = real_mod.__path__
        sys.modules[name] = proxy


if os.environ.get("PEER_CLIENT") == "compat":
    _alias_compat()

'''

REPORT = r'''
import inspect
import json
import os
import re

INTERNAL = re.compile(
    r"(?<!self)(?<!cls)\._[a-z]\w*|\.client\b|mock\.patch|AIOKafkaClient|FetchRequest|MemoryRecords|"
    r"Response_v\d|ClusterMetadata|TransactionState|\bfetcher\.|acl_manager|kerberos_utils|kafka_config|"
    r"ssl_folder|create_ssl_context|sasl_|kafka_ssl_port|kafka_sasl|count_fetch_requests"
)
_RESULTS = {}
_PUBLIC = {}


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        fn = getattr(item, "function", None) or getattr(item, "obj", None)
        try:
            src = inspect.getsource(inspect.unwrap(fn))
        except (OSError, TypeError):
            src = ""
        _PUBLIC[item.nodeid] = not INTERNAL.search(src)


def pytest_runtest_logreport(report):
    prev = _RESULTS.get(report.nodeid)
    if report.when == "call" or report.failed or (report.skipped and prev is None):
        if prev in ("failed", "error") and report.when == "teardown":
            return
        outcome = report.outcome if report.when == "call" else ("error" if report.failed else "skipped")
        if report.when == "teardown" and report.failed and prev == "passed":
            outcome = "error"
        _RESULTS[report.nodeid] = outcome


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("PEER_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump({"client": os.environ.get("PEER_CLIENT"), "broker": os.environ.get("PEER_BROKER"),
                       "tests": {k: {"outcome": v, "public": _PUBLIC.get(k, True)}
                                 for k, v in _RESULTS.items()}}, f, indent=1, sort_keys=True)
'''

FASTSTREAM_SHIM = r'''
"""Written by aiokafka_lite's tools/run_peer_suite.py: with --client compat, FastStream's ``import aiokafka``
gets aiokafka_lite.compat through one plain alias; the broker listens where FastStream's tests look
(``KafkaBroker()``'s default, localhost:9092)."""
import os
import sys

if os.environ.get("PEER_CLIENT") == "compat":
    import aiokafka_lite.compat

    sys.modules["aiokafka"] = aiokafka_lite.compat

from aiokafka_lite.embedded import EmbeddedBroker

_BROKERS = []


def pytest_configure(config):
    # FastStream marks some tests flaky for pytest-rerunfailures; here they run once, like every other.
    config.addinivalue_line("markers", "flaky: rerun by pytest-rerunfailures in FastStream's CI")
    broker = EmbeddedBroker(os.environ["PEER_BROKER"], port=9092)
    broker.start()
    _BROKERS.append(broker)


def pytest_unconfigure(config):
    for broker in _BROKERS:
        broker.stop()
'''


def summarize(report: dict) -> tuple[int, int]:
    tests = report["tests"].values()
    public = [t for t in tests if t["public"]]
    return sum(t["outcome"] == "passed" for t in public), len(public)


def compare(base_path: str, ours_path: str) -> int:
    """Public tests (public in both reports) that BASE passes and OURS does not."""
    base = json.loads(Path(base_path).read_text())["tests"]
    ours = json.loads(Path(ours_path).read_text())["tests"]

    def public(k: str) -> bool:
        return bool(base.get(k, {}).get("public", True) and ours.get(k, {}).get("public", True))

    passed_base = {k for k, t in base.items() if public(k) and t["outcome"] == "passed"}
    passed_ours = {k for k in passed_base if ours.get(k, {}).get("outcome") == "passed"}
    print(f"public tests the baseline passes: {len(passed_base)}; also passed here: {len(passed_ours)} "
          f"({100 * len(passed_ours) / max(1, len(passed_base)):.1f} %)")
    for k in sorted(passed_base - passed_ours):
        print(f"  not passing: {k} ({ours.get(k, {}).get('outcome', 'not run')})")
    extra = sorted(k for k, t in ours.items()
                   if public(k) and t["outcome"] == "passed" and k not in passed_base)
    for k in extra:
        print(f"  passes here only: {k}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("peer", nargs="?", help="a checkout of aio-libs/aiokafka or ag2ai/faststream")
    parser.add_argument("--suite", choices=["aiokafka", "faststream"], default="aiokafka")
    parser.add_argument("--client", choices=["compat", "aiokafka"], default="compat")
    parser.add_argument("--broker", choices=["tansu", "noida"], default="tansu")
    parser.add_argument("--files", nargs="*", help="test paths under tests/ (default: the public-API ones, "
                        "or FastStream's brokers/kafka)")
    parser.add_argument("--report", default=None, help="where to write the JSON report")
    parser.add_argument("--compare", nargs=2, metavar=("BASE", "OURS"))
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if args.compare:
        return compare(*args.compare)
    if not args.peer:
        parser.error("give the peer checkout")
    work = Path(tempfile.mkdtemp(prefix="peer-suite-"))
    try:
        report = Path(args.report or work / "report.json").resolve()
        (work / "peer_report.py").write_text(REPORT)
        if args.suite == "aiokafka":
            files = args.files or (TXN_FILES if args.broker == "noida" else PUBLIC_FILES)
            shutil.copytree(Path(args.peer) / "tests", work / "tests",
                            ignore=shutil.ignore_patterns("conftest.py", "__pycache__"))
            (work / "tests" / "conftest.py").write_text(CONFTEST)
            (work / "peer_shim.py").write_text(SHIM)
            cwd, paths = work, [str(work)]
            plugins = ["-p", "peer_shim", "-o", "asyncio_mode=strict", "--timeout", "180"]
        else:
            # FastStream's tests import its docs/ and tests/ packages from the checkout: run there.
            files = args.files or ["brokers/kafka"]
            (work / "peer_shim.py").write_text(FASTSTREAM_SHIM)
            cwd, paths = Path(args.peer), [str(work)]
            plugins = ["-p", "peer_shim", "--continue-on-collection-errors"]
        env = dict(os.environ, PEER_CLIENT=args.client, PEER_BROKER=args.broker, PEER_REPORT=str(report),
                   PYTHONPATH=os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")]))
        # Only our shim: aiokafka_lite's own pytest plugin (an entry point) stays out of the peer's session.
        cmd = [sys.executable, "-m", "pytest", *plugins, "-p", "peer_report", "-p", "no:cacheprovider",
               "-p", "no:aiokafka_lite", "-q",
               "-W", "ignore::DeprecationWarning", *[f"tests/{f}" for f in files], *extra]
        subprocess.run(cmd, cwd=cwd, env=env, check=False)
        if not report.exists():
            print("pytest wrote no report", file=sys.stderr)
            return 1
        passed, total = summarize(json.loads(report.read_text()))
        print(json.dumps({"suite": args.suite, "client": args.client, "broker": args.broker,
                          "public_passed": passed, "public_total": total, "report": str(report)}))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

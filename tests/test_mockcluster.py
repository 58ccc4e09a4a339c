"""The librdkafka mock cluster helper: every control is checked to take effect, seen by a real
confluent-kafka client or by hand-built requests on a raw socket."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AdminClient, ClusterMetadata

from aiokafka_lite.embedded import aprobe_api_versions, probe_api_versions
from aiokafka_lite.errors import (
    IllegalArgumentError,
    KafkaConnectionError,
    MessageTooLargeError,
    NotLeaderOrFollowerError,
    ProtocolError,
)
from aiokafka_lite.testing import TRANSPORT_ERROR, MockCluster, MockClusterError

PRODUCE, METADATA, FIND_COORDINATOR, API_VERSIONS = 0, 3, 10, 18


def metadata(mc: MockCluster, topic: str | None = None) -> ClusterMetadata:
    admin = AdminClient({"bootstrap.servers": mc.bootstrap})
    return admin.list_topics(topic=topic, timeout=10)


def find_coordinator_v0(addr: tuple[str, int], group: str) -> tuple[int, int, str, int]:
    """FindCoordinator v0 by hand: (error_code, node_id, host, port)."""
    body = struct.pack(">hhih", FIND_COORDINATOR, 0, 9, 4) + b"test" + struct.pack(">h", len(group))
    body += group.encode()
    with socket.create_connection(addr, timeout=5) as sock:
        sock.sendall(struct.pack(">i", len(body)) + body)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = sock.recv(4096)
            assert chunk, "connection closed"
            data += chunk
    corr, error_code, node_id, host_len = struct.unpack_from(">ihih", data, 4)
    assert corr == 9
    host = data[16 : 16 + host_len].decode()  # after size, correlation id, error, node id, length
    (port,) = struct.unpack_from(">i", data, 16 + host_len)
    return error_code, node_id, host, port


class OneShotProducer:
    """A confluent-kafka producer that reports each message's delivery error and latency."""

    def __init__(self, bootstrap: str, **conf: Any) -> None:
        self.producer = Producer(
            {"bootstrap.servers": bootstrap, "message.timeout.ms": 8000, "linger.ms": 0, **conf}
        )

    def send(self, topic: str, partition: int = 0) -> tuple[KafkaError | None, float]:
        results: list[KafkaError | None] = []
        t0 = time.monotonic()
        self.producer.produce(
            topic, b"v", partition=partition, on_delivery=lambda err, _m: results.append(err)
        )
        assert self.producer.flush(15) == 0
        return results[0], time.monotonic() - t0


def test_brokers_and_bootstrap(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster()
    assert mc.broker_ids == [1, 2, 3]
    assert len(mc.bootstrap.split(",")) == 3
    md = metadata(mc)
    assert {b.id: (b.host, b.port) for b in md.brokers.values()} == {
        i: mc.broker_address(i) for i in (1, 2, 3)
    }
    for i in mc.broker_ids:
        host, port = mc.broker_address(i)
        assert host == "127.0.0.1"
        assert probe_api_versions(host, port)[PRODUCE][1] >= 7
    with pytest.raises(IllegalArgumentError):
        mc.broker_address(4)


def test_create_and_delete_topic(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster()
    mc.create_topic("orders", partitions=4, replication_factor=3)
    parts = metadata(mc, "orders").topics["orders"].partitions
    assert sorted(parts) == [0, 1, 2, 3]
    assert all(len(p.replicas) == 3 for p in parts.values())
    with pytest.raises(MockClusterError, match="TOPIC_ALREADY_EXISTS"):
        mc.create_topic("orders", 1, 1)
    mc.delete_topic("orders")
    assert "orders" not in metadata(mc).topics


def test_set_topic_error(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster(1)
    mc.create_topic("t", 1, 1)
    mc.set_topic_error("t", 29)  # TOPIC_AUTHORIZATION_FAILED
    assert metadata(mc, "t").topics["t"].error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    mc.set_topic_error("t", 0)
    assert metadata(mc, "t").topics["t"].error is None


def test_set_leader(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster()
    mc.create_topic("t", partitions=2, replication_factor=3)
    for leader in (3, 1, 2):
        mc.set_leader("t", 0, leader)
        assert metadata(mc, "t").topics["t"].partitions[0].leader == leader
    with pytest.raises(MockClusterError, match="BROKER_NOT_AVAILABLE"):
        mc.set_leader("t", 0, 9)


def test_set_down_and_up(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster()
    host, port = mc.broker_address(2)
    assert probe_api_versions(host, port)
    with socket.create_connection((host, port)) as established:
        mc.set_down(2)
        established.settimeout(5)
        try:  # open connections are closed: an orderly EOF or a reset, depending on timing
            closed = established.recv(1) == b""
        except ConnectionResetError:
            closed = True
        assert closed
    with pytest.raises(KafkaConnectionError):
        probe_api_versions(host, port, timeout=1)  # and new ones refused
    assert probe_api_versions(*mc.broker_address(1))  # the others still answer
    mc.set_up(2)
    assert probe_api_versions(host, port)


def test_set_rtt(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster(2)

    def round_trip(broker_id: int) -> float:
        t0 = time.monotonic()
        probe_api_versions(*mc.broker_address(broker_id))
        return time.monotonic() - t0

    assert round_trip(1) < 0.2
    mc.set_rtt(1, 400)
    assert round_trip(1) >= 0.38
    assert round_trip(2) < 0.2
    mc.set_rtt(1, 0)
    assert round_trip(1) < 0.2


def test_push_request_errors_reach_producer(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster()
    mc.create_topic("t", 1, 3)
    producer = OneShotProducer(mc.bootstrap)
    assert producer.send("t")[0] is None

    mc.push_request_errors(PRODUCE, [MessageTooLargeError])
    err, _ = producer.send("t")
    assert err is not None and err.code() == KafkaError.MSG_SIZE_TOO_LARGE

    # Retriable errors and a disconnect are absorbed by the producer's retries, one request each.
    mc.start_request_tracking()
    mc.push_request_errors(PRODUCE, [NotLeaderOrFollowerError, TRANSPORT_ERROR, 6])
    assert producer.send("t")[0] is None
    produces = [r for r in mc.requests() if r.api_key == PRODUCE]
    assert len(produces) == 4

    mc.push_request_errors(PRODUCE, [MessageTooLargeError])
    mc.clear_request_errors(PRODUCE)
    assert producer.send("t")[0] is None


def test_push_request_error_rtts_per_broker(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster()
    mc.create_topic("t", 1, 3)
    mc.set_leader("t", 0, 2)
    producer = OneShotProducer(mc.bootstrap)
    assert producer.send("t")[0] is None

    mc.push_request_error_rtts(2, PRODUCE, [(0, 600), (MessageTooLargeError, 0)])
    assert mc.error_stack_count(2, PRODUCE) == 2
    assert mc.error_stack_count(1, PRODUCE) == 0
    err, elapsed = producer.send("t")
    assert err is None and elapsed >= 0.55
    err, _ = producer.send("t")
    assert err is not None and err.code() == KafkaError.MSG_SIZE_TOO_LARGE
    assert mc.error_stack_count(2, PRODUCE) == 0
    with pytest.raises(MockClusterError, match="UNKNOWN_BROKER"):
        mc.push_request_error_rtts(9, PRODUCE, [(0, 1)])


def test_injected_error_on_raw_api_versions(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster(1)
    mc.push_request_errors(API_VERSIONS, [35])  # UNSUPPORTED_VERSION
    with pytest.raises(ProtocolError, match="error code 35"):
        probe_api_versions(*mc.broker_address(1))
    assert probe_api_versions(*mc.broker_address(1))


def test_set_coordinator(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster()
    for broker_id in (3, 1):
        mc.set_coordinator("group", "g1", broker_id)
        error_code, node_id, host, port = find_coordinator_v0(mc.broker_address(2), "g1")
        assert (error_code, node_id, (host, port)) == (0, broker_id, mc.broker_address(broker_id))
    with pytest.raises(IllegalArgumentError):
        mc.set_coordinator("consumer", "g1", 1)  # type: ignore[arg-type]


def test_set_api_version(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster(1)
    addr = mc.broker_address(1)
    assert probe_api_versions(*addr)[METADATA][1] > 4
    mc.set_api_version(METADATA, 1, 4)
    assert probe_api_versions(*addr)[METADATA] == (1, 4)
    mc.set_api_version(METADATA, -1, -1)
    assert METADATA not in probe_api_versions(*addr)


def test_request_tracking(mock_cluster: Any) -> None:
    mc: MockCluster = mock_cluster(2)
    assert mc.requests() == []
    mc.start_request_tracking()
    probe_api_versions(*mc.broker_address(2))
    reqs = mc.requests()
    assert [(r.broker_id, r.api_key) for r in reqs] == [(2, API_VERSIONS)]
    assert reqs[0].timestamp_us > 0
    mc.clear_requests()
    mc.stop_request_tracking()
    probe_api_versions(*mc.broker_address(1))
    assert mc.requests() == []


def test_stop_kills_the_child_by_pid() -> None:
    mc = MockCluster(1)
    mc.start()
    pid, addr = mc.pid, mc.broker_address(1)
    assert mc.stop() is not None
    assert not mc.running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(KafkaConnectionError):
        probe_api_versions(*addr, timeout=1)
    with pytest.raises(MockClusterError, match="not running"):
        mc.set_down(1)
    mc.stop()  # idempotent


async def test_async_context_manager() -> None:
    async with MockCluster(2) as mc:
        versions = await aprobe_api_versions(*mc.broker_address(2))
        assert versions[API_VERSIONS][0] == 0
        pid = mc.pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_bad_arguments() -> None:
    for n in (0, 65, True, "3"):
        with pytest.raises(IllegalArgumentError):
            MockCluster(n)  # type: ignore[arg-type]
    with MockCluster(1) as mc, pytest.raises(IllegalArgumentError):
        mc.push_request_errors(PRODUCE, ["boom"])  # type: ignore[list-item]


def test_missing_or_wrong_library_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIOKAFKA_LITE_LIBRDKAFKA", "/nonexistent/librdkafka.so.1")
    with pytest.raises(MockClusterError, match="is not a file"):
        MockCluster(1).start()
    monkeypatch.setenv("AIOKAFKA_LITE_LIBRDKAFKA", "/bin/true")  # a file, but not a shared library
    mc = MockCluster(1)
    with pytest.raises(MockClusterError, match="cannot load /bin/true"):
        mc.start()
    assert not mc.running


def test_child_exits_when_parent_dies(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import os, signal
        from aiokafka_lite.testing import MockCluster
        mc = MockCluster(1, log_dir={str(tmp_path)!r})
        mc.start()
        print(mc.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    pid = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        except OSError:
            return
        if state == "Z":  # exited; only an orphan's reaper has not collected it yet
            return
        time.sleep(0.05)
    pytest.fail(f"mock cluster child {pid} outlived its parent")

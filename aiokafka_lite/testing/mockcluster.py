"""librdkafka's mock Kafka cluster, run in a child process and driven over a JSON-lines pipe.

The mock cluster (shipped inside the confluent-kafka wheel's librdkafka) gives several brokers on
loopback plus fault injection: leader moves, brokers down/up, RTTs, injected error codes per API key.
It runs in a separate process so that librdkafka never shares an address space (or a crash) with
the client under test; the child exits on its own when our end of its stdin closes.

Every control is a blocking call that returns within milliseconds, so calling one from a coroutine
is fine; only start and stop have async twins.

Limits (see /work/shared/brokers.md): no admin APIs (create topics with :meth:`create_topic`),
2-member classic groups fail, ApiVersions v3 is rejected.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import importlib.util
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from .._lifecycle import Lifecycle
from ..embedded import read_tail, stop_pid
from ..errors import BrokerResponseError, IllegalArgumentError, KafkaError
from ._exit import ExitRegistry

__all__ = [
    "ALL_BROKERS",
    "TRANSPORT_ERROR",
    "MockCluster",
    "MockClusterError",
    "MockRequest",
    "find_librdkafka",
]

#: librdkafka's RD_KAFKA_RESP_ERR__TRANSPORT: as an injected error, the mock broker disconnects.
TRANSPORT_ERROR = -195
#: Broker id meaning "every broker" for set_down / set_up / set_rtt.
ALL_BROKERS = -1

ErrorCode = int | type[BrokerResponseError]


class MockClusterError(KafkaError):
    """The mock cluster child failed to start, died, or refused a control."""


class MockRequest(NamedTuple):
    """One request the mock cluster received while request tracking was on."""

    broker_id: int
    api_key: int
    timestamp_us: int


def find_librdkafka() -> Path:
    """The librdkafka shared library inside the confluent-kafka wheel (or ``$AIOKAFKA_LITE_LIBRDKAFKA``)."""
    override = os.environ.get("AIOKAFKA_LITE_LIBRDKAFKA")
    if override:
        if not Path(override).is_file():
            raise MockClusterError(f"$AIOKAFKA_LITE_LIBRDKAFKA={override!r} is not a file")
        return Path(override)
    spec = importlib.util.find_spec("confluent_kafka")
    if spec is None or not spec.submodule_search_locations:
        raise MockClusterError("confluent-kafka is not installed (pip install confluent-kafka)")
    pkg = Path(next(iter(spec.submodule_search_locations)))
    libs = sorted(glob.glob(str(pkg.parent / "confluent_kafka.libs" / "librdkafka*.so*")))
    if not libs:
        raise MockClusterError(
            f"no librdkafka*.so* next to {pkg} (a confluent-kafka wheel built without it?)"
        )
    return Path(libs[0])


def _errno(code: ErrorCode) -> int:
    if isinstance(code, type) and issubclass(code, BrokerResponseError):
        return code.errno
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    raise IllegalArgumentError(f"error code must be an int or a BrokerResponseError class, got {code!r}")


_LIVE = ExitRegistry()


class MockCluster(Lifecycle):
    """A librdkafka mock cluster with ``brokers`` brokers (ids 1..N) in a child process.

    Use as ``with MockCluster(3) as mc:`` or ``async with MockCluster(3) as mc:``; then
    ``mc.bootstrap`` is the comma-separated bootstrap list and ``mc.broker_address(2)`` the
    ``(host, port)`` of broker 2. The child's log (every control applied, librdkafka's own lines,
    more with ``debug="mock"``) is at :attr:`log_path`.
    """

    def __init__(
        self, brokers: int = 3, *, log_dir: str | os.PathLike[str] | None = None, debug: str = ""
    ) -> None:
        if isinstance(brokers, bool) or not isinstance(brokers, int) or not 1 <= brokers <= 64:
            raise IllegalArgumentError(f"brokers must be an int in 1..64, got {brokers!r}")
        self.broker_count = brokers
        self.debug = debug  # librdkafka ``debug`` contexts for the log, e.g. "mock,protocol"
        self._log_dir_arg = Path(log_dir) if log_dir is not None else None
        self._owned_dir: Path | None = None
        self.log_path: Path | None = None
        self.bootstrap = ""
        self._addresses: dict[int, tuple[str, int]] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = b""
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise MockClusterError("mock cluster was never started")
        return self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self._addresses)

    def broker_address(self, broker_id: int) -> tuple[str, int]:
        """``(host, port)`` of one broker (the mock lists its bootstraps in broker-id order)."""
        try:
            return self._addresses[broker_id]
        except KeyError:
            raise IllegalArgumentError(f"no broker {broker_id}; brokers are {self.broker_ids}") from None

    def log_tail(self, lines: int = 40) -> str:
        return read_tail(self.log_path, lines)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<MockCluster brokers={self.broker_count} {self.bootstrap or '-'} {state}>"

    def start(self, timeout: float = 15.0) -> None:
        """Spawn the child and wait for it to report the cluster's bootstrap servers."""
        if self.running:
            raise MockClusterError(f"{self!r} is already running")
        lib = find_librdkafka()
        if self._log_dir_arg is not None:
            self._log_dir_arg.mkdir(parents=True, exist_ok=True)
            log_dir = self._log_dir_arg
        else:
            log_dir = self._owned_dir = Path(tempfile.mkdtemp(prefix="aiokafka-lite-mock-"))
        self.log_path = log_dir / f"mockcluster-{os.getpid()}-{id(self):x}.log"
        # Run the child by path: it needs only the standard library, and skipping the package
        # imports keeps start-up near 0.1 s.
        argv = [sys.executable, str(Path(__file__).with_name("_mock_child.py"))]
        argv += ["--lib", str(lib), "--brokers", str(self.broker_count), "--debug", self.debug]
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True
            )
        self._buf = b""
        _LIVE.add(self)
        try:
            hello = self._read_answer(timeout, "start")
        except MockClusterError:
            self.stop()
            raise
        self.bootstrap = str(hello["bootstraps"])
        self._addresses = {}
        for broker_id, entry in enumerate(self.bootstrap.split(","), start=1):
            host, _, port = entry.rpartition(":")
            self._addresses[broker_id] = (host, int(port))

    def stop(self, grace: float = 3.0) -> int | None:
        """Kill the child by PID (SIGTERM, then SIGKILL); idempotent. Returns its exit status."""
        code = None
        if self._proc is not None:
            for pipe in (self._proc.stdin, self._proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            code = stop_pid(self._proc, grace)
        _LIVE.discard(self)
        if self._owned_dir is not None:
            shutil.rmtree(self._owned_dir, ignore_errors=True)
            self._owned_dir = None
            self.log_path = None
        return code

    async def astart(self, timeout: float = 15.0) -> None:
        await asyncio.to_thread(self.start, timeout)

    async def astop(self, grace: float = 3.0) -> int | None:
        return await asyncio.to_thread(self.stop, grace)

    # -- control channel -------------------------------------------------------------------------

    def _call(self, op: str, timeout: float = 10.0, **args: Any) -> Any:
        with self._lock:
            if not self.running or self._proc is None or self._proc.stdin is None:
                raise MockClusterError(f"{op}: mock cluster is not running. {self._tail_note()}")
            try:
                self._proc.stdin.write(json.dumps({"op": op, "args": args}).encode() + b"\n")
                self._proc.stdin.flush()
            except OSError as exc:
                raise MockClusterError(f"{op}: mock cluster child gone ({exc}). {self._tail_note()}") from exc
            return self._read_answer(timeout, op)

    def _read_answer(self, timeout: float, op: str) -> Any:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise MockClusterError(
                        f"{op}: no answer from the mock cluster in {timeout}s. {self._tail_note()}"
                    )
                if not sel.select(left):
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    self._proc.wait(timeout=2)
                    raise MockClusterError(
                        f"{op}: mock cluster child exited (status {self._proc.returncode}). "
                        f"{self._tail_note()}"
                    )
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        answer = json.loads(line)
        if not answer.get("ok"):
            raise MockClusterError(str(answer.get("error")))  # the child's message names the control
        return answer.get("result")

    def _tail_note(self) -> str:
        tail = self.log_tail(20)
        return f"Log {self.log_path}:\n{tail}" if tail else ""

    # -- controls --------------------------------------------------------------------------------

    def create_topic(self, topic: str, partitions: int = 1, replication_factor: int = 1) -> None:
        """Create a topic (the mock has no CreateTopics API); leaders are spread over the brokers."""
        self._call("topic_create", topic=topic, partitions=partitions, replication_factor=replication_factor)

    def delete_topic(self, topic: str) -> None:
        self._call("topic_delete", topic=topic)

    def set_topic_error(self, topic: str, error: ErrorCode) -> None:
        """Make Metadata (and AddPartitionsToTxn) answer ``error`` for this topic; 0 clears it."""
        self._call("topic_set_error", topic=topic, error=_errno(error))

    def set_leader(self, topic: str, partition: int, broker_id: int) -> None:
        """Move a partition's leadership (-1: no leader). Creates the topic if needed."""
        self._call("partition_set_leader", topic=topic, partition=partition, broker_id=broker_id)

    def set_follower(self, topic: str, partition: int, broker_id: int) -> None:
        """Set the preferred replica a consumer is told to fetch from (KIP-392)."""
        self._call("partition_set_follower", topic=topic, partition=partition, broker_id=broker_id)

    def set_follower_wmarks(self, topic: str, partition: int, low: int, high: int) -> None:
        """Freeze the follower's log start / end offsets (-1 for either: follow the leader again), so
        that a fetch from the follower past ``high`` gets OFFSET_OUT_OF_RANGE (a lagging replica)."""
        self._call("partition_set_follower_wmarks", topic=topic, partition=partition, lo=low, hi=high)

    def set_down(self, broker_id: int = ALL_BROKERS) -> None:
        """Close the broker's connections and listener (connects are refused); no leader change."""
        self._call("broker_set_down", broker_id=broker_id)

    def set_up(self, broker_id: int = ALL_BROKERS) -> None:
        """Accept connections again on the same port."""
        self._call("broker_set_up", broker_id=broker_id)

    def set_rtt(self, broker_id: int, rtt_ms: int) -> None:
        """Delay every response of the broker by ``rtt_ms`` (0 restores)."""
        self._call("broker_set_rtt", broker_id=broker_id, rtt_ms=rtt_ms)

    @contextlib.contextmanager
    def broker_down(self, broker_id: int = ALL_BROKERS) -> Iterator[None]:
        """``with cluster.broker_down(2):`` the broker refuses connections inside the block and accepts them
        again (same port) after it, even when the block raises."""
        self.set_down(broker_id)
        try:
            yield
        finally:
            self.set_up(broker_id)

    @contextlib.contextmanager
    def delayed_link(self, broker_id: int, rtt_ms: int) -> Iterator[None]:
        """``with cluster.delayed_link(1, 500):`` its answers are ``rtt_ms`` late inside the block."""
        self.set_rtt(broker_id, rtt_ms)
        try:
            yield
        finally:
            self.set_rtt(broker_id, 0)

    def set_rack(self, broker_id: int, rack: str) -> None:
        self._call("broker_set_rack", broker_id=broker_id, rack=rack)

    def push_request_errors(self, api_key: int, errors: Iterable[ErrorCode]) -> None:
        """The next ``len(errors)`` requests of ``api_key`` (to any broker) fail with these codes, in order.

        :data:`TRANSPORT_ERROR` makes the broker disconnect instead of answering.
        """
        codes = [_errno(e) for e in errors]
        if codes:
            self._call("push_request_errors", api_key=api_key, errors=codes)

    def push_request_error_rtts(
        self, broker_id: int, api_key: int, errors: Sequence[tuple[ErrorCode, int]]
    ) -> None:
        """Per-broker (error, rtt_ms) answers for the next requests of ``api_key``; these take
        precedence over :meth:`push_request_errors`. Error 0 with an RTT only delays the answer."""
        pairs = [(_errno(err), int(rtt)) for err, rtt in errors]
        if pairs:
            self._call("broker_push_request_error_rtts", broker_id=broker_id, api_key=api_key, errors=pairs)

    def error_stack_count(self, broker_id: int, api_key: int) -> int:
        """How many per-broker injected errors for ``api_key`` are still waiting."""
        return int(self._call("broker_error_stack_cnt", broker_id=broker_id, api_key=api_key))

    def clear_request_errors(self, api_key: int) -> None:
        self._call("clear_request_errors", api_key=api_key)

    def set_coordinator(self, key_type: Literal["group", "transaction"], key: str, broker_id: int) -> None:
        """Pin the coordinator FindCoordinator answers for a group.id or transactional.id."""
        if key_type not in ("group", "transaction"):
            raise IllegalArgumentError(f"key_type must be 'group' or 'transaction', got {key_type!r}")
        self._call("coordinator_set", key_type=key_type, key=key, broker_id=broker_id)

    def set_api_version(self, api_key: int, min_version: int, max_version: int) -> None:
        """Limit the versions ApiVersions advertises for ``api_key`` (-1, -1 disables the API)."""
        self._call("set_apiversion", api_key=api_key, min_version=min_version, max_version=max_version)

    def set_consumer_group_timing(self, heartbeat_interval_ms: int, session_timeout_ms: int = 30000) -> None:
        """KIP-848 (ConsumerGroupHeartbeat) groups tell their members this heartbeat interval and expire them
        after this session timeout, from each group's next heartbeat on (the mock's defaults: 3000 and
        30000 ms; rdkafka_mock_cgrp.c reads them on every heartbeat)."""
        self._call("set_group_consumer_timing", heartbeat_interval_ms=heartbeat_interval_ms,
                   session_timeout_ms=session_timeout_ms)

    def set_share_groups(self, *, heartbeat_interval_ms: int = 5000, session_timeout_ms: int = 45000,
                         record_lock_ms: int = 30000, max_delivery_attempts: int = 5,
                         auto_offset_reset: Literal["earliest", "latest"] = "latest") -> None:
        """Share groups (KIP-932) of this cluster: the heartbeat interval handed to members, the session
        timeout, how long acquired records stay locked to a member (then they return for redelivery), the
        delivery attempts before a record is archived, and where a new share-partition starts (Kafka's
        group.share.* settings; these are the mock's own defaults, rdkafka_mock_sharegrp.c)."""
        self._call("set_share_group", heartbeat_interval_ms=heartbeat_interval_ms,
                   session_timeout_ms=session_timeout_ms, record_lock_ms=record_lock_ms,
                   max_delivery_attempts=max_delivery_attempts, earliest=auto_offset_reset == "earliest")

    def share_assign_all(self, group: str, topic: str, partitions: int) -> int:
        """Assign every partition of ``topic`` to every current member of share group ``group`` (the mock
        otherwise spreads partitions over members, like a consumer group); returns the member count."""
        return int(self._call("share_assign_all", group=group, topic=topic, partitions=partitions))

    def start_request_tracking(self) -> None:
        self._call("start_request_tracking")

    def stop_request_tracking(self) -> None:
        self._call("stop_request_tracking")

    def clear_requests(self) -> None:
        self._call("clear_requests")

    def requests(self) -> list[MockRequest]:
        """Requests received since tracking started (or the last :meth:`clear_requests`)."""
        return [MockRequest(*r) for r in self._call("get_requests")]

    def set_telemetry_metrics(self, prefixes: Iterable[str]) -> None:
        """Metric name prefixes the brokers subscribe to (KIP-714); ``[""]`` is every metric, ``[]`` none."""
        self._call("telemetry_set_requested_metrics", metrics=list(prefixes))

    def set_telemetry_push_interval(self, push_interval_ms: int) -> None:
        """The push interval the brokers hand out in GetTelemetrySubscriptions (default 5 minutes)."""
        self._call("telemetry_set_push_interval", push_interval_ms=push_interval_ms)

    def telemetry_log(self) -> list[str]:
        """What the mock decoded from PushTelemetry payloads since the last call (librdkafka's own OTLP
        decoder: metric names and attribute strings as ``string value: ...``, data points as
        ``NumberDataPoint ... value: ...``, ``Metric type: 0|1`` for sum|gauge)."""
        return list(self._call("telemetry_log"))

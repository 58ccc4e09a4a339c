"""Fault tools for the chaos tests (a test tool, not a mock: a real broker does all the work).

:class:`FaultProxy` is a TCP proxy in front of one real broker. It rewrites Metadata and
FindCoordinator answers so clients keep talking through it, and on demand:

* ``inject(api_key, code, count)``: the next ``count`` requests of that API get ``code``. Fetch is
  forwarded and its answer rewritten (every partition gets the code, no records); the other supported
  APIs are *not* forwarded and the proxy answers them itself, so an injected error means "not done";
* ``drop(api_key)``: the next request of that API is forwarded (the broker acts on it) but its answer
  is swallowed and the client's connection closed: the outcome the client cannot know;
* ``close_all()``: every client connection is closed now.

Answers go back in request order, as Kafka clients require. Seeds drive every choice the tests make,
so a failing run can be replayed with the seed in its test id.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import struct
import time
from collections import deque
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic

from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.protocol import decode_request, decode_response, encode_response
from aiokafka_lite.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnResponse
from aiokafka_lite.protocol.messages.end_txn import EndTxnResponse
from aiokafka_lite.protocol.messages.heartbeat import HeartbeatResponse
from aiokafka_lite.protocol.messages.join_group import JoinGroupResponse
from aiokafka_lite.protocol.messages.offset_commit import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from aiokafka_lite.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)
from aiokafka_lite.protocol.messages.sync_group import SyncGroupResponse
from aiokafka_lite.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)

PRODUCE, FETCH, METADATA, OFFSET_COMMIT, FIND_COORDINATOR = 0, 1, 3, 8, 10
JOIN_GROUP, HEARTBEAT, SYNC_GROUP, INIT_PRODUCER_ID = 11, 12, 14, 22
ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN, TXN_OFFSET_COMMIT = 24, 25, 26, 28

# Broker error codes the tests inject (all retriable, or group-state errors a client must handle).
NOT_LEADER_OR_FOLLOWER = 6
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
NOT_ENOUGH_REPLICAS = 19
REBALANCE_IN_PROGRESS = 27
CONCURRENT_TRANSACTIONS = 51


def _synthetic(api_key: int, request: Any, code: int) -> Any:
    """The proxy's own error answer to ``request`` (which the broker never sees)."""
    if api_key == PRODUCE:
        return ProduceResponse(responses=[
            TopicProduceResponse(name=t.name, partition_responses=[
                PartitionProduceResponse(index=p.index, error_code=code, base_offset=-1)
                for p in t.partition_data])
            for t in request.topic_data])
    if api_key == OFFSET_COMMIT:
        return OffsetCommitResponse(topics=[
            OffsetCommitResponseTopic(name=t.name, partitions=[
                OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=code)
                for p in t.partitions])
            for t in request.topics])
    if api_key == TXN_OFFSET_COMMIT:
        return TxnOffsetCommitResponse(topics=[
            TxnOffsetCommitResponseTopic(name=t.name, partitions=[
                TxnOffsetCommitResponsePartition(partition_index=p.partition_index, error_code=code)
                for p in t.partitions])
            for t in request.topics])
    if api_key == HEARTBEAT:
        return HeartbeatResponse(error_code=code)
    if api_key == JOIN_GROUP:
        return JoinGroupResponse(error_code=code, generation_id=-1, member_id=request.member_id,
                                 leader="", protocol_name="", members=[])
    if api_key == SYNC_GROUP:
        return SyncGroupResponse(error_code=code, assignment=b"")
    if api_key == END_TXN:
        return EndTxnResponse(error_code=code)
    if api_key == ADD_OFFSETS_TO_TXN:
        return AddOffsetsToTxnResponse(error_code=code)
    raise ValueError(f"no synthetic error answer for API key {api_key}")


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        host, _, port = upstream.rpartition(":")
        self.upstream = (host, int(port))
        self._faults: dict[int, deque[Any]] = {}
        #: what was done, in order: (seconds since start, kind, api_key, code) -- for failure messages.
        self.log: list[tuple[float, str, int, int]] = []
        self.t0 = time.monotonic()
        self.requests: dict[int, int] = {}
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0
        #: API keys whose requests and answers are decoded into ``traced`` (for debugging a seed).
        self.trace: set[int] = set()
        self.traced: list[tuple[float, int, str, Any]] = []
        self._conns = 0
        #: API keys whose answers' error codes are noted in ``answer_errors`` as (seconds, api, code).
        self.watch: set[int] = set()
        self.answer_errors: list[tuple[float, int, int]] = []

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def inject(self, api_key: int, code: int, count: int = 1) -> None:
        self._faults.setdefault(api_key, deque()).extend([("error", code)] * count)

    def drop(self, api_key: int) -> None:
        self._faults.setdefault(api_key, deque()).append(("drop", 0))

    def close_all(self) -> None:
        self._note("close_all", -1, len(self._writers))
        for w in list(self._writers):
            w.close()

    def _note(self, kind: str, api_key: int, code: int) -> None:
        self.log.append((round(time.monotonic() - self.t0, 2), kind, api_key, code))

    def _watch_answer(self, api_key: int, response: Any) -> None:
        codes = [getattr(response, "error_code", 0)]
        for t in getattr(response, "responses", None) or []:
            codes += [p.error_code for p in getattr(t, "partition_responses", None) or []]
        now = round(time.monotonic() - self.t0, 2)
        self.answer_errors += [(now, api_key, c) for c in codes if c]

    def clear(self) -> None:
        self._faults.clear()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def __aenter__(self) -> FaultProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _take(self, api_key: int) -> Any:
        queue = self._faults.get(api_key)
        return queue.popleft() if queue else None

    async def _client(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(cwriter)
        try:
            ureader, uwriter = await asyncio.open_connection(*self.upstream)
        except OSError:
            cwriter.close()
            self._writers.discard(cwriter)
            self._tasks.discard(task)
            return
        self._writers.add(uwriter)
        self._conns += 1
        conn = self._conns
        # Per request, in order: ("up", api_key, version, mutate_code) | ("synthetic", frame) | ("drop",)
        pending: deque[tuple[Any, ...]] = deque()

        async def flush_synthetic() -> None:
            while pending and pending[0][0] == "synthetic":
                cwriter.write(pending.popleft()[1])
            await cwriter.drain()

        async def from_upstream() -> None:
            while True:
                frame = await _read_frame(ureader)
                if frame is None:
                    cwriter.close()
                    return
                await flush_synthetic()
                entry = pending.popleft()
                if entry[0] == "drop":
                    cwriter.close()
                    uwriter.close()
                    return
                _, api_key, version, mutate = entry
                if api_key in self.trace:
                    self.traced.append((round(time.monotonic() - self.t0, 3), conn, "answer",
                                        decode_response(api_key, version, frame)[1]))
                if api_key in self.watch:
                    self._watch_answer(api_key, decode_response(api_key, version, frame)[1])
                if api_key in (METADATA, FIND_COORDINATOR) or mutate is not None:
                    corr_id, response = decode_response(api_key, version, frame)
                    if api_key == METADATA:
                        for b in response.brokers:
                            b.host, b.port = "127.0.0.1", self.port
                    elif api_key == FIND_COORDINATOR:
                        if version < 4:
                            response.host, response.port = "127.0.0.1", self.port
                        for c in response.coordinators:
                            c.host, c.port = "127.0.0.1", self.port
                    else:  # FETCH: every partition fails, nothing delivered
                        for t in response.responses:
                            for p in t.partitions:
                                p.error_code, p.records = mutate, None
                    cwriter.write(encode_response(response, version, corr_id))
                else:
                    cwriter.write(struct.pack(">i", len(frame)) + frame)
                await cwriter.drain()
                await flush_synthetic()

        up = asyncio.ensure_future(from_upstream())
        try:
            while True:
                frame = await _read_frame(creader)
                if frame is None or up.done():
                    break
                api_key, version, corr = struct.unpack_from(">hhi", frame)
                self.requests[api_key] = self.requests.get(api_key, 0) + 1
                if api_key in self.trace:
                    self.traced.append((round(time.monotonic() - self.t0, 3), conn, "request",
                                        decode_request(frame)[1]))
                fault = self._take(api_key)
                mutate = None
                if fault is not None:
                    kind, code = fault
                    self._note(kind, api_key, code)
                    if kind == "error" and api_key == FETCH:
                        mutate = code
                    elif kind == "error":
                        _, request = decode_request(frame)
                        answer = _synthetic(api_key, request, code)
                        pending.append(("synthetic", encode_response(answer, version, corr)))
                        await flush_synthetic()
                        continue
                    else:
                        pending.append(("drop",))
                        uwriter.write(struct.pack(">i", len(frame)) + frame)
                        await uwriter.drain()
                        continue
                pending.append(("up", api_key, version, mutate))
                uwriter.write(struct.pack(">i", len(frame)) + frame)
                await uwriter.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # stop() cancels us; asyncio's stream callback must see a normal end
        finally:
            up.cancel()
            with contextlib.suppress(BaseException):
                await up
            for w in (cwriter, uwriter):
                w.close()
                self._writers.discard(w)
            self._tasks.discard(task)


async def _read_frame(reader: asyncio.StreamReader) -> bytes | None:
    try:
        head = await reader.readexactly(4)
        (size,) = struct.unpack(">i", head)
        return await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    """Create ``topic`` with confluent-kafka's AdminClient (independent of our admin code)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=10)[topic].result(timeout=15)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        md = admin.list_topics(topic, timeout=5).topics.get(topic)
        if md is not None and not md.error and len(md.partitions) == partitions:
            return
        time.sleep(0.05)
    raise AssertionError(f"topic {topic} not visible with {partitions} partitions")


def kill_hard(broker: EmbeddedBroker) -> int | None:
    """SIGKILL ``broker`` by its PID (no clean shutdown) and reap it; its data directory stays."""
    os.kill(broker.pid, signal.SIGKILL)
    return broker.stop(grace=5)  # only reaps the dead process and closes its log

"""The consumer's Fetcher against a scripted fake broker (tests/net/_net_fakes.py: a loopback server
answering with our own codecs): fetch sessions (KIP-227), the partition errors that reset a position or
refresh metadata, a corrupt batch, pause -- one answer at a time, as no real broker gives them on demand."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aiokafka_lite import Consumer
from aiokafka_lite import errors as Errors
from aiokafka_lite.protocol.messages.fetch import FetchableTopicResponse, FetchResponse, PartitionData
from aiokafka_lite.protocol.messages.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from aiokafka_lite.protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from aiokafka_lite.records import BatchBuilder
from aiokafka_lite.structs import TopicPartition as TP

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "net"))
from _net_fakes import FakeBroker

PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3
VERSIONS = {18: (0, 3), 3: (0, 9), 1: (4, 12), 2: (1, 7)}
FETCH_SESSION_ID_NOT_FOUND, OFFSET_OUT_OF_RANGE, NOT_LEADER = 70, 1, 6
T0, T1 = TP("t", 0), TP("t", 1)


def batch(base: int, n: int, corrupt: bool = False) -> bytes:
    b = BatchBuilder(0, 1 << 20, base_offset=base)
    for i in range(n):
        b.append(1_700_000_000_000, None, b"%d" % (base + i), None)
    data = bytearray(b.build())
    if corrupt:
        data[-1] ^= 0xFF  # the last record's last byte: the CRC no longer matches
    return bytes(data)


class Log:
    """Two partitions of topic "t" on one fake broker, 100 records each from offset ``start``. ``script``
    answers the next Fetch requests: a top-level error code, or {tp: partition error code} (a partition it
    leaves out is served), or "corrupt" (serve corrupt batches). Every Fetch request is kept."""

    def __init__(self, start: int = 0) -> None:
        self.port = 0
        self.start = start
        self.end = start + 100
        self.script: list[Any] = []
        self.fetches: list[Any] = []
        self.metadata_requests = 0
        self.list_offsets = 0
        self.session_id = 7
        #: The fetch session (KIP-227): each partition's fetch offset as the client last sent it.
        self.session: dict[TP, int] = {}

    async def __call__(self, conn: Any, header: Any, req: Any, frame: bytes) -> None:
        key = header.request_api_key
        if key == METADATA:
            self.metadata_requests += 1
            parts = [MetadataResponsePartition(error_code=0, partition_index=p, leader_id=1, leader_epoch=0,
                                               replica_nodes=[1], isr_nodes=[1], offline_replicas=[])
                     for p in (0, 1)]
            await conn.reply(header, MetadataResponse(
                throttle_time_ms=0, cluster_id="fake", controller_id=1,
                brokers=[MetadataResponseBroker(node_id=1, host="127.0.0.1", port=self.port)],
                topics=[MetadataResponseTopic(error_code=0, name="t", is_internal=False, partitions=parts)]))
        elif key == LIST_OFFSETS:
            self.list_offsets += 1
            topics = [ListOffsetsTopicResponse(name=t.name, partitions=[ListOffsetsPartitionResponse(
                partition_index=p.partition_index, error_code=0, timestamp=-1, leader_epoch=0,
                offset=self.start if p.timestamp == -2 else self.end) for p in t.partitions])
                for t in req.topics]
            await conn.reply(header, ListOffsetsResponse(throttle_time_ms=0, topics=topics))
        elif key == FETCH:
            await self._fetch(conn, header, req)

    async def _fetch(self, conn: Any, header: Any, req: Any) -> None:
        self.fetches.append(req)
        step = self.script.pop(0) if self.script else {}
        if isinstance(step, int):
            await conn.reply(header, FetchResponse(throttle_time_ms=0, error_code=step, session_id=0,
                                                   responses=[]))
            return
        if req.session_epoch == 0:
            self.session = {}
        for t in req.topics:
            for p in t.partitions:
                self.session[TP(t.topic, p.partition)] = p.fetch_offset
        for f in req.forgotten_topics_data:
            for num in f.partitions:
                self.session.pop(TP(f.topic, num), None)
        parts = []
        for tp, offset in sorted(self.session.items()):
            code = step.get(tp, 0) if isinstance(step, dict) else 0
            records = None
            if code == 0 and self.start <= offset < self.end:
                records = batch(offset, min(10, self.end - offset), corrupt=step == "corrupt")
            elif code == 0 and offset != self.end:
                code = OFFSET_OUT_OF_RANGE
            parts.append(PartitionData(partition_index=tp.partition, error_code=code,
                                       high_watermark=self.end, last_stable_offset=self.end,
                                       log_start_offset=self.start, aborted_transactions=[],
                                       records=records))
        await conn.reply(header, FetchResponse(
            throttle_time_ms=0, error_code=0, session_id=self.session_id,
            responses=[FetchableTopicResponse(topic="t", partitions=parts)] if parts else []))


async def _consume(c: Consumer[Any, Any], want: int, timeout: float = 10) -> list[Any]:
    got: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        for recs in (await c.poll(timeout_ms=200)).values():
            got.extend(recs)
    return got


async def _run(log: Log, body: Callable[[Consumer[Any, Any]], Any], **settings: Any) -> None:
    async with FakeBroker(log, versions=VERSIONS) as fake:
        log.port = fake.port
        settings.setdefault("auto_offset_reset", "earliest")
        settings.setdefault("fetch_max_wait_ms", 50)
        async with Consumer(bootstrap_servers=fake.bootstrap, enable_auto_commit=False,
                            request_timeout_ms=5000, retry_backoff_ms=20, **settings) as c:
            await body(c)


async def test_one_session_full_then_incremental() -> None:
    """One Fetch at a time to the broker for both partitions; the first opens a session (epoch 0, both
    partitions), the next ones carry its id and the following epochs; every record arrives once, in order."""
    log = Log()

    async def body(c: Consumer[Any, Any]) -> None:
        c.assign([T0, T1])
        c.seek(T0, 0)
        c.seek(T1, 0)
        got = await _consume(c, 200)
        for tp in (T0, T1):
            assert [r.value for r in got if r.partition == tp.partition] == [b"%d" % i for i in range(100)]
        assert (await c.position(T0)) == 100 and (await c.position(T1)) == 100

    await _run(log, body)
    first, later = log.fetches[0], log.fetches[1:]
    assert (first.session_id, first.session_epoch) == (0, 0)
    assert {p.partition for t in first.topics for p in t.partitions} == {0, 1}
    assert later and all(r.session_id == 7 for r in later)
    assert [r.session_epoch for r in later[:5]] == [1, 2, 3, 4, 5]


async def test_an_empty_answer_given_at_once_is_not_asked_again_at_once() -> None:
    """At the end of the log the fake broker answers a fetch at once, as noida-db does, where Kafka holds it
    for fetch_max_wait_ms: the same fetch waits out that time (asked again at once, it was a busy loop of
    thousands a second). A seek is news: its fetch goes out, and its records arrive."""
    log = Log()

    async def body(c: Consumer[Any, Any]) -> None:
        c.assign([T0, T1])
        c.seek(T0, 100)
        c.seek(T1, 100)
        first = len(log.fetches)
        start = time.monotonic()
        while time.monotonic() - start < 1.0:
            assert not await c.poll(timeout_ms=100)
        asked = len(log.fetches) - first
        assert 1 <= asked <= (time.monotonic() - start) / 0.5 + 2, asked
        c.seek(T0, 90)
        got = await _consume(c, 10)
        assert [(r.partition, r.offset) for r in got] == [(0, o) for o in range(90, 100)]

    await _run(log, body, fetch_max_wait_ms=500)


async def test_lost_session_goes_back_to_a_full_fetch() -> None:
    log = Log()

    async def body(c: Consumer[Any, Any]) -> None:
        c.assign([T0, T1])
        c.seek(T0, 0)
        c.seek(T1, 0)
        got = await _consume(c, 20)
        log.script.append(FETCH_SESSION_ID_NOT_FOUND)
        got += await _consume(c, 200 - len(got))
        assert sorted((r.partition, r.offset) for r in got) == [(p, o) for p in (0, 1) for o in range(100)]

    await _run(log, body)
    codes = [i for i, r in enumerate(log.fetches) if r.session_id == 0]
    assert len(codes) == 2, [(r.session_id, r.session_epoch) for r in log.fetches]
    again = log.fetches[codes[1]]
    assert again.session_epoch == 0 and {p.partition for t in again.topics for p in t.partitions} == {0, 1}


@pytest.mark.parametrize("reset", ["earliest", "latest"])
async def test_out_of_range_resets_by_the_policy(reset: str) -> None:
    log = Log(start=1000)

    async def body(c: Consumer[Any, Any]) -> None:
        c.assign([T0])
        c.seek(T0, 5)  # below the log start: the broker answers OFFSET_OUT_OF_RANGE
        got = await _consume(c, 100 if reset == "earliest" else 1, timeout=3)
        if reset == "earliest":
            assert [r.offset for r in got] == list(range(1000, 1100))
        else:
            assert got == [] and (await c.position(T0)) == 1100

    await _run(log, body, auto_offset_reset=reset)
    assert log.list_offsets >= 1


async def test_out_of_range_without_a_policy_raises() -> None:
    log = Log(start=1000)

    async def body(c: Consumer[Any, Any]) -> None:
        c.assign([T0])
        c.seek(T0, 5)
        with pytest.raises(Errors.OffsetOutOfRangeError):
            await _consume(c, 1, timeout=5)

    await _run(log, body, auto_offset_reset="none")


async def test_corrupt_batch_raises_and_keeps_the_position() -> None:
    log = Log()

    async def body(c: Consumer[Any, Any]) -> None:
        c.assign([T0])
        c.seek(T0, 0)
        log.script.append("corrupt")
        with pytest.raises(Errors.CorruptRecordError):
            await _consume(c, 1, timeout=5)
        assert (await c.position(T0)) == 0
        got = await _consume(c, 100)  # the broker serves good data again: nothing was skipped
        assert [r.offset for r in got] == list(range(100))

    await _run(log, body)


async def test_not_leader_refreshes_metadata_and_goes_on() -> None:
    log = Log()

    async def body(c: Consumer[Any, Any]) -> None:
        c.assign([T0])
        c.seek(T0, 0)
        got = await _consume(c, 10)
        before = log.metadata_requests
        log.script.append({T0: NOT_LEADER})
        got += await _consume(c, 100 - len(got))
        assert [r.offset for r in got] == list(range(100))
        assert log.metadata_requests > before

    await _run(log, body)


async def test_a_paused_partition_is_not_fetched() -> None:
    log = Log()

    async def body(c: Consumer[Any, Any]) -> None:
        c.assign([T0, T1])
        c.seek(T0, 0)
        c.seek(T1, 0)
        await _consume(c, 1)
        with pytest.raises(Errors.IllegalArgumentError, match="expected TopicPartition"):
            c.pause("t")  # type: ignore[arg-type]
        c.pause([T1])  # Java's form (a collection) as well as aiokafka's (pause(T1))
        n = len(log.fetches)
        got = await _consume(c, 150, timeout=3)
        assert all(r.partition == 0 for r in got[-50:])
        held = await c.position(T1)
        assert held < 100
        # Once paused, T1 leaves the session (forgotten) and is no longer asked for.
        assert TP("t", 1) not in log.session and len(log.fetches) > n
        c.resume([T1])
        rest = await _consume(c, 100 - held)
        assert rest and all(r.partition == 1 for r in rest)

    await _run(log, body)
    await asyncio.sleep(0)

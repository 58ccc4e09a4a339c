"""A BrokerConnection against tiny servers that misbehave: each fault closes the connection with a
clear error, every request in flight fails with it, and nothing hangs."""

from __future__ import annotations

import asyncio
import re
import socket
import struct
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from _net_fakes import FakeBroker, FakeConn

from aiokafka_lite.config import Config
from aiokafka_lite.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError, ProtocolError
from aiokafka_lite.net import BrokerConnection, ConnectionSettings
from aiokafka_lite.protocol import encode_response
from aiokafka_lite.protocol.messages.api_versions import ApiVersion, ApiVersionsResponse
from aiokafka_lite.protocol.messages.metadata import MetadataRequest, MetadataResponse
from aiokafka_lite.protocol.messages.produce import ProduceRequest

N = 3  # requests in flight when the fault hits


async def _connect(fake: FakeBroker, config: Config) -> BrokerConnection:
    conn = BrokerConnection("127.0.0.1", fake.port, ConnectionSettings(config), node_id=1)
    await conn.connect()
    return conn


async def _fire(conn: BrokerConnection, n: int = N) -> list[BaseException | Any]:
    """n concurrent Metadata requests; returns their outcomes (bounded: a hang fails the test)."""
    tasks = [asyncio.ensure_future(conn.send(MetadataRequest(topics=[]), 1)) for _ in range(n)]
    return await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)


def _answer_after(n: int, payload: Callable[[Any], bytes]) -> Any:
    """A handler that waits for ``n`` requests, then writes ``payload(first_header)``."""
    headers: list[Any] = []

    async def handler(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        headers.append(header)
        if len(headers) == n:
            await conn.raw(payload(headers[0]))

    return handler


def _frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


@pytest.mark.parametrize(
    ("payload", "error", "match"),
    [
        (lambda h: b"HTTP/1.1 400 Bad Request\r\n\r\n", ProtocolError, "receive_message_max_bytes"),
        (lambda h: b"\x7f\xff\xff\xff" + b"x" * 64, ProtocolError, "2147483647 bytes"),
        (lambda h: b"\xff\xff\xff\xfe", ProtocolError, "impossible size -2"),
        (
            lambda h: _frame(struct.pack(">i", h.correlation_id + 7) + b"\0" * 16),
            ProtocolError,
            "correlation id",
        ),
        (lambda h: _frame(struct.pack(">i", h.correlation_id) + b"\x01\x02"), ProtocolError, "cannot decode"),
        (
            lambda h: _frame(b"\x01\x02\x03\x04\x05\x06\x07\x08")[:9],
            KafkaConnectionError,
            "unfinished response",
        ),
    ],
    ids=[
        "http-garbage",
        "2GB-prefix",
        "negative-size",
        "wrong-correlation-id",
        "undecodable-body",
        "truncated-then-close",
    ],
)
async def test_bad_response_closes_connection(
    make_config: Callable[..., Config], payload: Callable[[Any], bytes], error: type, match: str
) -> None:
    truncated = match == "unfinished response"
    headers: list[Any] = []

    async def on_request(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        headers.append(header)
        if len(headers) == N:
            await conn.raw(payload(headers[0]))
            if truncated:
                conn.writer.close()

    async with FakeBroker(on_request) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap))
        tracemalloc.start()
        try:
            results = await _fire(conn)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 4 * 1024 * 1024  # a 2 GB length prefix allocated nothing of that size
    assert conn.closed
    assert all(isinstance(r, error) for r in results), results
    assert all(match in str(r) for r in results), results
    assert isinstance(conn.close_reason, error)
    with pytest.raises(error):
        await conn.send(MetadataRequest(topics=[]), 1)


async def test_unsolicited_response(make_config: Callable[..., Config]) -> None:
    async with FakeBroker(_answer_after(1, lambda h: b"")) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap))
        fake._conns[0].writer.write(_frame(struct.pack(">i", 99) + b"\0\0"))
        for _ in range(50):
            if conn.closed:
                break
            await asyncio.sleep(0.01)
    assert isinstance(conn.close_reason, ProtocolError)
    assert "no request waiting" in str(conn.close_reason)


async def test_server_never_answers_request_timeout(make_config: Callable[..., Config]) -> None:
    async def silent(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        pass

    async with FakeBroker(silent) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap, request_timeout_ms=300))
        start = time.monotonic()
        results = await _fire(conn)
        elapsed = time.monotonic() - start
    assert 0.25 < elapsed < 2.0
    assert isinstance(results[0], KafkaTimeoutError)
    assert "no response within 300 ms" in str(results[0])
    assert all(isinstance(r, KafkaConnectionError) and "timed out" in str(r) for r in results[1:]), results
    assert conn.closed


async def test_per_request_timeout_override(make_config: Callable[..., Config]) -> None:
    async def silent(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        pass

    async with FakeBroker(silent) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap, request_timeout_ms=30000))
        start = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match="within 150 ms") as info:
            await asyncio.wait_for(conn.send(MetadataRequest(topics=[]), 1, timeout_ms=150), 5)
        assert "request_timeout_ms" not in str(info.value)  # that setting (30 s) did not apply
        assert time.monotonic() - start < 1.5


async def test_server_vanishes_mid_request(make_config: Callable[..., Config]) -> None:
    seen: list[int] = []

    async def vanish(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        seen.append(header.correlation_id)
        if len(seen) == N:
            conn.abort()

    async with FakeBroker(vanish) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap))
        results = await _fire(conn)
    assert all(isinstance(r, KafkaConnectionError) for r in results), results
    assert all("Metadata v1 request" in str(r) for r in results)
    assert conn.closed


async def test_close_fails_requests_and_slot_waiters(make_config: Callable[..., Config]) -> None:
    async def silent(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        pass

    async with FakeBroker(silent) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap, max_in_flight_requests_per_connection=2))
        tasks = [asyncio.ensure_future(conn.send(MetadataRequest(topics=[]), 1)) for _ in range(5)]
        await asyncio.sleep(0.05)
        assert conn.in_flight == 2  # three wait for a slot
        conn.close()
        results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)
    assert all(isinstance(r, KafkaConnectionError) for r in results), results


async def test_pipelining_server_sees_all_before_answering(make_config: Callable[..., Config]) -> None:
    """The server answers nothing until it has read 4 requests: only a pipelining client finishes."""
    pending: list[Any] = []

    async def batch(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        pending.append(header)
        if len(pending) == 4:
            for h in pending:
                await conn.reply(h, MetadataResponse(brokers=[], topics=[], controller_id=len(pending)))

    async with FakeBroker(batch) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap, request_timeout_ms=2000))
        results = await _fire(conn, 4)
    assert all(isinstance(r, MetadataResponse) for r in results), results


async def test_max_in_flight_is_respected(make_config: Callable[..., Config]) -> None:
    unanswered: list[Any] = []
    peak = 0

    async def slow(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        nonlocal peak
        unanswered.append(header)
        peak = max(peak, len(unanswered))
        await asyncio.sleep(0.01)
        await conn.reply(unanswered.pop(0), MetadataResponse(brokers=[], topics=[]))

    async with FakeBroker(slow) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap, max_in_flight_requests_per_connection=3))
        results = await _fire(conn, 12)
    assert all(isinstance(r, MetadataResponse) for r in results), results
    assert peak <= 3


async def test_acks0_expects_no_response(make_config: Callable[..., Config]) -> None:
    async def produce_is_silent(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        if header.request_api_key == 3:
            await conn.reply(header, MetadataResponse(brokers=[], topics=[]))

    async with FakeBroker(produce_is_silent) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap))
        assert await conn.send(ProduceRequest(acks=0, timeout_ms=1000), 3, expect_response=False) is None
        response = await asyncio.wait_for(conn.send(MetadataRequest(topics=[]), 1), 5)
    assert isinstance(response, MetadataResponse)
    assert [k for k, _, _ in fake.requests] == [18, 0, 3]


async def test_throttle_delays_next_send(make_config: Callable[..., Config]) -> None:
    async def throttling(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        await conn.reply(header, MetadataResponse(throttle_time_ms=300, brokers=[], topics=[]))

    async with FakeBroker(throttling) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap))
        await conn.send(MetadataRequest(topics=[]), 3)
        assert conn.last_throttle_ms == 300
        start = time.monotonic()
        await conn.send(MetadataRequest(topics=[]), 3)
        assert time.monotonic() - start >= 0.28


async def _kafka_style_refusal(conn: FakeConn, header: Any) -> None:
    """What Kafka does with a too-new ApiVersions: a v0 body, UNSUPPORTED_VERSION, its own range."""
    if header.request_api_version > 2:
        keys = [ApiVersion(api_key=18, min_version=0, max_version=2)]
        await conn.raw(
            encode_response(ApiVersionsResponse(error_code=35, api_keys=keys), 0, header.correlation_id)
        )
    else:
        keys = [
            ApiVersion(api_key=18, min_version=0, max_version=2),
            ApiVersion(api_key=3, min_version=0, max_version=7),
        ]
        await conn.reply(header, ApiVersionsResponse(api_keys=keys))


async def _rdkafka_mock_style_refusal(conn: FakeConn, header: Any) -> None:
    """librdkafka's mock: error 35 in a body that parses at no version."""
    if header.request_api_version > 0:
        await conn.raw(
            _frame(struct.pack(">ih", header.correlation_id, 35) + bytes.fromhex("01001200000002000000"))
        )
    else:
        keys = [
            ApiVersion(api_key=18, min_version=0, max_version=0),
            ApiVersion(api_key=3, min_version=0, max_version=5),
        ]
        await conn.reply(header, ApiVersionsResponse(api_keys=keys))


@pytest.mark.parametrize(("reply", "expected"), [(_kafka_style_refusal, 2), (_rdkafka_mock_style_refusal, 0)])
async def test_api_versions_fallback(make_config: Callable[..., Config], reply: Any, expected: int) -> None:
    async with FakeBroker(api_versions_reply=reply) as fake:
        conn = await _connect(fake, make_config(fake.bootstrap))
        assert conn.api_versions_max == expected
        assert [v for k, v, _ in fake.requests if k == 18] == [3, expected]
        assert conn.version_for(MetadataRequest) == (7 if expected == 2 else 5)
        conn.close()


async def test_connect_timeout_when_nothing_answers(make_config: Callable[..., Config]) -> None:
    with socket.socket() as listener:  # the kernel accepts into the backlog; nobody reads
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        conn = BrokerConnection(
            "127.0.0.1",
            port,
            ConnectionSettings(make_config(f"127.0.0.1:{port}", socket_connection_setup_timeout_ms=300)),
        )
        start = time.monotonic()
        with pytest.raises(KafkaConnectionError, match="timed out after 300 ms"):
            await conn.connect()
        assert time.monotonic() - start < 2.0
    assert conn.closed


async def test_reconnect_backoff_grows_then_resets(make_config: Callable[..., Config],
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A node that refuses connections is retried after 50, 100, 200, 400, 400 ms (+-20 % jitter);
    once it accepts again, the next request succeeds and the backoff is forgotten. The waits the pool
    schedules are checked both ways; the attempts' wall-clock gaps only from below (never early): a
    loaded machine may run a timer late, which says nothing of the backoff."""
    from aiokafka_lite.net import KafkaClient

    async with FakeBroker() as node, FakeBroker() as boot:
        boot.advertise = node.advertise = [(1, "127.0.0.1", node.port)]
        config = make_config(boot.bootstrap, reconnect_backoff_ms=50, reconnect_backoff_max_ms=400)
        async with KafkaClient(config) as client:
            node.refuse = True
            expected = [0.05, 0.1, 0.2, 0.4, 0.4]
            first = len(node.accepted)
            with caplog.at_level("DEBUG", logger="aiokafka_lite.net"):
                # Until the attempts the check needs were made (a loaded machine makes fewer per second).
                deadline = time.monotonic() + 60
                while len(node.accepted) - first < len(expected) + 1:
                    assert time.monotonic() < deadline, node.accepted[first:]
                    with pytest.raises(KafkaConnectionError, match="node 1"):
                        await asyncio.wait_for(client.send(1, MetadataRequest(topics=[])), 5)
            scheduled = [int(m.group(1)) / 1000 for r in caplog.records
                         if (m := re.match(r"node 1 failed .*; next attempt in (\d+) ms$", r.getMessage()))]
            gaps = [b - a for a, b in zip(node.accepted[first:], node.accepted[first + 1:], strict=False)]
            assert len(gaps) >= len(expected) - 1, gaps
            assert len(scheduled) >= len(expected), scheduled
            for delay, want in zip(scheduled, expected, strict=False):
                assert want * 0.8 - 0.001 <= delay <= want * 1.2 + 0.001, (scheduled, expected)
            for gap, want in zip(gaps, expected, strict=False):
                assert want * 0.8 - 0.005 <= gap, (gaps, expected)
            assert client.connection_delay(1) > 0
            node.refuse = False
            response = await asyncio.wait_for(client.send(1, MetadataRequest(topics=[])), 5)
            assert isinstance(response, MetadataResponse)
            assert client.is_ready(1) and client.connection_delay(1) == 0


async def test_a_silent_handshake_names_the_setup_timeout(make_config: Callable[..., Config],
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """ApiVersions (and SASL) run under socket_connection_setup_timeout_ms: their timeout says so, and
    never names request_timeout_ms, which did not apply."""
    async def never(conn: FakeConn, header: Any) -> None:
        pass

    async with FakeBroker(api_versions_reply=never) as fake:
        config = make_config(fake.bootstrap, socket_connection_setup_timeout_ms=300, request_timeout_ms=30000)
        conn = BrokerConnection("127.0.0.1", fake.port, ConnectionSettings(config), node_id=1)
        with caplog.at_level("WARNING", logger="aiokafka_lite"), pytest.raises(KafkaError) as info:
            await asyncio.wait_for(conn.connect(), 5)
    said = str(info.value) + " ".join(r.getMessage() for r in caplog.records)
    assert "socket_connection_setup_timeout_ms" in said, said
    assert "request_timeout_ms" not in said, said

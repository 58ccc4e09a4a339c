"""Rebootstrap (KIP-899, KIP-1102): when the known brokers are gone, go back to ``bootstrap_servers``.

The bootstrap address is a small loopback TCP forwarder the test points at one cluster and then at
another, the way a DNS name is moved to a new cluster. librdkafka's mock cluster A is stopped (every
broker replaced) and mock cluster B, with the same topic, takes over: producer and consumer carry on.

REBOOTSTRAP_REQUIRED is a Metadata v13 top-level error; the mock serves Metadata up to v12 and its
handler drops injected Metadata errors (rdkafka_mock_handlers.c, rd_kafka_mock_handle_Metadata:
"The returned err code is not propagated into the response body"), so that one case is answered by
a scripted broker (tests/net/_net_fakes.py) over real TCP.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _net_fakes import FakeBroker, FakeConn

from aiokafka_lite.config import COMMON, CONSUMER, Config
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.errors import KafkaConnectionError, RebootstrapRequiredError, for_code
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.producer import Producer
from aiokafka_lite.protocol.messages.metadata import MetadataResponse
from aiokafka_lite.structs import TopicPartition as TP

# The mock cluster's flexible Metadata answers carry a stray trailing byte; v8 is plain.
CAPS = {"Metadata": 8}
TOPIC = "moving"
FAST = {"reconnect_backoff_ms": 20, "reconnect_backoff_max_ms": 200, "retry_backoff_ms": 50,
        "request_timeout_ms": 3000, "socket_connection_setup_timeout_ms": 1000}


class Forwarder:
    """A loopback TCP forwarder whose target can be changed: the stand-in for a moved DNS name."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:  # last: since CPython 3.12.1 it waits for every open connection
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.ensure_future(self._pipe(src, dst))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            dst.close()


@contextlib.asynccontextmanager
async def forwarder(target: tuple[str, int]) -> AsyncIterator[Forwarder]:
    fwd = Forwarder(target)
    await fwd.start()
    try:
        yield fwd
    finally:
        await fwd.close()


def test_rebootstrap_required_is_classified() -> None:
    cls = for_code(129)
    assert cls is RebootstrapRequiredError and cls.rebootstrap and not cls.retriable
    assert not for_code(6).rebootstrap


async def test_all_brokers_replaced_producer_and_consumer_carry_on(mock_cluster: Any) -> None:
    a, b = mock_cluster(3), mock_cluster(3)
    for mc in (a, b):
        mc.create_topic(TOPIC, 2, 3)
    async with forwarder(a.broker_address(1)) as fwd:
        settings = {"bootstrap_servers": fwd.bootstrap, **FAST}
        producer = Producer(api_version_caps=CAPS, acks="all", linger_ms=0, **settings)
        cclient = KafkaClient(Config(CONSUMER, {**settings, "auto_offset_reset": "earliest"}),
                              api_version_caps=CAPS)
        await cclient.start()
        consumer = Consumer(client=cclient, auto_offset_reset="earliest", fetch_max_wait_ms=100,
                            **settings)
        await producer.start()
        await consumer.start()
        try:
            consumer.assign([TP(TOPIC, 0), TP(TOPIC, 1)])
            mirror = Producer(api_version_caps=CAPS, acks="all", linger_ms=0,
                              **{**settings, "bootstrap_servers": b.bootstrap})
            await mirror.start()
            try:  # B mirrors A, so that offsets line up as in a real cluster migration
                for i in range(20):
                    await producer.send_and_wait(TOPIC, b"a%d" % i, partition=i % 2)
                    await mirror.send_and_wait(TOPIC, b"a%d" % i, partition=i % 2)
            finally:
                await mirror.stop()
            got: list[bytes] = []
            while len(got) < 20:
                for recs in (await consumer.poll(timeout_ms=1000)).values():
                    got += [r.value for r in recs]
            old = {(x.host, x.port) for x in cclient.cluster.brokers()}

            fwd.target = b.broker_address(2)  # the name now leads to cluster B
            await a.astop()  # every broker of cluster A is gone
            t0 = time.monotonic()
            await asyncio.wait_for(producer.send_and_wait(TOPIC, b"b0", partition=0), 20)
            produce_s = time.monotonic() - t0
            for i in range(1, 20):
                await producer.send_and_wait(TOPIC, b"b%d" % i, partition=i % 2)
            got_b: list[bytes] = []
            deadline = time.monotonic() + 20
            while len(got_b) < 20 and time.monotonic() < deadline:
                for recs in (await consumer.poll(timeout_ms=500)).values():
                    got_b += [r.value for r in recs]
            consume_s = time.monotonic() - t0
            assert sorted(got_b) == sorted(b"b%d" % i for i in range(20))  # nothing lost or repeated
            new = {(x.host, x.port) for x in cclient.cluster.brokers()}
            assert new == {b.broker_address(n) for n in (1, 2, 3)} and not new & old
            assert producer._client.rebootstraps >= 1 and cclient.rebootstraps >= 1
            print(f"rebootstrap: first produce on B after {produce_s * 1000:.0f} ms, "
                  f"all 20 consumed after {consume_s * 1000:.0f} ms")
        finally:
            await consumer.stop()
            await cclient.close()
            await producer.stop()


async def test_strategy_none_stays_with_the_known_brokers(mock_cluster: Any) -> None:
    a, b = mock_cluster(2), mock_cluster(2)
    async with forwarder(a.broker_address(1)) as fwd:
        config = Config(COMMON, {"bootstrap_servers": fwd.bootstrap, "metadata_recovery_strategy": "none",
                                 **FAST})
        async with KafkaClient(config, api_version_caps=CAPS) as client:
            old = client.cluster.brokers()
            fwd.target = b.broker_address(1)
            await a.astop()
            for _ in range(3):
                with pytest.raises(KafkaConnectionError):
                    await asyncio.wait_for(client.refresh_metadata(), 10)
            assert client.cluster.brokers() == old and client.rebootstraps == 0


async def test_rebootstrap_after_trigger_when_brokers_accept_but_never_answer(mock_cluster: Any) -> None:
    """KIP-1102: the known brokers still accept connections (so KIP-899's 'none reachable' never
    fires) but no metadata comes back; after the trigger time the client rebootstraps."""
    a, b = mock_cluster(2), mock_cluster(2)
    async with forwarder(a.broker_address(1)) as fwd:
        settings = {**FAST, "request_timeout_ms": 400, "metadata_recovery_rebootstrap_trigger_ms": 1500}
        config = Config(COMMON, {"bootstrap_servers": fwd.bootstrap, **settings})
        async with KafkaClient(config, api_version_caps=CAPS) as client:
            fwd.target = b.broker_address(1)
            for broker in (1, 2):  # cluster A connects and handshakes, but Metadata never answers
                a.push_request_error_rtts(broker, 3, [(0, 60000)] * 30)
            t0 = time.monotonic()
            while time.monotonic() - t0 < 15:
                with contextlib.suppress(KafkaConnectionError, asyncio.TimeoutError):
                    await asyncio.wait_for(client.refresh_metadata(), 5)
                    if client.rebootstraps:
                        break
            elapsed = time.monotonic() - t0
            assert client.rebootstraps == 1
            assert {(x.host, x.port) for x in client.cluster.brokers()} == {b.broker_address(1),
                                                                            b.broker_address(2)}
            assert elapsed >= 1.0  # not before the trigger: cluster A was reachable all along


async def test_rebootstrap_required_answer_moves_to_the_new_cluster() -> None:
    """A broker answering REBOOTSTRAP_REQUIRED (Metadata v13) sends the client back to bootstrap,
    even though that broker is reachable and answering."""
    say_rebootstrap = False

    async def old_cluster(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        if header.request_api_key == 3:
            response = old.metadata_response()
            if say_rebootstrap:
                response = MetadataResponse(throttle_time_ms=0, brokers=response.brokers, topics=[],
                                            cluster_id="old", controller_id=1, error_code=129)
            await conn.reply(header, response)

    versions = {18: (0, 3), 3: (0, 13)}
    async with FakeBroker(old_cluster, versions=versions) as old, FakeBroker(versions=versions) as new:
        new.advertise = [(7, "127.0.0.1", new.port)]
        async with forwarder(("127.0.0.1", old.port)) as fwd:
            config = Config(COMMON, {"bootstrap_servers": fwd.bootstrap, **FAST})
            async with KafkaClient(config) as client:
                assert {x.node_id for x in client.cluster.brokers()} == {1}
                await client.refresh_metadata()  # from node 1 (old), not through the forwarder
                assert client.rebootstraps == 0
                fwd.target = ("127.0.0.1", new.port)
                say_rebootstrap = True
                await client.refresh_metadata()
                assert {(x.node_id, x.port) for x in client.cluster.brokers()} == {(7, new.port)}
                assert client.rebootstraps == 1 and client.cluster.cluster_id == "fake"

"""KafkaClient against the real brokers (Tansu and noida-db): bootstrap, metadata, pipelining,
version negotiation, coalescing, idle close, coordinators."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from typing import Any

import pytest
from _net_fakes import FakeBroker, FakeConn

from aiokafka_lite.config import Config
from aiokafka_lite.embedded import EmbeddedBroker, free_port
from aiokafka_lite.errors import (
    ClientClosedError,
    ConsumerStoppedError,
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    NodeNotReadyError,
    UnsupportedVersionError,
)
from aiokafka_lite.net import ClusterMetadata, KafkaClient
from aiokafka_lite.protocol.messages.create_partitions import CreatePartitionsRequest
from aiokafka_lite.protocol.messages.metadata import MetadataRequest, MetadataResponse
from aiokafka_lite.protocol.messages.produce import ProduceRequest
from aiokafka_lite.structs import TopicPartition


def _node(client: KafkaClient) -> int:
    return next(iter(client.cluster.brokers())).node_id


async def test_bootstrap_and_metadata(broker: EmbeddedBroker, make_config: Callable[..., Config]) -> None:
    async with KafkaClient(make_config(broker.bootstrap)) as client:
        cluster = client.cluster
        assert cluster.version == 1
        (info,) = cluster.brokers()
        assert (info.host, info.port) == (broker.host, broker.port)
        assert cluster.controller_id == info.node_id
        assert cluster.cluster_id
        assert cluster.broker(info.node_id) == info
        assert client.least_loaded_node() == info.node_id


async def test_bootstrap_tries_each_server_in_turn(
    broker: EmbeddedBroker, make_config: Callable[..., Config]
) -> None:
    dead = f"127.0.0.1:{free_port()}"
    async with KafkaClient(make_config(f"{dead},{broker.bootstrap}")) as client:
        assert len(client.cluster.brokers()) == 1


async def test_unreachable_bootstrap_names_servers(make_config: Callable[..., Config]) -> None:
    servers = [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]
    client = KafkaClient(make_config(",".join(servers), socket_connection_setup_timeout_ms=500))
    start = time.monotonic()
    with pytest.raises(KafkaConnectionError) as info:
        await client.start()
    assert time.monotonic() - start < 1.5
    for server in servers:
        assert server in str(info.value)
    await client.close()


async def test_wait_for_topic_auto_created(
    broker: EmbeddedBroker, make_config: Callable[..., Config], new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    async with KafkaClient(make_config(broker.bootstrap), allow_auto_create_topics=True) as client:
        partitions = await client.wait_for_topic(topic, 10000)
        assert partitions and partitions == client.cluster.partitions_for(topic)
        tp = TopicPartition(topic, min(partitions))
        leader = client.cluster.leader_for(tp)
        assert leader == _node(client)
        info = client.cluster.partition_info(tp)
        assert info is not None and info.leader == leader and leader in info.replicas
        assert tp in client.cluster.partitions_for_broker(leader)
        assert topic in client.cluster.topics() and topic in client.topics
        assert client.cluster.available_partitions_for(topic) == partitions


async def test_wait_for_topic_timeout_names_topic(
    broker: EmbeddedBroker, make_config: Callable[..., Config], new_topic: Callable[..., str]
) -> None:
    topic = new_topic("missing")
    async with KafkaClient(make_config(broker.bootstrap), allow_auto_create_topics=False) as client:
        start = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match=topic):
            await client.wait_for_topic(topic, 400)
        assert time.monotonic() - start < 3
        assert client.cluster.partitions_for(topic) is None


async def test_pipelining_several_requests_in_flight(
    broker: EmbeddedBroker, make_config: Callable[..., Config]
) -> None:
    """Eight requests are written before any answer arrives, and they complete in send order."""
    async with KafkaClient(make_config(broker.bootstrap, max_in_flight_requests_per_connection=8)) as client:
        node = _node(client)
        await client.ready(node)
        conn = client.connection(node)
        assert conn is not None
        done: list[int] = []
        tasks = []
        for i in range(8):
            task = asyncio.ensure_future(client.send(node, MetadataRequest(topics=[])))
            task.add_done_callback(functools.partial(lambda i, _t: done.append(i), i))
            tasks.append(task)
        await asyncio.sleep(0)  # every task has written its request; no I/O has been read yet
        assert conn.in_flight == 8
        responses = await asyncio.wait_for(asyncio.gather(*tasks), 10)
        assert done == list(range(8))
        assert all(isinstance(r, MetadataResponse) for r in responses)
        assert conn.in_flight == 0
        assert client.connection(node) is conn  # one connection carried them all


async def test_max_in_flight_caps_pipelining(
    broker: EmbeddedBroker, make_config: Callable[..., Config]
) -> None:
    async with KafkaClient(make_config(broker.bootstrap, max_in_flight_requests_per_connection=2)) as client:
        node = _node(client)
        await client.ready(node)
        tasks = [asyncio.ensure_future(client.send(node, MetadataRequest(topics=[]))) for _ in range(6)]
        await asyncio.sleep(0)
        assert client.in_flight(node) == 2
        await asyncio.wait_for(asyncio.gather(*tasks), 10)


async def test_version_negotiation(broker: EmbeddedBroker, make_config: Callable[..., Config]) -> None:
    async with KafkaClient(make_config(broker.bootstrap)) as client:
        node = _node(client)
        with pytest.raises(NodeNotReadyError):
            client.api_version(node, MetadataRequest)
        await client.ready(node)
        conn = client.connection(node)
        assert conn is not None and conn.api_versions_max == 3
        broker_max = conn.api_versions[MetadataRequest.API_KEY][1]
        assert client.api_version(node, MetadataRequest) == min(broker_max, MetadataRequest.MAX_VERSION)
        assert client.api_version(node, MetadataRequest, max_version=1) == 1
        old = await client.send(node, MetadataRequest(topics=[]), max_version=1)
        assert old.cluster_id is None  # v1 has no cluster id; the default version does
        new = await client.send(node, MetadataRequest(topics=[]))
        assert new.cluster_id == client.cluster.cluster_id
    async with KafkaClient(make_config(broker.bootstrap), api_version_caps={"Metadata": 4}) as capped:
        node = _node(capped)
        await capped.ready(node)
        assert capped.api_version(node, MetadataRequest) == 4


async def test_unsupported_api(make_config: Callable[..., Config], tansu: EmbeddedBroker) -> None:
    """Tansu does not offer CreatePartitions: the error says so instead of sending it."""
    async with KafkaClient(make_config(tansu.bootstrap)) as client:
        node = _node(client)
        await client.ready(node)
        with pytest.raises(UnsupportedVersionError, match="CreatePartitions"):
            client.api_version(node, CreatePartitionsRequest)
        with pytest.raises(UnsupportedVersionError, match="CreatePartitions"):
            await client.send(node, CreatePartitionsRequest())


async def test_coalesced_refresh(
    broker: EmbeddedBroker, make_config: Callable[..., Config], new_topic: Callable[..., str]
) -> None:
    async with KafkaClient(make_config(broker.bootstrap)) as client:
        before = client.cluster.version
        results = await asyncio.gather(*[client.refresh_metadata() for _ in range(10)])
        assert all(r is client.cluster for r in results)
        assert client.cluster.version == before + 1  # ten callers, one Metadata request
        futures = {id(client.request_metadata_update()) for _ in range(5)}
        assert len(futures) == 1
        await client.request_metadata_update()
        assert client.cluster.version == before + 2
        # A refresh that needs a topic the running update may not ask for gets one that does.
        first = asyncio.ensure_future(client.refresh_metadata())
        for _ in range(3):
            await asyncio.sleep(0)
        topic = new_topic()
        await asyncio.gather(first, client.refresh_metadata([topic]))
        assert before + 3 <= client.cluster.version <= before + 4
        assert topic in client.topics
        assert client.cluster.topic_error(topic) == 3  # UNKNOWN_TOPIC_OR_PARTITION: it was asked for


async def test_metadata_listener_and_periodic_refresh(
    broker: EmbeddedBroker, make_config: Callable[..., Config]
) -> None:
    seen: list[int] = []

    def listener(cluster: ClusterMetadata) -> None:
        seen.append(cluster.version)

    def broken(cluster: ClusterMetadata) -> None:
        raise RuntimeError("listener bug")

    async with KafkaClient(
        make_config(broker.bootstrap, metadata_max_age_ms=200, retry_backoff_ms=50)
    ) as client:
        client.add_metadata_listener(broken)
        client.add_metadata_listener(listener)
        await asyncio.sleep(0.7)
        assert len(seen) >= 2  # refreshed on its own, despite the failing listener
        assert seen == sorted(seen)
        client.remove_metadata_listener(listener)


async def test_idle_connection_closes_and_reconnects(
    broker: EmbeddedBroker, make_config: Callable[..., Config]
) -> None:
    # 300 ms of margin either side: a loaded 2-core CI machine once woke the test 100 ms late.
    async with KafkaClient(make_config(broker.bootstrap, connections_max_idle_ms=900)) as client:
        node = _node(client)
        await client.send(node, MetadataRequest(topics=[]))
        conn = client.connection(node)
        assert conn is not None
        await asyncio.sleep(0.6)
        await client.send(node, MetadataRequest(topics=[]))  # activity postpones the idle close
        await asyncio.sleep(0.6)
        assert not conn.closed
        await asyncio.sleep(0.9)
        assert conn.closed and conn.close_reason is None
        assert not client.is_ready(node) and client.connection_delay(node) == 0  # not a failure
        await client.send(node, MetadataRequest(topics=[]))
        assert client.connection(node) is not conn


async def test_acks0_produce_gets_no_response(
    broker: EmbeddedBroker, make_config: Callable[..., Config]
) -> None:
    """An acks=0 Produce is answered by nothing; the next request on the connection still matches."""
    async with KafkaClient(make_config(broker.bootstrap)) as client:
        node = _node(client)
        assert await client.send(node, ProduceRequest(acks=0, timeout_ms=1000), expect_response=False) is None
        response = await asyncio.wait_for(client.send(node, MetadataRequest(topics=[])), 5)
        assert isinstance(response, MetadataResponse)


async def test_find_coordinator(broker: EmbeddedBroker, make_config: Callable[..., Config]) -> None:
    async with KafkaClient(make_config(broker.bootstrap)) as client:
        node = await client.find_coordinator("some-group")
        assert client.cluster.broker(node) is not None
        await client.send(node, MetadataRequest(topics=[]))


async def test_broken_connection_fails_request_and_reconnects(
    broker: EmbeddedBroker, make_config: Callable[..., Config]
) -> None:
    async with KafkaClient(make_config(broker.bootstrap, reconnect_backoff_ms=10)) as client:
        node = _node(client)
        await client.ready(node)
        conn = client.connection(node)
        assert conn is not None
        pending = asyncio.ensure_future(client.send(node, MetadataRequest(topics=[])))
        await asyncio.sleep(0)
        conn.connection_lost(ConnectionResetError(104, "reset by test"))
        with pytest.raises(KafkaConnectionError, match="reset by test"):
            await pending
        assert client.cluster.need_update  # a broken connection marks metadata stale
        response = await client.send(node, MetadataRequest(topics=[]))
        assert isinstance(response, MetadataResponse)
        assert client.connection(node) is not conn


async def test_lifecycle_errors(broker: EmbeddedBroker, make_config: Callable[..., Config]) -> None:
    client = KafkaClient(make_config(broker.bootstrap))
    with pytest.raises(IllegalStateError, match="start"):
        await client.send(1, MetadataRequest(topics=[]))
    await client.start()
    await client.close()
    with pytest.raises(IllegalStateError, match="closed"):
        await client.refresh_metadata()
    with pytest.raises(IllegalStateError):
        await client.start()


class _Bug(BaseException):
    """Not an Exception: escapes the metadata loop's handler and ends its task, as a bug there would."""


async def test_a_dead_metadata_task_fails_the_refresh_waiting_on_it(
    tansu: EmbeddedBroker, make_config: Callable[..., Config]
) -> None:
    """The metadata task dying during an update fails that update's waiters with the client's error (they
    waited forever: only the next update's future was failed), and every later call raises it too; a
    later update asked for fails at once (none will run)."""

    def bug(cluster: ClusterMetadata) -> None:
        raise _Bug()

    async with KafkaClient(make_config(tansu.bootstrap)) as client:
        client.add_metadata_listener(bug)
        with pytest.raises(KafkaError, match="metadata task died"):
            await asyncio.wait_for(client.refresh_metadata(), 10)  # the bound only stops a hang
        assert isinstance(client.unusable_error(), KafkaError)
        with pytest.raises(KafkaError, match="metadata task died"):
            await client.refresh_metadata()
        update = client.request_metadata_update()  # no task will run it: failed at once, as when closed
        assert update.done() and isinstance(update.exception(), KafkaError)


async def test_close_fails_the_requests_in_flight(make_config: Callable[..., Config]) -> None:
    """A request written and not yet answered when the client closes fails with ClientClosedError, not a
    retriable KafkaConnectionError that a retry loop would wait out (a server that answers the bootstrap
    Metadata and then holds every request keeps it in flight)."""
    hold = False
    held = asyncio.Event()

    async def on_request(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        if header.request_api_key == 3 and not hold:
            await conn.reply(header, fake.metadata_response())
        elif hold:
            held.set()

    async with FakeBroker(on_request) as fake:
        client = KafkaClient(make_config(fake.bootstrap))
        await client.start()
        node = _node(client)
        hold = True
        pending = asyncio.ensure_future(client.send(node, MetadataRequest(topics=[])))
        await asyncio.wait_for(held.wait(), 5)  # the server has it and will never answer
        assert not pending.done()
        await client.close()
        with pytest.raises(ClientClosedError):
            await pending


async def test_close_wakes_metadata_waiters_with_the_owners_error(make_config: Callable[..., Config]) -> None:
    """A metadata refresh waiting when the client closes raises the owner's "stopped" error (it used to
    raise CancelledError, taken from the refresh task close() cancels, in a caller nobody cancelled)."""
    hold = False
    held = asyncio.Event()

    async def on_request(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        if header.request_api_key == 3 and not hold:
            await conn.reply(header, fake.metadata_response())
        elif hold:
            held.set()

    async with FakeBroker(on_request) as fake:
        client = KafkaClient(make_config(fake.bootstrap), closed_error=ConsumerStoppedError)
        await client.start()
        hold = True
        pending = asyncio.ensure_future(client.refresh_metadata(["t"]))
        await asyncio.wait_for(held.wait(), 5)
        await client.close()
        with pytest.raises(ConsumerStoppedError):
            await pending
        with pytest.raises(ConsumerStoppedError):
            await client.refresh_metadata()


async def test_socket_buffers_are_the_os_s_unless_set(
    broker: EmbeddedBroker, make_config: Callable[..., Config], monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default no SO_SNDBUF/SO_RCVBUF is set, so Linux grows both with the connection's throughput
    (a set SO_RCVBUF is never grown: Java's 64 KiB woke a consumer every ~110 KiB, docs/performance.md).
    Set explicitly, they reach the socket (the kernel reports twice the value, socket(7))."""
    import socket

    from aiokafka_lite.net import sockets

    chosen: list[tuple[int, int]] = []

    class Recording(socket.socket):
        def setsockopt(self, level: int, option: int, value: Any, *rest: Any) -> None:
            if level == socket.SOL_SOCKET and option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
                chosen.append((option, value))
            super().setsockopt(level, option, value, *rest)

    monkeypatch.setattr(sockets.socket, "socket", Recording)
    async with KafkaClient(make_config(broker.bootstrap)) as client:
        await client.ready(_node(client))
    assert chosen == []
    async with KafkaClient(make_config(broker.bootstrap, send_buffer_bytes=131072,
                                       receive_buffer_bytes=65536)) as client:
        node = _node(client)
        await client.ready(node)
        conn = client.connection(node)
        assert conn is not None and conn._transport is not None
        sock = conn._transport.get_extra_info("socket")
        assert (sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF),
                sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)) == (262144, 131072)
    assert sorted(set(chosen)) == [(socket.SO_SNDBUF, 131072), (socket.SO_RCVBUF, 65536)]

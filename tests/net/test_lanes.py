"""Connections per request class (net/lanes.py): a request the broker holds on one connection does not
hold up requests of another class to the same broker, and the consumer's group traffic reaches its
coordinator by the broker's own id (no made-up node ids in the cluster metadata)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from _net_fakes import DEFAULT_VERSIONS, FakeBroker, FakeConn

from aiokafka_lite import Admin, Consumer
from aiokafka_lite.config import Config
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.protocol.messages.fetch import FetchRequest
from aiokafka_lite.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from aiokafka_lite.protocol.messages.metadata import MetadataRequest, MetadataResponse
from aiokafka_lite.protocol.messages.produce import ProduceRequest

JOIN_GROUP = 11


async def test_held_join_group_holds_up_nothing_else(make_config: Callable[..., Config]) -> None:
    """The broker holds a JoinGroup (as Kafka does until the rebalance completes) and reads nothing more
    from that connection meanwhile; a Metadata request to the same broker is answered at once."""
    release = asyncio.Event()
    joins: list[FakeConn] = []

    async def on_request(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        if header.request_api_key == 3:
            await conn.reply(header, fake.metadata_response())
        elif header.request_api_key == JOIN_GROUP:
            joins.append(conn)
            await release.wait()  # this connection is read no further until the join completes
            await conn.reply(header, JoinGroupResponse(
                error_code=0, generation_id=1, protocol_type="consumer", protocol_name="range", leader="m",
                member_id="m", members=[]))

    versions = {**DEFAULT_VERSIONS, JOIN_GROUP: (0, 5)}
    async with FakeBroker(on_request, versions=versions) as fake, \
            KafkaClient(make_config(fake.bootstrap)) as client:
        join = asyncio.ensure_future(client.send(1, JoinGroupRequest(
            group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
            protocol_type="consumer", protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")])))
        deadline = time.monotonic() + 5
        while not joins and time.monotonic() < deadline:  # noqa: ASYNC110 (the fake has no event for it)
            await asyncio.sleep(0.01)
        assert joins, "the JoinGroup never reached the broker"
        answer = await asyncio.wait_for(client.send(1, MetadataRequest(topics=[])), 5)
        assert isinstance(answer, MetadataResponse) and not join.done()
        group_conn, plain = client.connection(1, JoinGroupRequest), client.connection(1)
        assert group_conn is not None and plain is not None and group_conn is not plain
        release.set()
        assert (await asyncio.wait_for(join, 5)).member_id == "m"


async def test_each_request_class_its_own_connection(
        broker: EmbeddedBroker, make_config: Callable[..., Config], new_topic: Callable[..., str]) -> None:
    """A consumer in a group: fetches, group requests and metadata each travel on a connection
    of their own to the coordinator, which is known by its real broker id only."""
    topic = new_topic()
    async with Admin(bootstrap_servers=broker.bootstrap) as admin:
        await admin.create_topics([topic])
    async with KafkaClient(make_config(broker.bootstrap)) as plain:
        real = {b.node_id for b in plain.cluster.brokers()}
    # Short timeouts, as the other group tests use: with the defaults, the first join on Tansu took over
    # 20 s here.
    async with Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=new_topic("g"),
                        auto_offset_reset="earliest", heartbeat_interval_ms=300,
                        session_timeout_ms=6000) as c:
        await c.poll(timeout_ms=200)
        deadline = time.monotonic() + 20
        while not c.assignment() and time.monotonic() < deadline:
            await c.poll(timeout_ms=200)
        assert c.assignment()
        client = c._client
        assert {b.node_id for b in client.cluster.brokers()} == real
        node = next(iter(real))
        # The assignment can arrive before the first Fetch (offsets are looked up first): keep polling
        # until each lane has been opened, as CI once caught the fetch lane not yet there.
        classes = (None, FetchRequest, JoinGroupRequest)
        conns = [client.connection(node, cls) for cls in classes]
        while not all(conn is not None for conn in conns) and time.monotonic() < deadline:
            await c.poll(timeout_ms=100)
            conns = [client.connection(node, cls) for cls in classes]
        assert all(conn is not None for conn in conns), conns
        assert len({id(conn) for conn in conns}) == 3
        assert client.connection(node, ProduceRequest) is None  # a consumer never opens one

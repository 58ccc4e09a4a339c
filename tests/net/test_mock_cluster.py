"""KafkaClient on librdkafka's mock cluster: several brokers, leader moves, a broker going down,
and the ApiVersions v3 refusal."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka_lite.config import Config
from aiokafka_lite.errors import KafkaConnectionError
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.protocol.messages.metadata import MetadataRequest, MetadataResponse
from aiokafka_lite.structs import TopicPartition

# The mock's flexible Metadata answers (v9+) carry one byte more than the spec, so stay below them.
CAPS = {"Metadata": 8}


async def test_multi_broker_metadata_and_leaders(
    mock_cluster: Any, make_config: Callable[..., Config]
) -> None:
    mc = mock_cluster(3)
    mc.create_topic("events", partitions=6)
    async with KafkaClient(make_config(mc.bootstrap), api_version_caps=CAPS) as client:
        assert {b.node_id for b in client.cluster.brokers()} == {1, 2, 3}
        assert await client.wait_for_topic("events", 5000) == set(range(6))
        leaders = {client.cluster.leader_for(TopicPartition("events", p)) for p in range(6)}
        assert leaders <= {1, 2, 3} and len(leaders) > 1
        for node_id in (1, 2, 3):
            await client.ready(node_id)
            conn = client.connection(node_id)
            assert conn is not None and conn.api_versions_max == 0  # the mock refuses ApiVersions v3
            response = await client.send(node_id, MetadataRequest(topics=[]))
            assert isinstance(response, MetadataResponse)
        mc.set_leader("events", 0, 3)
        await client.refresh_metadata()
        assert client.cluster.leader_for(TopicPartition("events", 0)) == 3
        assert TopicPartition("events", 0) in client.cluster.partitions_for_broker(3)
        mc.set_coordinator("group", "g1", 2)
        assert await client.find_coordinator("g1") == 2


async def test_broker_down_then_up(mock_cluster: Any, make_config: Callable[..., Config]) -> None:
    mc = mock_cluster(2)
    config = make_config(
        mc.bootstrap,
        reconnect_backoff_ms=20,
        reconnect_backoff_max_ms=100,
        request_timeout_ms=2000,
        socket_connection_setup_timeout_ms=1000,
    )
    async with KafkaClient(config, api_version_caps=CAPS) as client:
        await client.send(2, MetadataRequest(topics=[]))
        mc.set_down(2)
        with pytest.raises(KafkaConnectionError, match="node 2"):
            for _ in range(20):  # the open connection breaks; new ones are refused
                await asyncio.wait_for(client.send(2, MetadataRequest(topics=[])), 5)
                await asyncio.sleep(0.05)
        # node 1 keeps serving, and metadata refreshes through it
        assert isinstance(await client.send_any(MetadataRequest(topics=[])), MetadataResponse)
        await client.refresh_metadata()
        mc.set_up(2)
        for _ in range(50):
            try:
                response = await asyncio.wait_for(client.send(2, MetadataRequest(topics=[])), 5)
                break
            except KafkaConnectionError:
                await asyncio.sleep(0.05)
        assert isinstance(response, MetadataResponse)

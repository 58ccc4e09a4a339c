"""The classic GroupCoordinator against a scripted fake broker (tests/net/_net_fakes.py: a loopback server
answering with our own codecs): join (KIP-394's MEMBER_ID_REQUIRED first), leader assignment, sync,
and the answers that restart a join, one at a time as no real broker gives them on demand."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from aiokafka_lite import errors as Errors
from aiokafka_lite.config import CONSUMER, Config
from aiokafka_lite.consumer.assignors import make_assignors
from aiokafka_lite.consumer.coordinator import GroupCoordinator
from aiokafka_lite.consumer.metrics import ConsumerMetrics
from aiokafka_lite.consumer.subscription import SubscriptionState
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.protocol.messages.find_coordinator import Coordinator, FindCoordinatorResponse
from aiokafka_lite.protocol.messages.join_group import JoinGroupResponse, JoinGroupResponseMember
from aiokafka_lite.protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from aiokafka_lite.protocol.messages.sync_group import SyncGroupResponse
from aiokafka_lite.structs import TopicPartition as TP

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "net"))
from _net_fakes import FakeBroker

METADATA, FIND_COORDINATOR, JOIN_GROUP, SYNC_GROUP = 3, 10, 11, 14
VERSIONS = {18: (0, 3), 3: (0, 9), 10: (0, 4), 11: (0, 7), 14: (0, 5), 12: (0, 4), 13: (0, 4)}


class Group:
    """A one-member group coordinated by the fake broker; ``join_errors`` answer the JoinGroups after the
    KIP-394 round, in order, before one succeeds."""

    def __init__(self, join_errors: list[int]) -> None:
        self.port = 0
        self.join_errors = list(join_errors)
        self.joins: list[Any] = []
        self.generation = 0

    async def __call__(self, conn: Any, header: Any, req: Any, frame: bytes) -> None:
        key = header.request_api_key
        if key == METADATA:
            part = MetadataResponsePartition(error_code=0, partition_index=0, leader_id=1, leader_epoch=0,
                                             replica_nodes=[1], isr_nodes=[1], offline_replicas=[])
            await conn.reply(header, MetadataResponse(
                throttle_time_ms=0,
                brokers=[MetadataResponseBroker(node_id=1, host="127.0.0.1", port=self.port)],
                cluster_id="fake", controller_id=1,
                topics=[MetadataResponseTopic(error_code=0, name="t", is_internal=False, partitions=[part])]))
        elif key == FIND_COORDINATOR:
            await conn.reply(header, FindCoordinatorResponse(  # v4: the coordinators list only
                throttle_time_ms=0, coordinators=[Coordinator(
                    key="g", node_id=1, host="127.0.0.1", port=self.port, error_code=0, error_message=None)]))
        elif key == JOIN_GROUP:
            self.joins.append(req)
            if not req.member_id:  # KIP-394: the broker names the member first
                await conn.reply(header, self._join(Errors.MemberIdRequiredError.errno, "m-1", req))
            elif self.join_errors:
                await conn.reply(header, self._join(self.join_errors.pop(0), req.member_id, req))
            else:
                self.generation += 1
                await conn.reply(header, self._join(0, req.member_id, req))
        elif key == SYNC_GROUP:
            mine = next(a.assignment for a in req.assignments if a.member_id == req.member_id)
            await conn.reply(header, SyncGroupResponse(
                throttle_time_ms=0, error_code=0, protocol_type="consumer", protocol_name=req.protocol_name,
                assignment=mine))

    def _join(self, code: int, member_id: str, req: Any) -> JoinGroupResponse:
        proto = req.protocols[0]
        members = [JoinGroupResponseMember(member_id=member_id, group_instance_id=None,
                                           metadata=proto.metadata)]
        return JoinGroupResponse(
            throttle_time_ms=0, error_code=code, generation_id=self.generation if not code else -1,
            protocol_type="consumer", protocol_name=proto.name, leader=member_id if not code else "",
            skip_assignment=False, member_id=member_id, members=members if not code else [])


async def _join(join_errors: list[int]) -> tuple[GroupCoordinator, SubscriptionState, Group]:
    group = Group(join_errors)
    async with FakeBroker(group, versions=VERSIONS) as fake:
        group.port = fake.port
        cfg = Config(CONSUMER, {"bootstrap_servers": fake.bootstrap, "group_id": "g", "retry_backoff_ms": 10,
                                "partition_assignment_strategy": "range"})
        client = KafkaClient(cfg)
        await client.start()
        try:
            subs = SubscriptionState()
            subs.subscribe(["t"])
            coord = GroupCoordinator(client, subs, cfg, make_assignors(cfg.partition_assignment_strategy),
                                     ConsumerMetrics(), lambda tps: None)
            await coord.membership_round(time.monotonic() + 10)
            return coord, subs, group
        finally:
            await client.close()


async def test_join_as_leader_assigns_and_syncs() -> None:
    coord, subs, group = await _join([])
    assert subs.assigned_partitions() == {TP("t", 0)}
    assert (coord.member_id, coord.generation, coord.leader_id) == ("m-1", 1, "m-1")
    assert [j.member_id for j in group.joins] == ["", "m-1"]  # KIP-394 round, then the real join
    assert group.joins[-1].protocols[0].name == "range"


async def test_answers_that_restart_the_join() -> None:
    coord, subs, group = await _join([Errors.RebalanceInProgressError.errno, Errors.NotCoordinatorError.errno,
                                      Errors.CoordinatorLoadInProgressError.errno])
    assert subs.assigned_partitions() == {TP("t", 0)} and coord.generation == 1
    assert len(group.joins) == 5


async def test_unknown_member_id_starts_over_without_an_id() -> None:
    _coord, subs, group = await _join([Errors.UnknownMemberIdError.errno])
    assert [j.member_id for j in group.joins] == ["", "m-1", "", "m-1"]
    assert subs.assigned_partitions() == {TP("t", 0)}

"""The classic protocol (ClassicProtocol, in its GroupMembership) against a scripted fake broker
(tests/net/_net_fakes.py: a loopback server answering with our own codecs): join (KIP-394's
MEMBER_ID_REQUIRED first), leader assignment, sync, the answers that restart a join, and a commit before
revoking that finds the generation over, one at a time as no real broker gives them on demand. The
member's state (ClassicState) is checked along."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiokafka_lite import errors as Errors
from aiokafka_lite.config import CONSUMER, Config
from aiokafka_lite.consumer.assignors import make_assignors
from aiokafka_lite.consumer.coordinator import ClassicProtocol, ClassicState
from aiokafka_lite.consumer.group_protocol import Assignment
from aiokafka_lite.consumer.membership import GroupMembership
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
from aiokafka_lite.protocol.messages.offset_commit import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from aiokafka_lite.protocol.messages.sync_group import SyncGroupResponse
from aiokafka_lite.structs import OffsetAndMetadata
from aiokafka_lite.structs import TopicPartition as TP

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "net"))
from _net_fakes import FakeBroker

METADATA, OFFSET_COMMIT, FIND_COORDINATOR, JOIN_GROUP, SYNC_GROUP = 3, 8, 10, 11, 14
VERSIONS = {18: (0, 3), 3: (0, 9), 8: (0, 8), 10: (0, 4), 11: (0, 7), 14: (0, 5), 12: (0, 4), 13: (0, 4)}


class Group:
    """A one-member group coordinated by the fake broker; ``join_errors`` answer the JoinGroups after the
    KIP-394 round, in order, before one succeeds."""

    def __init__(self, join_errors: list[int]) -> None:
        self.port = 0
        self.join_errors = list(join_errors)
        self.joins: list[Any] = []
        self.generation = 0
        #: What every OffsetCommit partition is answered with.
        self.commit_error = 0
        #: Every OffsetCommit: (its generation, the error answered, {(topic, partition): offset}).
        self.commits: list[tuple[int, int, dict[tuple[str, int], int]]] = []
        #: Other members the next JoinGroups list (their ids sort before ours: the range assignor serves them
        #: first).
        self.others: list[str] = []
        #: FindCoordinator requests seen; while ``hold_lookups`` is set and not yet released, each waits.
        self.lookups = 0
        self.hold_lookups: asyncio.Event | None = None

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
            self.lookups += 1
            if self.hold_lookups is not None:
                await self.hold_lookups.wait()
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
        elif key == OFFSET_COMMIT:
            self.commits.append((req.generation_id_or_member_epoch, self.commit_error, {
                (t.name, p.partition_index): p.committed_offset for t in req.topics for p in t.partitions}))
            await conn.reply(header, OffsetCommitResponse(throttle_time_ms=0, topics=[
                OffsetCommitResponseTopic(name=t.name, partitions=[
                    OffsetCommitResponsePartition(partition_index=p.partition_index,
                                                  error_code=self.commit_error)
                    for p in t.partitions]) for t in req.topics]))
        elif key == SYNC_GROUP:
            mine = next(a.assignment for a in req.assignments if a.member_id == req.member_id)
            await conn.reply(header, SyncGroupResponse(
                throttle_time_ms=0, error_code=0, protocol_type="consumer", protocol_name=req.protocol_name,
                assignment=mine))

    def _join(self, code: int, member_id: str, req: Any) -> JoinGroupResponse:
        proto = req.protocols[0]
        members = [JoinGroupResponseMember(member_id=m, group_instance_id=None, metadata=proto.metadata)
                   for m in (member_id, *self.others)]
        return JoinGroupResponse(
            throttle_time_ms=0, error_code=code, generation_id=self.generation if not code else -1,
            protocol_type="consumer", protocol_name=proto.name, leader=member_id if not code else "",
            skip_assignment=False, member_id=member_id, members=members if not code else [])


def classic(client: KafkaClient, subs: SubscriptionState, cfg: Config) -> ClassicProtocol:
    """A classic member's protocol, in its membership."""
    membership = GroupMembership(client, subs, cfg, ConsumerMetrics(), lambda tps: None,
                                 lambda m: ClassicProtocol(m, client, subs, cfg,
                                                           make_assignors(cfg.partition_assignment_strategy)))
    assert isinstance(membership.protocol, ClassicProtocol)
    return membership.protocol


async def _join(join_errors: list[int]) -> tuple[ClassicProtocol, SubscriptionState, Group]:
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
            coord = classic(client, subs, cfg)
            assert coord.state is ClassicState.UNJOINED
            await coord.membership_round(time.monotonic() + 10)
            assert coord.state is ClassicState.STABLE and coord.has_assignment()
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


class Listener:
    def __init__(self) -> None:
        self.calls: list[tuple[str, set[TP]]] = []

    def on_partitions_revoked(self, revoked: set[TP]) -> None:
        self.calls.append(("revoked", set(revoked)))

    def on_partitions_lost(self, lost: set[TP]) -> None:
        self.calls.append(("lost", set(lost)))

    def on_partitions_assigned(self, assigned: set[TP]) -> None:
        self.calls.append(("assigned", set(assigned)))


async def stable_member(fake: FakeBroker, listener: Listener,
                        **settings: Any) -> tuple[ClassicProtocol, SubscriptionState, KafkaClient]:
    """A member joined to the fake's group (generation 1, owning t-0) with these settings; the caller
    closes the client."""
    cfg = Config(CONSUMER, {"bootstrap_servers": fake.bootstrap, "group_id": "g", "retry_backoff_ms": 10,
                            "enable_auto_commit": True, **settings})
    client = KafkaClient(cfg)
    await client.start()
    subs = SubscriptionState()
    subs.subscribe(["t"], listener=listener)
    coord = classic(client, subs, cfg)
    await coord.membership_round(time.monotonic() + 10)
    assert subs.assigned_partitions() == {TP("t", 0)} and coord.state is ClassicState.STABLE
    assert coord.generation == 1
    return coord, subs, client


async def test_a_cooperative_revoke_whose_commit_finds_the_generation_over_reports_them_lost() -> None:
    """The one commit-then-revoke path: a cooperative rebalance takes t-0 away, the auto-commit before the
    revoke is answered ILLEGAL_GENERATION (the fenced rule), so t-0 is reported lost, not revoked (its
    new owner may have it already), and the member is UNJOINED, rejoining."""
    group = Group([])
    listener = Listener()
    async with FakeBroker(group, versions=VERSIONS) as fake:
        group.port = fake.port
        coord, subs, client = await stable_member(fake, listener, request_timeout_ms=2000,
                                                  partition_assignment_strategy="cooperative-sticky")
        try:
            subs.seek(TP("t", 0), 5)
            group.commit_error = Errors.IllegalGenerationError.errno
            listener.calls.clear()
            await coord._install(Assignment([]))  # the next generation's assignment lacks t-0
            assert listener.calls == [("lost", {TP("t", 0)}), ("assigned", set())]
            assert subs.assigned_partitions() == set()
            assert coord.state is ClassicState.UNJOINED and coord.rejoin_needed and not coord.has_assignment()
        finally:
            await client.close()


async def test_an_auto_commit_retrying_across_a_lost_generation_commits_nothing_it_gave_up() -> None:
    """The auto-commit obeys commit()'s rule (membership.commit_sync): a partition given up since the poll
    that started it is not committed. Here the auto-commit of t-0 is answered COORDINATOR_LOAD_IN_PROGRESS
    and retries; meanwhile the generation is found over (t-0 lost: no commit, no wait for the commit lock)
    and the member rejoins a generation in which t-0 went to another member. Only then are commits
    answered: the retry must not commit t-0 with the new generation, which the coordinator accepts."""
    group = Group([])
    listener = Listener()
    async with FakeBroker(group, versions=VERSIONS) as fake:
        group.port = fake.port
        coord, subs, client = await stable_member(fake, listener, request_timeout_ms=5000,
                                                  partition_assignment_strategy="range",
                                                  auto_commit_interval_ms=1)
        membership = coord._m
        try:
            subs.seek(TP("t", 0), 5)
            group.commit_error = Errors.CoordinatorLoadInProgressError.errno
            await asyncio.sleep(0.01)  # past auto_commit_interval_ms
            membership.poll()  # starts the auto-commit of t-0 at 5
            task = membership._auto_commit_task
            assert task is not None
            for _ in range(500):
                if group.commits:
                    break
                await asyncio.sleep(0.01)
            assert group.commits and not task.done()
            membership.member_error(Errors.IllegalGenerationError.errno)  # as a heartbeat answer would
            group.others = ["a-other"]
            listener.calls.clear()
            await coord.membership_round(time.monotonic() + 10)
            assert coord.generation == 2 and subs.assigned_partitions() == set()
            assert listener.calls == [("lost", {TP("t", 0)}), ("assigned", set())]
            group.commit_error = 0
            await asyncio.wait_for(asyncio.shield(task), 10)
            accepted = [(gen, offsets) for gen, code, offsets in group.commits if code == 0]
            assert accepted == [], f"the retried auto-commit moved a-other's committed offset: {accepted}"
        finally:
            await membership.close(commit=False, timeout=1)
            await client.close()


async def commit_while_given_up(group: Group, refusal: int, retrying: Callable[[], bool],
                                meanwhile: Callable[[ClassicProtocol, SubscriptionState], Awaitable[None]],
                                hold_lookups: bool = False) -> list[tuple[str, set[TP]]]:
    """A stable member without auto-commit commits t-0 at 5; OffsetCommit is answered ``refusal`` (and
    with ``hold_lookups`` FindCoordinator held) until ``retrying()`` says the retry is under way, then
    ``meanwhile`` gives t-0 up, then commits and lookups are answered. The commit must fail and the broker
    must have accepted none: returns the listener's calls made meanwhile."""
    listener = Listener()
    async with FakeBroker(group, versions=VERSIONS) as fake:
        group.port = fake.port
        coord, subs, client = await stable_member(fake, listener, request_timeout_ms=10000,
                                                  enable_auto_commit=False,
                                                  partition_assignment_strategy="range")
        membership = coord._m
        try:
            group.commit_error = refusal
            group.lookups = 0
            group.hold_lookups = asyncio.Event() if hold_lookups else None
            commit = asyncio.create_task(membership.commit_sync({TP("t", 0): OffsetAndMetadata(5)}, 10))
            for _ in range(500):
                if retrying():
                    break
                await asyncio.sleep(0.01)
            assert retrying() and not commit.done(), "the commit is not retrying"
            listener.calls.clear()
            await meanwhile(coord, subs)
            calls = list(listener.calls)
            group.commit_error = 0
            if group.hold_lookups is not None:
                group.hold_lookups.set()
            (outcome,) = await asyncio.wait_for(asyncio.gather(commit, return_exceptions=True), 10)
            accepted = [(gen, offsets) for gen, code, offsets in group.commits if code == 0]
            assert accepted == [], f"the retry committed t-0, which was given up meanwhile: {accepted}"
            assert isinstance(outcome, Errors.CommitFailedError) and "given up" in str(outcome), outcome
            return calls
        finally:
            await membership.close(commit=False, timeout=1)
            await client.close()


async def test_a_commit_retrying_across_an_eager_revoke_and_assign_back_fails_and_commits_nothing() -> None:
    """The commit rule is "held the whole time", not "assigned now" (membership._still_held). The eager
    protocol revokes everything at every rebalance and may assign a partition straight back: here t-0 is
    revoked and assigned back in generation 2 while a commit() of t-0 at 5 keeps being answered
    COORDINATOR_LOAD_IN_PROGRESS. Its new assignment starts from the offset committed then, so the retry
    must not commit 5 under generation 2 (which the coordinator accepts): it fails instead."""
    group = Group([])

    async def rebalance(coord: ClassicProtocol, subs: SubscriptionState) -> None:
        coord.request_rejoin("a member joined")
        await coord.membership_round(time.monotonic() + 10)
        assert coord.generation == 2 and subs.assigned_partitions() == {TP("t", 0)}

    calls = await commit_while_given_up(group, Errors.CoordinatorLoadInProgressError.errno,
                                        lambda: bool(group.commits), rebalance)
    assert calls == [("revoked", {TP("t", 0)}), ("assigned", {TP("t", 0)})]


async def test_a_partition_given_up_during_the_commits_coordinator_lookup_is_not_committed() -> None:
    """The commit rule is checked after the coordinator lookup, with no await before the identity is
    read (committer.Committer.commit): the lookup's await is when a rebalance is likely. Here the first
    OffsetCommit is answered NOT_COORDINATOR; the retry's FindCoordinator is held by the fake broker while
    the generation is found over and t-0 handed over as lost (as the membership task does after a
    heartbeat answer); then the lookup is answered. The retry must not go out for t-0 (this fake
    accepts any generation; a new one installed meanwhile would be accepted by a real coordinator too)."""
    group = Group([])

    async def fenced(coord: ClassicProtocol, subs: SubscriptionState) -> None:
        coord.member_error(Errors.IllegalGenerationError.errno)
        await coord._m.lose_partitions()
        assert subs.assigned_partitions() == set()

    calls = await commit_while_given_up(group, Errors.NotCoordinatorError.errno, lambda: group.lookups > 0,
                                        fenced, hold_lookups=True)
    assert calls == [("lost", {TP("t", 0)})]

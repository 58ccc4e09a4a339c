"""The Committer on a scripted, sans-I/O coordinator (issue 13: no unit tests for the Committer).

Each request the Committer sends is encoded with the real codecs, and the answer the test scripts for it is
encoded and decoded at the version the Committer chose, so the fields are what a broker would send. The
group membership is a small recording stand-in: the Committer talks to it only through the narrow interface
GroupMembership offers (``ensure_coordinator``, ``commit_identity``, ``coordinator_dead``, ``member_error``,
``request_rejoin``), which is what these tests pin down.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka_lite import errors as Errors
from aiokafka_lite.consumer.committer import Committer
from aiokafka_lite.consumer.metrics import ConsumerMetrics
from aiokafka_lite.protocol import decode_response, encode_request, encode_response
from aiokafka_lite.protocol.messages.offset_commit import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from aiokafka_lite.protocol.messages.offset_fetch import (
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)
from aiokafka_lite.structs import OffsetAndMetadata, TopicPartition

TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)


class FakeCoordinatorClient:
    """Answers each request with the next scripted outcome: a response message or an exception."""

    def __init__(self, versions: dict[str, int]) -> None:
        self.versions = versions
        self.script: deque[Any] = deque()
        self.requests: list[tuple[int, Any, int]] = []

    def is_ready(self, node: int, request_cls: Any = None) -> bool:
        return True

    async def ready(self, node: int, request_cls: Any = None) -> None:
        return None

    def api_version(self, node: int, request_cls: Any, max_version: int | None = None) -> int:
        v = self.versions[request_cls.__name__]
        return v if max_version is None else min(v, max_version)

    async def send(self, node: int, request: Any, *, version: int, timeout_ms: int | None = None) -> Any:
        encode_request(request, version, 1, "unit")  # the request must be valid at this version
        self.requests.append((node, request, version))
        outcome = self.script.popleft()
        if isinstance(outcome, BaseException):
            raise outcome
        frame = encode_response(outcome, version, 7)
        return decode_response(type(request).API_KEY, version, frame[4:])[1]


class Membership:
    """Records what the Committer tells the group membership."""

    def __init__(self) -> None:
        self.coordinator: int | None = 3
        self.identity = (5, "member-a")
        self.group_instance_id: str | None = None
        self.metrics = ConsumerMetrics()
        self.dead: list[BaseException] = []
        self.member_errors: list[int] = []
        self.rejoins: list[str] = []
        #: Runs while a lookup is under way (what the membership task may do during that await).
        self.during_lookup: Callable[[], None] = lambda: None

    async def ensure_coordinator(self, deadline: float) -> int:
        if self.coordinator is None:
            await asyncio.sleep(0)  # a lookup awaits: other tasks run meanwhile
            self.during_lookup()
            self.coordinator = 4  # looked up again: the coordinator moved to node 4
        return self.coordinator

    def commit_identity(self) -> tuple[int, str]:
        return self.identity

    def coordinator_dead(self, reason: BaseException) -> None:
        self.dead.append(reason)
        self.coordinator = None

    def member_error(self, code: int) -> None:
        self.member_errors.append(code)

    def request_rejoin(self, reason: str) -> None:
        self.rejoins.append(reason)


def _commit_answer(*codes: int) -> OffsetCommitResponse:
    return OffsetCommitResponse(topics=[OffsetCommitResponseTopic(name="t", partitions=[
        OffsetCommitResponsePartition(partition_index=i, error_code=c) for i, c in enumerate(codes)])])


def _rig(commit_v: int = 9, fetch_v: int = 9) -> tuple[Committer, FakeCoordinatorClient, Membership]:
    client = FakeCoordinatorClient({"OffsetCommitRequest": commit_v, "OffsetFetchRequest": fetch_v})
    m = Membership()
    return Committer(client, m, "g", require_stable=True, retry_backoff_ms=1), client, m  # type: ignore[arg-type]


OFFSETS = {TP0: OffsetAndMetadata(10, "m0", 2), TP1: OffsetAndMetadata(20, "", -1)}


async def test_commit_sends_identity_offsets_and_epochs_and_counts() -> None:
    committer, client, m = _rig()
    client.script.append(_commit_answer(0, 0))
    await committer.commit(OFFSETS, timeout=5)
    (node, req, version), = client.requests
    assert (node, version, req.group_id, req.generation_id_or_member_epoch, req.member_id) == \
        (3, 9, "g", 5, "member-a")
    sent = {(t.name, p.partition_index): (p.committed_offset, p.committed_leader_epoch, p.committed_metadata)
            for t in req.topics for p in t.partitions}
    assert sent == {("t", 0): (10, 2, "m0"), ("t", 1): (20, -1, "")}
    assert m.metrics.commits == 1 and not m.dead and not m.member_errors


@pytest.mark.parametrize("moved", [Errors.NotCoordinatorError, Errors.CoordinatorNotAvailableError])
async def test_commit_follows_a_moved_coordinator(moved: type[Errors.KafkaError]) -> None:
    committer, client, m = _rig()
    client.script.extend([_commit_answer(0, moved.errno), _commit_answer(0, 0)])
    await committer.commit(OFFSETS, timeout=5)
    assert [n for n, _, _ in client.requests] == [3, 4]
    assert len(m.dead) == 1 and isinstance(m.dead[0], moved)


async def test_commit_retries_a_lost_connection_then_times_out_naming_the_group() -> None:
    committer, client, m = _rig()
    client.script.extend([Errors.KafkaConnectionError("node 3 went away"), _commit_answer(0, 0)])
    await committer.commit(OFFSETS, timeout=5)
    assert len(client.requests) == 2 and isinstance(m.dead[0], Errors.KafkaConnectionError)
    client.script.extend([_commit_answer(Errors.CoordinatorLoadInProgressError.errno, 0)] * 10_000)
    with pytest.raises(Errors.KafkaTimeoutError, match=r"group 'g'.*COORDINATOR_LOAD_IN_PROGRESS"):
        await committer.commit(OFFSETS, timeout=0.05)


@pytest.mark.parametrize("code", [Errors.UnknownMemberIdError.errno, Errors.IllegalGenerationError.errno])
async def test_commit_of_an_ended_generation_fails_and_tells_the_membership(code: int) -> None:
    committer, client, m = _rig()
    client.script.append(_commit_answer(0, code))
    with pytest.raises(Errors.CommitFailedError, match=r"t\[1\].*rebalanced"):
        await committer.commit(OFFSETS, timeout=5)
    assert m.member_errors == [code] and m.metrics.commits == 0


async def test_a_rebalance_during_the_coordinator_lookup_is_checked_before_the_retry_goes_out() -> None:
    """The commit's rule (``before_each``, membership._still_held) is checked after the coordinator lookup,
    with no await between it and the identity the request carries: a rebalance during the lookup (here
    the partition given up and a new generation installed) fails the commit instead of committing under
    the new generation, which the coordinator would accept."""
    committer, client, m = _rig()
    held = {"yes": True}

    def rebalance() -> None:
        held["yes"] = False
        m.identity = (6, "member-a")

    def still_held() -> None:
        if not held["yes"]:
            raise Errors.CommitFailedError("given up")

    m.during_lookup = rebalance
    client.script.extend([_commit_answer(Errors.NotCoordinatorError.errno, 0), _commit_answer(0, 0)])
    with pytest.raises(Errors.CommitFailedError, match="given up"):
        await committer.commit(OFFSETS, timeout=5, before_each=still_held)
    assert [req.generation_id_or_member_epoch for _, req, _ in client.requests] == [5]
    assert m.metrics.commits == 0


async def test_commit_during_a_rebalance_asks_to_rejoin() -> None:
    committer, client, m = _rig()
    client.script.append(_commit_answer(Errors.RebalanceInProgressError.errno, 0))
    with pytest.raises(Errors.CommitFailedError, match="rebalancing"):
        await committer.commit(OFFSETS, timeout=5)
    assert len(m.rejoins) == 1 and not m.member_errors


async def test_a_final_commit_error_is_raised_at_once() -> None:
    committer, client, _m = _rig()
    client.script.append(_commit_answer(Errors.TopicAuthorizationFailedError.errno, 0))
    with pytest.raises(Errors.TopicAuthorizationFailedError):
        await committer.commit(OFFSETS, timeout=5)
    assert len(client.requests) == 1


async def test_nothing_to_commit_sends_nothing() -> None:
    committer, client, _m = _rig()
    await committer.commit({}, timeout=5)
    assert client.requests == []


def _fetch_answer_v8(group_code: int = 0, parts: tuple[tuple[int, int, int, str | None, int], ...] = ()
                     ) -> OffsetFetchResponse:
    return OffsetFetchResponse(groups=[OffsetFetchResponseGroup(group_id="g", error_code=group_code, topics=[
        OffsetFetchResponseTopics(name="t", partitions=[
            OffsetFetchResponsePartitions(partition_index=p, committed_offset=o, committed_leader_epoch=e,
                                          metadata=md, error_code=c) for p, o, e, md, c in parts])])])


async def test_fetch_reads_offsets_none_for_uncommitted_and_retries_group_errors() -> None:
    committer, client, m = _rig()
    client.script.extend([
        _fetch_answer_v8(Errors.CoordinatorLoadInProgressError.errno),
        _fetch_answer_v8(Errors.NotCoordinatorError.errno),
        _fetch_answer_v8(0, ((0, 10, 2, "m0", 0), (1, -1, -1, "", 0))),
    ])
    got = await committer.fetch({TP0, TP1, TopicPartition("t", 2)}, timeout=5)
    assert got == {TP0: OffsetAndMetadata(10, "m0", 2), TP1: None, TopicPartition("t", 2): None}
    assert [n for n, _, _ in client.requests] == [3, 3, 4]
    req = client.requests[0][1]
    assert req.require_stable and req.groups[0].group_id == "g"
    assert sorted(req.groups[0].topics[0].partition_indexes) == [0, 1, 2]
    assert len(m.dead) == 1


async def test_fetch_on_an_older_broker_uses_the_topic_level_shape() -> None:
    committer, client, _m = _rig(fetch_v=7)
    parts = [OffsetFetchResponsePartition(partition_index=0, committed_offset=42, committed_leader_epoch=1,
                                          metadata=None, error_code=0),
             OffsetFetchResponsePartition(partition_index=1, committed_offset=0, error_code=3)]
    client.script.append(OffsetFetchResponse(error_code=0, topics=[OffsetFetchResponseTopic(name="t",
                                                                                            partitions=parts)]))
    got = await committer.fetch({TP0, TP1}, timeout=5)
    # UNKNOWN_TOPIC_OR_PARTITION (3): nothing committed there
    assert got == {TP0: OffsetAndMetadata(42, "", 1), TP1: None}
    assert client.requests[0][2] == 7 and client.requests[0][1].require_stable


async def test_fetch_raises_a_final_group_error() -> None:
    committer, client, _m = _rig()
    client.script.append(_fetch_answer_v8(Errors.GroupAuthorizationFailedError.errno))
    with pytest.raises(Errors.GroupAuthorizationFailedError, match="group 'g'"):
        await committer.fetch({TP0}, timeout=5)


def test_the_committer_uses_only_its_host_protocol() -> None:
    """The Committer reaches the coordinator only through CommitterHost (as the Heartbeat through
    HeartbeatHost); this stand-in and GroupMembership both satisfy it."""
    import inspect

    from aiokafka_lite.consumer import committer as module
    from aiokafka_lite.consumer.committer import CommitterHost
    from aiokafka_lite.consumer.membership import GroupMembership

    used = set()
    for line in inspect.getsource(module.Committer).splitlines():
        for part in line.split("self._m.")[1:]:
            used.add(part.split("(")[0].split(" ")[0].split(".")[0].split(")")[0].split(",")[0])
    allowed = {n for n in dir(CommitterHost) if not n.startswith("_")} | set(CommitterHost.__annotations__)
    assert used and used <= allowed, used - allowed
    for impl in (Membership, GroupMembership):
        assert allowed <= set(dir(impl)) | {"group_instance_id", "metrics"}, impl
    host: CommitterHost = Membership()  # mypy checks the stand-in against the Protocol
    assert host.metrics is not None

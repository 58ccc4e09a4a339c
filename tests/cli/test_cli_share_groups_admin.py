"""``aiokafka-lite share-groups describe|offsets|reset-offsets|delete-offsets`` (KIP-932 administration).

No broker here implements the share-group admin APIs (tests/admin/test_admin_share_groups_brokers.py), so
from the shell each command against Tansu, noida-db and librdkafka's mock cluster must end in one clear
line naming the missing API; bad input is refused before connecting. What the commands print and send
when a broker does answer is shown in-process with the Admin on the scripted fake client
(tests/admin/_admin_fake.py), which answers each request through the real codecs."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _cli_support import Result

from aiokafka_lite import Admin, TopicPartition
from aiokafka_lite.cli import _reset, cmd_share_groups
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
    AlterShareGroupOffsetsResponsePartition,
    AlterShareGroupOffsetsResponseTopic,
)
from aiokafka_lite.protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse,
    DeleteShareGroupOffsetsResponseTopic,
)
from aiokafka_lite.protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
    DescribeShareGroupOffsetsResponseGroup,
    DescribeShareGroupOffsetsResponsePartition,
    DescribeShareGroupOffsetsResponseTopic,
)
from aiokafka_lite.protocol.messages.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from aiokafka_lite.protocol.messages.share_group_describe import (
    Assignment,
    DescribedGroup,
    Member,
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
    TopicPartitions,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "admin"))
from _admin_fake import AdminFakeClient

COMMANDS = [("share-groups", "describe"), ("share-groups", "offsets"), ("share-groups", "reset-offsets"),
            ("share-groups", "delete-offsets")]
TOPIC_ID = uuid.uuid4()
EV0, EV1 = TopicPartition("events", 0), TopicPartition("events", 1)


def _ok(result: Result) -> Result:
    assert result.code == 0, f"exit {result.code}: {result.err}"
    return result


def _fails(result: Result, code: int, *needles: str) -> None:
    assert result.code == code, f"exit {result.code}: {result.out} {result.err}"
    assert len(result.err_lines) == 1 and result.err_lines[0].startswith("aiokafka-lite: error: "), result.err
    for n in needles:
        assert n in result.err, result.err


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_and_json_for_each(cli: Callable[..., Result], command: tuple[str, ...]) -> None:
    helped = _ok(cli(*command, "--help")).out
    assert helped.startswith(f"usage: aiokafka-lite {' '.join(command)}") and "--json" in helped


def test_bad_input_is_refused_before_connecting(cli: Callable[..., Result]) -> None:
    nowhere = ("-b", "127.0.0.1:1")
    _fails(cli("share-groups", "reset-offsets", "sg", "--all-topics", *nowhere), 2, "--to-earliest")
    _fails(cli("share-groups", "reset-offsets", "sg", "--all-topics", "--to-offset", "-3", *nowhere), 2,
           "--to-offset must be >= 0")
    _fails(cli("share-groups", "reset-offsets", "sg", "--topic", "t", "--to-datetime", "yesterday", *nowhere),
           2, "bad time 'yesterday'")
    _fails(cli("share-groups", "offsets", "sg", "-p", "0", *nowhere), 2, "-p/--partition needs --topic")
    _fails(cli("share-groups", "delete-offsets", "sg", *nowhere), 2, "--topic")


@pytest.mark.parametrize("where", ["tansu", "noida", "mock"])
def test_each_command_names_the_api_a_broker_lacks(cli_process: Callable[..., Result], where: str,
                                                   request: pytest.FixtureRequest) -> None:
    if where == "mock":
        b = request.getfixturevalue("mock_cluster")(1).bootstrap
    else:
        broker: EmbeddedBroker = request.getfixturevalue(where)
        b = broker.bootstrap
    _fails(cli_process("share-groups", "describe", "sg", "-b", b), 1,
           "does not offer ShareGroupDescribe (API key 77)")
    _fails(cli_process("share-groups", "offsets", "sg", "--json", "-b", b), 1,
           "does not offer DescribeShareGroupOffsets (API key 90)")
    _fails(cli_process("share-groups", "delete-offsets", "sg", "--topic", "t", "-b", b), 1,
           "does not offer DeleteShareGroupOffsets (API key 92)")


# -- what the commands print and send, with the Admin on the scripted fake client ------------------------


class _Answering(AdminFakeClient):
    """The fake client, answering each request at once with ``answers[type](request)``."""

    def __init__(self, answers: dict[type, Callable[[Any], Any]]) -> None:
        super().__init__({EV0: 1, EV1: 2})
        self.answers = answers
        self.cluster.leader_epoch = lambda tp: -1  # type: ignore[attr-defined]  # ListOffsets asks it

    async def send(self, node: int, request: Any, **kwargs: Any) -> Any:
        pending = asyncio.ensure_future(super().send(node, request, **kwargs))
        await asyncio.sleep(0)  # super().send registers its Call before it first waits
        call = self.unclaimed.pop(0)
        call.reply(self.answers[call.kind](call.request))
        return await pending


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Callable[..., _Answering]:
    def install(**answers: Callable[[Any], Any]) -> _Answering:
        kinds = {"describe": ShareGroupDescribeRequest, "offsets": DescribeShareGroupOffsetsRequest,
                 "alter": AlterShareGroupOffsetsRequest, "delete": DeleteShareGroupOffsetsRequest,
                 "list_offsets": ListOffsetsRequest}
        client = _Answering({kinds[k]: v for k, v in answers.items()})

        def admin_for(args: Any) -> Admin:
            admin = Admin(bootstrap_servers="127.0.0.1:1")
            admin._client = client  # type: ignore[assignment]
            return admin

        monkeypatch.setattr(cmd_share_groups, "admin_for", admin_for)
        monkeypatch.setattr(_reset, "admin_for", admin_for)  # reset-offsets runs there
        return client

    return install


def _group(members: int = 1) -> Callable[[Any], ShareGroupDescribeResponse]:
    def answer(request: Any) -> ShareGroupDescribeResponse:
        return ShareGroupDescribeResponse(groups=[DescribedGroup(
            group_id=g, group_state="Stable" if members else "Empty", group_epoch=3, assignment_epoch=3,
            assignor_name="simple", members=[Member(
                member_id=f"m{i}", rack_id=None, member_epoch=3, client_id="c", client_host="/127.0.0.1",
                subscribed_topic_names=["events"], assignment=Assignment(topic_partitions=[TopicPartitions(
                    topic_id=TOPIC_ID, topic_name="events", partitions=[1, 0])])) for i in range(members)])
            for g in request.group_ids])
    return answer


def _offsets(request: Any) -> DescribeShareGroupOffsetsResponse:
    return DescribeShareGroupOffsetsResponse(groups=[DescribeShareGroupOffsetsResponseGroup(
        group_id=request.groups[0].group_id, topics=[DescribeShareGroupOffsetsResponseTopic(
            topic_name="events", topic_id=TOPIC_ID, partitions=[
                DescribeShareGroupOffsetsResponsePartition(partition_index=0, start_offset=40,
                                                           leader_epoch=2),
                DescribeShareGroupOffsetsResponsePartition(partition_index=1, start_offset=7,
                                                           leader_epoch=-1),
            ])])])


def test_describe_prints_members_and_their_partitions(cli: Callable[..., Result],
                                                      fake: Callable[..., _Answering]) -> None:
    fake(describe=_group(1))
    out = _ok(cli("share-groups", "describe", "sg")).out.splitlines()
    assert out[0] == "Group: sg\tState: Stable\tEpoch: 3\tAssignment-epoch: 3\tAssignor: simple\tMembers: 1"
    assert out[1].split() == ["MEMBER-ID", "CLIENT-ID", "HOST", "RACK", "EPOCH", "PARTITIONS"]
    assert out[2].split() == ["m0", "c", "/127.0.0.1", "-", "3", "events-0,events-1"]
    doc = json.loads(_ok(cli("share-groups", "describe", "sg", "--json")).out)
    assert (doc["group_id"], doc["state"], doc["members"][0]["assignment"]) == (
        "sg", "Stable", [["events", 0], ["events", 1]])


def test_offsets_prints_each_partitions_start_offset(cli: Callable[..., Result],
                                                     fake: Callable[..., _Answering]) -> None:
    fake(offsets=_offsets)
    rows = [json.loads(line) for line in _ok(cli("share-groups", "offsets", "sg", "--json")).out.splitlines()]
    assert rows == [
        {"group": "sg", "topic": "events", "partition": 0, "start_offset": 40, "leader_epoch": 2},
        {"group": "sg", "topic": "events", "partition": 1, "start_offset": 7, "leader_epoch": None}]
    table = _ok(cli("share-groups", "offsets", "sg")).out.splitlines()
    assert [r.split() for r in table] == [["TOPIC", "PARTITION", "START-OFFSET", "LEADER-EPOCH"],
                                          ["events", "0", "40", "2"], ["events", "1", "7", "-"]]


def _altered(request: Any) -> AlterShareGroupOffsetsResponse:
    return AlterShareGroupOffsetsResponse(responses=[AlterShareGroupOffsetsResponseTopic(
        topic_name=t.topic_name, topic_id=TOPIC_ID, partitions=[
            AlterShareGroupOffsetsResponsePartition(partition_index=p.partition_index)
            for p in t.partitions]) for t in request.topics])


def test_reset_offsets_is_a_dry_run_until_executed(cli: Callable[..., Result],
                                                   fake: Callable[..., _Answering]) -> None:
    client = fake(offsets=_offsets, describe=_group(0), alter=_altered)
    dry = _ok(cli("share-groups", "reset-offsets", "sg", "--all-topics", "--to-offset", "5", "--json"))
    assert [json.loads(line) for line in dry.out.splitlines()] == [
        {"group": "sg", "topic": "events", "partition": 0, "current": 40, "new": 5, "executed": False},
        {"group": "sg", "topic": "events", "partition": 1, "current": 7, "new": 5, "executed": False}]
    assert "dry run" in dry.err and not client.calls_of(AlterShareGroupOffsetsRequest)
    done = _ok(cli("share-groups", "reset-offsets", "sg", "--all-topics", "-p", "1", "--to-offset", "5",
                   "--execute", "--json"))
    assert [json.loads(line)["executed"] for line in done.out.splitlines()] == [True]
    (sent,) = client.calls_of(AlterShareGroupOffsetsRequest)
    assert [(t.topic_name, [(p.partition_index, p.start_offset) for p in t.partitions])
            for t in sent.request.topics] == [("events", [(1, 5)])]


def test_reset_offsets_to_earliest_reads_each_partitions_log_start(cli: Callable[..., Result],
                                                                   fake: Callable[..., _Answering]) -> None:
    def log_starts(request: Any) -> ListOffsetsResponse:
        assert {p.timestamp for t in request.topics for p in t.partitions} == {-2}  # earliest
        return ListOffsetsResponse(topics=[ListOffsetsTopicResponse(name=t.name, partitions=[
            ListOffsetsPartitionResponse(partition_index=p.partition_index, offset=30 + p.partition_index)
            for p in t.partitions]) for t in request.topics])

    client = fake(offsets=_offsets, describe=_group(0), alter=_altered, list_offsets=log_starts)
    done = _ok(cli("share-groups", "reset-offsets", "sg", "--all-topics", "--to-earliest", "--execute"))
    assert [r.split() for r in done.out.splitlines()] == [
        ["TOPIC", "PARTITION", "CURRENT", "NEW"], ["events", "0", "40", "30"], ["events", "1", "7", "31"]]
    (sent,) = client.calls_of(AlterShareGroupOffsetsRequest)
    assert [(p.partition_index, p.start_offset) for p in sent.request.topics[0].partitions] == [
        (0, 30), (1, 31)]


def test_reset_offsets_refuses_a_group_with_members(cli: Callable[..., Result],
                                                    fake: Callable[..., _Answering]) -> None:
    client = fake(offsets=_offsets, describe=_group(2))
    _fails(cli("share-groups", "reset-offsets", "sg", "--all-topics", "--to-offset", "0", "--execute"), 1,
           "share group 'sg' has 2 member(s) (state Stable)")
    assert not client.calls_of(AlterShareGroupOffsetsRequest)


def test_delete_offsets_prints_each_topic(cli: Callable[..., Result],
                                          fake: Callable[..., _Answering]) -> None:
    def deleted(request: Any) -> DeleteShareGroupOffsetsResponse:
        return DeleteShareGroupOffsetsResponse(responses=[DeleteShareGroupOffsetsResponseTopic(
            topic_name=t.topic_name, topic_id=TOPIC_ID) for t in request.topics])

    fake(delete=deleted)
    out = _ok(cli("share-groups", "delete-offsets", "sg", "--topic", "events", "--topic", "other",
                  "--json")).out
    assert [json.loads(line) for line in out.splitlines()] == [
        {"group": "sg", "topic": "events", "deleted": True},
        {"group": "sg", "topic": "other", "deleted": True}]
    assert _ok(cli("share-groups", "delete-offsets", "sg", "--topic", "events")).out == (
        "deleted share group sg's state of topic events\n")

"""Share-group administration (KIP-932) on the scripted fake client, since no broker here implements its
APIs (test_admin_share_groups_brokers.py reads each one's ApiVersions). Each request's bytes are compared
with bytes written by hand from the protocol's definition (specs/kafka-protocol-extra/, NOTICE.md), the
answers of ShareGroupDescribe and DescribeShareGroupOffsets are decoded from hand-written bytes too, and
per-partition errors and a moved coordinator (NOT_COORDINATOR, then the new one) reach the caller or are
followed."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from _admin_fake import NO_TAGS, AdminFakeClient, carray, cstr, fake_admin, i8, i16, i32, i64, next_call

from aiokafka_lite import Admin, TopicPartition, errors
from aiokafka_lite.admin import ShareGroupDescription, ShareMemberDescription
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
)
from aiokafka_lite.protocol.messages.share_group_describe import (
    DescribedGroup,
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
)
from aiokafka_lite.structs import OffsetAndMetadata

EV0, EV1, OT0 = TopicPartition("events", 0), TopicPartition("events", 1), TopicPartition("other", 0)
TOPIC_ID = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
NOT_COORDINATOR = errors.NotCoordinatorError.errno


def _admin() -> tuple[Admin, AdminFakeClient]:
    return fake_admin({EV0: 1, EV1: 2, OT0: 3}, retry_backoff_ms=1)


def _nullable(s: str | None) -> bytes:
    return cstr(s)


def _uuid(u: uuid.UUID) -> bytes:
    return u.bytes


# -- ShareGroupDescribe ---------------------------------------------------------------------------------


def _described_group(error: int, group: str, *, members: list[bytes], state: str = "Stable",
                     message: str | None = None, operations: int = -(2**31)) -> bytes:
    # ShareGroupDescribeResponse v1 DescribedGroup: int16 error, compact nullable message, compact group id,
    # compact state, int32 group epoch, int32 assignment epoch, compact assignor, members[], int32
    # authorized operations, tagged fields.
    return (i16(error) + _nullable(message) + cstr(group) + cstr(state) + i32(5) + i32(4) + cstr("simple")
            + carray(members) + i32(operations) + NO_TAGS)


def _member(member_id: str, rack: str | None, partitions: list[int]) -> bytes:
    # Member: compact id, compact nullable rack, int32 epoch, compact client id, compact host,
    # compact []string subscription, Assignment {TopicPartitions[{uuid, compact name, compact []int32,
    # tags}], tags}, tags.
    assignment = carray([_uuid(TOPIC_ID) + cstr("events") + carray([i32(p) for p in partitions]) + NO_TAGS])
    return (cstr(member_id) + _nullable(rack) + i32(5) + cstr("cli-1") + cstr("/127.0.0.1")
            + carray([cstr("events")]) + assignment + NO_TAGS + NO_TAGS)


async def test_describe_share_groups_bytes_and_answer() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.describe_share_groups(["sg", "sg2"],
                                                             include_authorized_operations=True))
    call = await next_call(client, ShareGroupDescribeRequest)
    assert call.version == 1
    # ShareGroupDescribeRequest v1: compact []string group ids, bool, tagged fields.
    assert call.request.encode(1) == carray([cstr("sg"), cstr("sg2")]) + i8(1) + NO_TAGS
    body = i32(0) + carray([
        _described_group(0, "sg", members=[_member("m1", "rack-a", [1, 0]), _member("m2", None, [0])],
                         operations=(1 << 3) | (1 << 8)),  # read, describe
        _described_group(0, "sg2", members=[], state="Empty"),
    ]) + NO_TAGS
    call.reply(ShareGroupDescribeResponse.decode(body, 1))
    sg, sg2 = await task
    assert sg == ShareGroupDescription(
        group_id="sg", state="Stable", group_epoch=5, assignment_epoch=4, assignor="simple",
        members=[ShareMemberDescription("m1", "cli-1", "/127.0.0.1", 5, "rack-a", ["events"], [EV0, EV1]),
                 ShareMemberDescription("m2", "cli-1", "/127.0.0.1", 5, None, ["events"], [EV0])],
        authorized_operations=("read", "describe"))
    assert (sg2.state, sg2.members, sg2.authorized_operations) == ("Empty", [], None)
    assert sg.as_dict()["members"][0]["assignment"] == [["events", 0], ["events", 1]]


async def test_describe_share_groups_raises_the_groups_error_naming_it() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.describe_share_groups(["sg", "classic"]))
    call = await next_call(client, ShareGroupDescribeRequest)
    body = i32(0) + carray([
        _described_group(0, "sg", members=[]),
        _described_group(errors.GroupIdNotFoundError.errno, "classic", members=[], state="",
                         message="Group classic is not a share group."),
    ]) + NO_TAGS
    call.reply(ShareGroupDescribeResponse.decode(body, 1))
    with pytest.raises(errors.GroupIdNotFoundError,
                       match="share group 'classic': Group classic is not a share"):
        await task


async def test_describe_share_groups_follows_a_moved_coordinator() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.describe_share_groups(["sg"]))
    first = await next_call(client, ShareGroupDescribeRequest)
    client.coordinator = 3
    first.reply(ShareGroupDescribeResponse(groups=[DescribedGroup(error_code=NOT_COORDINATOR,
                                                                  group_id="sg")]))
    second = await next_call(client, ShareGroupDescribeRequest, spins=100_000)
    assert (first.node, second.node) == (1, 3)
    second.reply(ShareGroupDescribeResponse.decode(i32(0) + carray([_described_group(0, "sg", members=[])])
                                                   + NO_TAGS, 1))
    (d,) = await task
    assert d.group_id == "sg"


# -- DescribeShareGroupOffsets ----------------------------------------------------------------------------


def _offsets_answer(group: str, partitions: list[bytes], error: int = 0) -> bytes:
    # DescribeShareGroupOffsetsResponse v0: int32 throttle, groups[compact id, topics[compact name, uuid,
    # partitions[int32 index, int64 start offset, int32 leader epoch, int16 error, compact nullable
    # message, tags], tags], int16 error, compact nullable message, tags], tags.
    topics = carray([cstr("events") + _uuid(TOPIC_ID) + carray(partitions) + NO_TAGS] if not error else [])
    return i32(0) + carray([cstr(group) + topics + i16(error) + _nullable(None) + NO_TAGS]) + NO_TAGS


def _partition(index: int, start: int, epoch: int = 2, error: int = 0, message: str | None = None) -> bytes:
    return i32(index) + i64(start) + i32(epoch) + i16(error) + _nullable(message) + NO_TAGS


async def test_list_share_group_offsets_bytes_and_answer() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.list_share_group_offsets("sg", [EV1, EV0]))
    call = await next_call(client, DescribeShareGroupOffsetsRequest)
    assert call.version == 0
    # DescribeShareGroupOffsetsRequest v0: groups[compact id, compact nullable topics[compact name,
    # compact []int32, tags], tags], tags.
    assert call.request.encode(0) == carray([
        cstr("sg") + carray([cstr("events") + carray([i32(0), i32(1)]) + NO_TAGS]) + NO_TAGS]) + NO_TAGS
    # Partition 1 has no start offset yet (never consumed by the group): left out.
    call.reply(DescribeShareGroupOffsetsResponse.decode(
        _offsets_answer("sg", [_partition(0, 42), _partition(1, -1, -1)]), 0))
    assert await task == {EV0: OffsetAndMetadata(42, "", 2)}


async def test_list_share_group_offsets_of_every_topic_sends_null_topics() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.list_share_group_offsets("sg"))
    call = await next_call(client, DescribeShareGroupOffsetsRequest)
    assert call.request.encode(0) == carray([cstr("sg") + b"\x00" + NO_TAGS]) + NO_TAGS  # null array
    call.reply(DescribeShareGroupOffsetsResponse.decode(_offsets_answer("sg", [_partition(1, 7)]), 0))
    assert await task == {EV1: OffsetAndMetadata(7, "", 2)}


async def test_list_share_group_offsets_raises_a_partitions_error_naming_it() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.list_share_group_offsets("sg", [EV0, EV1]))
    call = await next_call(client, DescribeShareGroupOffsetsRequest)
    call.reply(DescribeShareGroupOffsetsResponse.decode(_offsets_answer("sg", [
        _partition(0, 42), _partition(1, -1, error=errors.TopicAuthorizationFailedError.errno,
                                      message="no describe on events")]), 0))
    with pytest.raises(errors.TopicAuthorizationFailedError,
                       match=r"share group 'sg' partition events\[1\]: no describe on events"):
        await task


async def test_list_share_group_offsets_follows_a_moved_coordinator() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.list_share_group_offsets("sg"))
    first = await next_call(client, DescribeShareGroupOffsetsRequest)
    client.coordinator = 2
    first.reply(DescribeShareGroupOffsetsResponse(groups=[DescribeShareGroupOffsetsResponseGroup(
        group_id="sg", topics=[], error_code=NOT_COORDINATOR)]))
    second = await next_call(client, DescribeShareGroupOffsetsRequest, spins=100_000)
    assert (first.node, second.node) == (1, 2)
    second.reply(DescribeShareGroupOffsetsResponse.decode(_offsets_answer("sg", [_partition(0, 9)]), 0))
    assert await task == {EV0: OffsetAndMetadata(9, "", 2)}


async def test_list_share_group_offsets_of_an_unknown_group() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.list_share_group_offsets("nope"))
    call = await next_call(client, DescribeShareGroupOffsetsRequest)
    call.reply(DescribeShareGroupOffsetsResponse.decode(
        _offsets_answer("nope", [], error=errors.GroupIdNotFoundError.errno), 0))
    with pytest.raises(errors.GroupIdNotFoundError, match="share group 'nope'"):
        await task


# -- AlterShareGroupOffsets ---------------------------------------------------------------------------------


def _alter_answer(results: dict[TopicPartition, int]) -> AlterShareGroupOffsetsResponse:
    by_topic: dict[str, list[AlterShareGroupOffsetsResponsePartition]] = {}
    for tp, code in results.items():
        by_topic.setdefault(tp.topic, []).append(
            AlterShareGroupOffsetsResponsePartition(partition_index=tp.partition, error_code=code))
    return AlterShareGroupOffsetsResponse(responses=[
        AlterShareGroupOffsetsResponseTopic(topic_name=t, topic_id=TOPIC_ID, partitions=ps)
        for t, ps in by_topic.items()])


async def test_alter_share_group_offsets_bytes_and_per_partition_errors() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.alter_share_group_offsets("sg", {EV0: 10, OT0: 0, EV1: 12}))
    call = await next_call(client, AlterShareGroupOffsetsRequest)
    assert call.version == 0
    # AlterShareGroupOffsetsRequest v0: compact group id, topics[compact name, partitions[int32 index,
    # int64 start offset, tags], tags], tags.
    assert call.request.encode(0) == cstr("sg") + carray([
        cstr("events") + carray([i32(0) + i64(10) + NO_TAGS, i32(1) + i64(12) + NO_TAGS]) + NO_TAGS,
        cstr("other") + carray([i32(0) + i64(0) + NO_TAGS]) + NO_TAGS,
    ]) + NO_TAGS
    call.reply(_alter_answer({EV0: 0, EV1: 0, OT0: errors.UnknownTopicOrPartitionError.errno}))
    with pytest.raises(errors.UnknownTopicOrPartitionError, match=r"share group 'sg' partition other\[0\]"):
        await task


async def test_alter_share_group_offsets_of_a_group_with_members() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.alter_share_group_offsets("sg", {EV0: 10}))
    call = await next_call(client, AlterShareGroupOffsetsRequest)
    call.reply(AlterShareGroupOffsetsResponse(error_code=errors.NonEmptyGroupError.errno,
                                              error_message="The group has active members."))
    with pytest.raises(errors.NonEmptyGroupError, match="share group 'sg': The group has active members"):
        await task


async def test_alter_share_group_offsets_follows_a_moved_coordinator() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.alter_share_group_offsets("sg", {EV0: 10, EV1: 12}))
    first = await next_call(client, AlterShareGroupOffsetsRequest)
    client.coordinator = 3
    first.reply(_alter_answer({EV0: NOT_COORDINATOR, EV1: NOT_COORDINATOR}))
    second = await next_call(client, AlterShareGroupOffsetsRequest, spins=100_000)
    assert (first.node, second.node) == (1, 3)
    assert second.request.encode(0) == first.request.encode(0)  # the same offsets, sent again
    second.reply(_alter_answer({EV0: 0, EV1: 0}))
    await task


async def test_alter_share_group_offsets_checks_offsets_before_sending() -> None:
    admin, client = _admin()
    with pytest.raises(errors.IllegalArgumentError, match=r"events\[0\]: expected an offset >= 0"):
        await admin.alter_share_group_offsets("sg", {EV0: -1})
    with pytest.raises(errors.IllegalArgumentError, match="group id"):
        await admin.alter_share_group_offsets("", {EV0: 1})
    assert client.calls == []


# -- DeleteShareGroupOffsets --------------------------------------------------------------------------------


async def test_delete_share_group_offsets_bytes_and_per_topic_errors() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.delete_share_group_offsets("sg", ["events", "other", "events"]))
    call = await next_call(client, DeleteShareGroupOffsetsRequest)
    assert call.version == 0
    # DeleteShareGroupOffsetsRequest v0: compact group id, topics[compact name, tags], tags.
    assert call.request.encode(0) == cstr("sg") + carray([cstr("events") + NO_TAGS,
                                                          cstr("other") + NO_TAGS]) + NO_TAGS
    call.reply(DeleteShareGroupOffsetsResponse(responses=[
        DeleteShareGroupOffsetsResponseTopic(topic_name="events", topic_id=TOPIC_ID, error_code=0),
        DeleteShareGroupOffsetsResponseTopic(topic_name="other", error_message="unknown topic",
                                             error_code=errors.UnknownTopicOrPartitionError.errno)]))
    with pytest.raises(errors.UnknownTopicOrPartitionError, match="share group 'sg' topic 'other': unknown"):
        await task


async def test_delete_share_group_offsets_follows_a_moved_coordinator() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.delete_share_group_offsets("sg", ["events"]))
    first = await next_call(client, DeleteShareGroupOffsetsRequest)
    client.coordinator = 2
    first.reply(DeleteShareGroupOffsetsResponse(error_code=NOT_COORDINATOR))
    second = await next_call(client, DeleteShareGroupOffsetsRequest, spins=100_000)
    assert (first.node, second.node) == (1, 2)
    second.reply(DeleteShareGroupOffsetsResponse(responses=[
        DeleteShareGroupOffsetsResponseTopic(topic_name="events", topic_id=TOPIC_ID, error_code=0)]))
    await task


async def test_a_coordinator_that_never_settles_ends_in_a_timeout() -> None:
    admin, client = fake_admin({EV0: 1}, retry_backoff_ms=1, request_timeout_ms=50)
    task = asyncio.ensure_future(admin.delete_share_group_offsets("sg", ["events"]))
    while not task.done():
        call = client.take(DeleteShareGroupOffsetsRequest)
        if call is not None:
            call.reply(DeleteShareGroupOffsetsResponse(error_code=NOT_COORDINATOR))
        await asyncio.sleep(0.001)
    with pytest.raises(errors.KafkaTimeoutError, match=r"DeleteShareGroupOffsets did not succeed.*NOT_COORD"):
        await task


async def test_calls_after_stop_fail_at_once_and_send_nothing() -> None:
    admin, client = _admin()
    await admin.stop()
    for call in (admin.describe_share_groups(["sg"]), admin.list_share_group_offsets("sg"),
                 admin.alter_share_group_offsets("sg", {EV0: 1}),
                 admin.delete_share_group_offsets("sg", ["t"])):
        with pytest.raises(errors.IllegalStateError, match="not started"):
            await call
    assert client.calls == []


async def test_cancelling_a_call_ends_its_wait() -> None:
    admin, client = _admin()
    task = asyncio.ensure_future(admin.list_share_group_offsets("sg"))
    call = await next_call(client, DescribeShareGroupOffsetsRequest)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert call.future.cancelled()
    for _ in range(50):
        await asyncio.sleep(0)
    assert len(client.calls) == 1  # nothing sent again

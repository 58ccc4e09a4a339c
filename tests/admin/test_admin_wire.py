"""ACLs and WriteTxnMarkers on the scripted fake client, since no broker here implements them: Tansu 0.6
answers CreateAcls with a null result array (undecodable), DescribeAcls with nothing and offers no
DeleteAcls; noida-db 0.2.3 has no authorizer (SECURITY_DISABLED, test_admin_ops.py) and offers no
WriteTxnMarkers. Each request's bytes are compared with bytes written by hand from Kafka's JSON spec,
and each answer's per-item errors must reach the caller naming the item."""

from __future__ import annotations

import asyncio

import pytest
from _admin_fake import NO_TAGS, carray, cstr, fake_admin, i8, i16, i32, i64, next_call

from aiokafka_lite import TopicPartition, errors
from aiokafka_lite.admin import AbortTransactionSpec, AclBinding, AclBindingFilter
from aiokafka_lite.protocol.messages.create_acls import (
    AclCreationResult,
    CreateAclsRequest,
    CreateAclsResponse,
)
from aiokafka_lite.protocol.messages.delete_acls import (
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsRequest,
    DeleteAclsResponse,
)
from aiokafka_lite.protocol.messages.describe_acls import (
    AclDescription,
    DescribeAclsRequest,
    DescribeAclsResource,
    DescribeAclsResponse,
)
from aiokafka_lite.protocol.messages.write_txn_markers import (
    WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)

TP = TopicPartition("events", 0)
READ = AclBinding("topic", "events", "User:alice", "read")
DENY_WRITE = AclBinding("topic", "ev", "User:bob", "write", permission="deny", host="10.0.0.1",
                        pattern_type="prefixed")


def _creation(resource: int, name: str, pattern: int, principal: str, host: str, op: int, perm: int) -> bytes:
    # CreateAclsRequest.json, AclCreation v2+ (flexible): int8, compact string, int8, compact string,
    # compact string, int8, int8, tagged fields.
    return (i8(resource) + cstr(name) + i8(pattern) + cstr(principal) + cstr(host) + i8(op) + i8(perm)
            + NO_TAGS)


async def test_create_acls_bytes_and_per_acl_errors() -> None:
    admin, client = fake_admin({TP: 1})
    task = asyncio.ensure_future(admin.create_acls([READ, DENY_WRITE]))
    call = await next_call(client, CreateAclsRequest)
    assert call.version == 3
    assert call.request.encode(3) == carray([
        _creation(2, "events", 3, "User:alice", "*", 3, 3),        # topic, literal, read, allow
        _creation(2, "ev", 4, "User:bob", "10.0.0.1", 4, 2),       # topic, prefixed, write, deny
    ]) + NO_TAGS
    call.reply(CreateAclsResponse(results=[
        AclCreationResult(error_code=0, error_message=None),
        AclCreationResult(error_code=errors.InvalidRequestError.errno, error_message="bad host")]))
    with pytest.raises(errors.InvalidRequestError,
                       match=r"User:bob deny write on topic ev \(prefixed\).*bad host"):
        await task


async def test_describe_acls_filter_bytes_and_result() -> None:
    admin, client = fake_admin({TP: 1})
    task = asyncio.ensure_future(admin.describe_acls(AclBindingFilter(resource_type="topic",
                                                                      principal="User:alice",
                                                                      pattern_type="match")))
    call = await next_call(client, DescribeAclsRequest)
    # DescribeAclsRequest.json v3: int8 type, compact nullable name, int8 pattern, compact nullable
    # principal, compact nullable host, int8 operation, int8 permission, tagged fields.
    assert call.request.encode(call.version) == (
        i8(2) + cstr(None) + i8(2) + cstr("User:alice") + cstr(None) + i8(1) + i8(1) + NO_TAGS)
    call.reply(DescribeAclsResponse(error_code=0, error_message=None, resources=[
        DescribeAclsResource(resource_type=2, resource_name="events", pattern_type=3, acls=[
            AclDescription(principal="User:alice", host="*", operation=3, permission_type=3)]),
        DescribeAclsResource(resource_type=2, resource_name="ev", pattern_type=4, acls=[
            AclDescription(principal="User:alice", host="*", operation=4, permission_type=2)])]))
    assert await task == sorted([READ, AclBinding("topic", "ev", "User:alice", "write", "deny", "*",
                                                  "prefixed")])


async def test_describe_acls_top_level_error() -> None:
    admin, client = fake_admin({TP: 1})
    task = asyncio.ensure_future(admin.describe_acls())
    call = await next_call(client, DescribeAclsRequest)
    call.reply(DescribeAclsResponse(error_code=errors.SecurityDisabledError.errno,
                                    error_message="No Authorizer is configured", resources=[]))
    with pytest.raises(errors.SecurityDisabledError, match="No Authorizer"):
        await task


async def test_delete_acls_returns_what_each_filter_deleted() -> None:
    admin, client = fake_admin({TP: 1})
    by_alice = AclBindingFilter(principal="User:alice")
    on_ev = AclBindingFilter(resource_type="topic", resource_name="ev", pattern_type="prefixed")
    task = asyncio.ensure_future(admin.delete_acls([by_alice, on_ev]))
    call = await next_call(client, DeleteAclsRequest)
    assert call.request.encode(call.version) == carray([
        i8(1) + cstr(None) + i8(1) + cstr("User:alice") + cstr(None) + i8(1) + i8(1) + NO_TAGS,
        i8(2) + cstr("ev") + i8(4) + cstr(None) + cstr(None) + i8(1) + i8(1) + NO_TAGS,
    ]) + NO_TAGS
    call.reply(DeleteAclsResponse(filter_results=[
        DeleteAclsFilterResult(error_code=0, error_message=None, matching_acls=[DeleteAclsMatchingAcl(
            error_code=0, error_message=None, resource_type=2, resource_name="events", pattern_type=3,
            principal="User:alice", host="*", operation=3, permission_type=3)]),
        DeleteAclsFilterResult(error_code=0, error_message=None, matching_acls=[])]))
    assert await task == {by_alice: [READ], on_ev: []}


async def test_acl_arguments_checked_before_sending() -> None:
    admin, client = fake_admin({TP: 1})
    with pytest.raises(errors.IllegalArgumentError, match="operation 'any'"):
        await admin.create_acls([AclBinding("topic", "t", "User:a", "any")])  # a wildcard is for filters
    with pytest.raises(errors.IllegalArgumentError, match="resource type 'table'"):
        await admin.describe_acls(AclBindingFilter(resource_type="table"))
    assert client.calls == []


async def test_abort_transaction_writes_an_abort_marker_to_the_leader() -> None:
    admin, client = fake_admin({TP: 2, TopicPartition("events", 1): 1})
    spec = AbortTransactionSpec(TP, producer_id=4000, producer_epoch=7, coordinator_epoch=3)
    task = asyncio.ensure_future(admin.abort_transaction(spec))
    call = await next_call(client, WriteTxnMarkersRequest)
    assert call.node == 2  # the partition's leader
    # WriteTxnMarkersRequest.json v2 (flexible): markers[int64 pid, int16 epoch, bool result (false:
    # abort), topics[compact name, compact int32 array], int32 coordinator epoch, int8 version, tags].
    assert call.version == 2
    assert call.request.encode(2) == carray([
        i64(4000) + i16(7) + i8(0) + carray([cstr("events") + carray([i32(0)]) + NO_TAGS]) + i32(3)
        + i8(0) + NO_TAGS]) + NO_TAGS
    call.reply(WriteTxnMarkersResponse(markers=[WritableTxnMarkerResult(producer_id=4000, topics=[
        WritableTxnMarkerTopicResult(name="events", partitions=[WritableTxnMarkerPartitionResult(
            partition_index=0, error_code=errors.InvalidProducerEpochError.errno)])])]))
    with pytest.raises(errors.InvalidProducerEpochError, match=r"events\[0\]"):
        await task


async def test_abort_transaction_follows_a_moved_leader() -> None:
    admin, client = fake_admin({TP: 2}, retry_backoff_ms=1)
    task = asyncio.ensure_future(admin.abort_transaction(AbortTransactionSpec(TP, 4000, 7, 3)))
    first = await next_call(client, WriteTxnMarkersRequest)
    client.cluster.leaders[TP] = 1
    first.reply(WriteTxnMarkersResponse(markers=[WritableTxnMarkerResult(producer_id=4000, topics=[
        WritableTxnMarkerTopicResult(name="events", partitions=[WritableTxnMarkerPartitionResult(
            partition_index=0, error_code=errors.NotLeaderOrFollowerError.errno)])])]))
    second = await next_call(client, WriteTxnMarkersRequest, spins=100_000)
    assert (first.node, second.node) == (2, 1)
    second.reply(WriteTxnMarkersResponse(markers=[WritableTxnMarkerResult(producer_id=4000, topics=[
        WritableTxnMarkerTopicResult(name="events", partitions=[WritableTxnMarkerPartitionResult(
            partition_index=0, error_code=0)])])]))
    await task  # no error: the new leader wrote the marker


async def test_calls_after_stop_fail_at_once() -> None:
    admin, client = fake_admin({TP: 1})
    await admin.stop()
    for call in (admin.describe_acls(), admin.list_transactions(), admin.describe_log_dirs(),
                 admin.abort_transaction(AbortTransactionSpec(TP, 1, 0, 0))):
        with pytest.raises(errors.IllegalStateError, match="not started"):
            await call
    assert client.calls == []


async def test_cancelling_a_call_ends_it_and_sends_nothing_more() -> None:
    admin, client = fake_admin({TP: 1}, retry_backoff_ms=1)
    task = asyncio.ensure_future(admin.create_acls([READ]))
    call = await next_call(client, CreateAclsRequest)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert call.future.cancelled()  # the wait for the answer ended with the call
    for _ in range(50):
        await asyncio.sleep(0)
    assert len(client.calls) == 1

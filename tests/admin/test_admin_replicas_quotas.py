"""Reassignments, leader elections, client quotas and features. Neither broker here implements the
first three beyond Tansu's ListPartitionReassignments (which lists every partition as if it were being
reassigned, with nothing being added or removed); noida-db offers none of them. So requests are checked
against bytes written from Kafka's JSON specs on the fake client, routed to the controller, and each
partition's or entity's error must reach the caller naming it."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Callable

import pytest
from _admin_fake import NO_TAGS, carray, cstr, fake_admin, i8, i32, next_call

from aiokafka_lite import Admin, NewTopic, TopicPartition, errors
from aiokafka_lite.admin import PartitionReassignment, QuotaFilterComponent
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.protocol.messages.alter_client_quotas import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    AlterClientQuotasResponseEntityData,
    AlterClientQuotasResponseEntryData,
)
from aiokafka_lite.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from aiokafka_lite.protocol.messages.describe_client_quotas import (
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
    EntityData,
    EntryData,
    ValueData,
)
from aiokafka_lite.protocol.messages.elect_leaders import (
    ElectLeadersRequest,
    ElectLeadersResponse,
    PartitionResult,
    ReplicaElectionResult,
)

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def f64(v: float) -> bytes:
    return struct.pack(">d", v)


async def test_alter_partition_reassignments_bytes_and_errors() -> None:
    admin, client = fake_admin({A0: 2, A1: 3, B0: 2})  # the fake's controller is the lowest node, 2
    task = asyncio.ensure_future(admin.alter_partition_reassignments({A0: [3, 2], A1: None}, timeout_ms=5000))
    call = await next_call(client, AlterPartitionReassignmentsRequest)
    assert call.node == 2
    # AlterPartitionReassignmentsRequest.json v1 (flexible): int32 timeout, bool allow RF change (true),
    # topics[compact name, partitions[int32 index, compact nullable int32 array replicas, tags], tags], tags.
    assert call.version == 1
    assert call.request.encode(1) == i32(5000) + i8(1) + carray([cstr("a") + carray([
        i32(0) + carray([i32(3), i32(2)]) + NO_TAGS,
        i32(1) + b"\x00" + NO_TAGS,  # null: cancel
    ]) + NO_TAGS]) + NO_TAGS
    call.reply(AlterPartitionReassignmentsResponse(error_code=0, error_message=None, responses=[
        ReassignableTopicResponse(name="a", partitions=[
            ReassignablePartitionResponse(partition_index=0, error_code=0, error_message=None),
            ReassignablePartitionResponse(partition_index=1,
                                          error_code=errors.NoReassignmentInProgressError.errno,
                                          error_message="nothing to cancel")])]))
    with pytest.raises(errors.NoReassignmentInProgressError, match=r"a\[1\].*nothing to cancel"):
        await task
    with pytest.raises(errors.IllegalArgumentError, match="distinct broker ids"):
        await admin.alter_partition_reassignments({A0: [1, 1]})


async def test_elect_leaders_bytes_and_outcomes() -> None:
    admin, client = fake_admin({A0: 2, A1: 3, B0: 2})
    task = asyncio.ensure_future(admin.elect_leaders([A1, A0], timeout_ms=1000))
    call = await next_call(client, ElectLeadersRequest)
    assert (call.node, call.version) == (2, 2)
    # ElectLeadersRequest.json v2: int8 election type (0: preferred), compact nullable topics[compact
    # name, compact int32 array, tags], int32 timeout, tags.
    assert call.request.encode(2) == i8(0) + carray([cstr("a") + carray([i32(0), i32(1)]) + NO_TAGS]) \
        + i32(1000) + NO_TAGS
    call.reply(ElectLeadersResponse(error_code=0, replica_election_results=[ReplicaElectionResult(
        topic="a", partition_result=[
            PartitionResult(partition_id=0, error_code=0, error_message=None),
            PartitionResult(partition_id=1, error_code=errors.ElectionNotNeededError.errno,
                            error_message=None)])]))
    assert await task == {A0: True, A1: False}

    task = asyncio.ensure_future(admin.elect_leaders(election_type="unclean"))
    call = await next_call(client, ElectLeadersRequest)
    assert call.request.encode(2) == i8(1) + b"\x00" + i32(30000) + NO_TAGS  # null topics: every partition
    call.reply(ElectLeadersResponse(error_code=0, replica_election_results=[ReplicaElectionResult(
        topic="b", partition_result=[PartitionResult(
            partition_id=0, error_code=errors.EligibleLeadersNotAvailableError.errno,
            error_message="none")])]))
    with pytest.raises(errors.EligibleLeadersNotAvailableError, match=r"b\[0\]"):
        await task


async def test_client_quotas_bytes_and_results() -> None:
    admin, client = fake_admin({A0: 1})
    task = asyncio.ensure_future(admin.describe_client_quotas(
        [QuotaFilterComponent("user", "alice"), QuotaFilterComponent("client-id", match_type="default")],
        strict=True))
    call = await next_call(client, DescribeClientQuotasRequest)
    # DescribeClientQuotasRequest.json v1: components[compact type, int8 match type, compact nullable
    # match, tags], bool strict, tags.
    assert call.request.encode(1) == carray([
        cstr("user") + i8(0) + cstr("alice") + NO_TAGS,
        cstr("client-id") + i8(1) + cstr(None) + NO_TAGS]) + i8(1) + NO_TAGS
    call.reply(DescribeClientQuotasResponse(error_code=0, error_message=None, entries=[EntryData(
        entity=[EntityData(entity_type="user", entity_name="alice"),
                EntityData(entity_type="client-id", entity_name=None)],
        values=[ValueData(key="producer_byte_rate", value=1024.0)])]))
    assert await task == {(("client-id", None), ("user", "alice")): {"producer_byte_rate": 1024.0}}

    task = asyncio.ensure_future(admin.alter_client_quotas(
        {(("user", "alice"),): {"producer_byte_rate": 2048, "consumer_byte_rate": None}}))
    call = await next_call(client, AlterClientQuotasRequest)
    # AlterClientQuotasRequest.json v1: entries[entity[compact type, compact nullable name, tags],
    # ops[compact key, float64 value, bool remove, tags], tags], bool validate only, tags.
    assert call.request.encode(1) == carray([
        carray([cstr("user") + cstr("alice") + NO_TAGS])
        + carray([cstr("producer_byte_rate") + f64(2048.0) + i8(0) + NO_TAGS,
                  cstr("consumer_byte_rate") + f64(0.0) + i8(1) + NO_TAGS]) + NO_TAGS]) + i8(0) + NO_TAGS
    call.reply(AlterClientQuotasResponse(entries=[AlterClientQuotasResponseEntryData(
        error_code=errors.InvalidRequestError.errno, error_message="bad key",
        entity=[AlterClientQuotasResponseEntityData(entity_type="user", entity_name="alice")])]))
    with pytest.raises(errors.InvalidRequestError, match="user=alice: bad key"):
        await task


async def test_tansu_lists_every_partition_as_reassigning(tansu: EmbeddedBroker,
                                                         new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    async with Admin(bootstrap_servers=tansu.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 2, 1)])
        found = await admin.list_partition_reassignments([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        assert found == {TopicPartition(topic, p): PartitionReassignment((111,)) for p in (0, 1)}


async def test_features_of_a_broker_that_finalizes_none(broker: EmbeddedBroker) -> None:
    async with Admin(bootstrap_servers=broker.bootstrap) as admin:
        features = await admin.describe_features()
    assert (features.finalized, features.supported) == ({}, {})  # neither broker reports any


async def test_features_read_from_api_versions() -> None:
    from aiokafka_lite.protocol.messages.api_versions import (
        ApiVersionsRequest,
        ApiVersionsResponse,
        FinalizedFeatureKey,
        SupportedFeatureKey,
    )

    admin, client = fake_admin({A0: 1})
    task = asyncio.ensure_future(admin.describe_features())
    call = await next_call(client, ApiVersionsRequest)
    assert call.version >= 3 and call.request.client_software_name == "aiokafka-lite"
    call.reply(ApiVersionsResponse(
        error_code=0, api_keys=[], finalized_features_epoch=12,
        supported_features=[SupportedFeatureKey(name="metadata.version", min_version=1, max_version=27)],
        finalized_features=[FinalizedFeatureKey(name="metadata.version", min_version_level=1,
                                                max_version_level=21)]))
    features = await task
    assert features.finalized == {"metadata.version": (1, 21)}
    assert features.supported == {"metadata.version": (1, 27)} and features.finalized_epoch == 12

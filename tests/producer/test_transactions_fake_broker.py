"""The TransactionManager against a scripted fake broker (tests/net/_net_fakes.py): the order of the
transactional requests, retries of the answers Kafka says to retry, and an abortable error, one answer at a
time as no real broker gives them on demand."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from aiokafka_lite import Producer
from aiokafka_lite import errors as Errors
from aiokafka_lite.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopicResult,
)
from aiokafka_lite.protocol.messages.end_txn import EndTxnResponse
from aiokafka_lite.protocol.messages.find_coordinator import Coordinator, FindCoordinatorResponse
from aiokafka_lite.protocol.messages.init_producer_id import InitProducerIdResponse
from aiokafka_lite.protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from aiokafka_lite.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "net"))
from _net_fakes import FakeBroker

PRODUCE, METADATA, FIND_COORDINATOR, INIT_PID, ADD_PARTITIONS, END_TXN = 0, 3, 10, 22, 24, 26
VERSIONS = {18: (0, 3), 0: (3, 8), 3: (0, 9), 10: (0, 4), 22: (0, 4), 24: (0, 3), 26: (0, 3)}


class Coordinator1:
    """One broker leading "t"-0 and coordinating every transactional id; scripted error codes for
    AddPartitionsToTxn and EndTxn, in order, before they succeed. ``log`` is every request's API key
    (ApiVersions and Metadata left out)."""

    def __init__(self, add_errors: list[int], end_errors: list[int]) -> None:
        self.port = 0
        self.add_errors = list(add_errors)
        self.end_errors = list(end_errors)
        self.log: list[int] = []
        self.ends: list[bool] = []

    async def __call__(self, conn: Any, header: Any, req: Any, frame: bytes) -> None:
        key = header.request_api_key
        if key != METADATA:
            self.log.append(key)
        if key == METADATA:
            part = MetadataResponsePartition(error_code=0, partition_index=0, leader_id=1, leader_epoch=0,
                                             replica_nodes=[1], isr_nodes=[1], offline_replicas=[])
            await conn.reply(header, MetadataResponse(
                throttle_time_ms=0,
                brokers=[MetadataResponseBroker(node_id=1, host="127.0.0.1", port=self.port)],
                cluster_id="fake", controller_id=1,
                topics=[MetadataResponseTopic(error_code=0, name="t", is_internal=False, partitions=[part])]))
        elif key == FIND_COORDINATOR:
            await conn.reply(header, FindCoordinatorResponse(throttle_time_ms=0, coordinators=[Coordinator(
                key=req.coordinator_keys[0], node_id=1, host="127.0.0.1", port=self.port, error_code=0,
                error_message=None)]))
        elif key == INIT_PID:
            await conn.reply(header, InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=7,
                                                            producer_epoch=0))
        elif key == ADD_PARTITIONS:
            code = self.add_errors.pop(0) if self.add_errors else 0
            result = AddPartitionsToTxnTopicResult(name="t", results_by_partition=[
                AddPartitionsToTxnPartitionResult(partition_index=0, partition_error_code=code)])
            await conn.reply(header, AddPartitionsToTxnResponse(throttle_time_ms=0,
                                                                results_by_topic_v3_and_below=[result]))
        elif key == PRODUCE:
            await conn.reply(header, ProduceResponse(throttle_time_ms=0, responses=[TopicProduceResponse(
                name="t", partition_responses=[PartitionProduceResponse(
                    index=0, error_code=0, base_offset=0, log_append_time_ms=-1, log_start_offset=0,
                    record_errors=[], error_message=None)])]))
        elif key == END_TXN:
            self.ends.append(req.committed)
            code = self.end_errors.pop(0) if self.end_errors else 0
            await conn.reply(header, EndTxnResponse(throttle_time_ms=0, error_code=code))


async def _run(add_errors: list[int], end_errors: list[int], body: Any) -> Coordinator1:
    script = Coordinator1(add_errors, end_errors)
    async with FakeBroker(script, versions=VERSIONS) as fake:
        script.port = fake.port
        async with Producer(bootstrap_servers=fake.bootstrap, transactional_id="tx", linger_ms=0,
                            retry_backoff_ms=10) as p:
            await body(p)
    return script


async def test_a_transaction_in_order_with_retried_answers() -> None:
    async def body(p: Producer) -> None:
        await p.begin_transaction()
        await (await p.send("t", b"v", partition=0))
        await p.commit_transaction()

    s = await _run([Errors.ConcurrentTransactionsError.errno], [Errors.ConcurrentTransactionsError.errno],
                   body)
    # InitProducerId first; the partition is added (once refused, retried) before its records go out; EndTxn
    # commits, once refused and retried.
    assert s.log.index(INIT_PID) < s.log.index(ADD_PARTITIONS) < s.log.index(PRODUCE) < s.log.index(END_TXN)
    assert s.log.count(ADD_PARTITIONS) == 2 and s.ends == [True, True]


async def test_an_unauthorized_partition_makes_the_transaction_abortable() -> None:
    async def body(p: Producer) -> None:
        await p.begin_transaction()
        fut = await p.send("t", b"v", partition=0)
        with pytest.raises(Errors.TopicAuthorizationFailedError):
            await asyncio.wait_for(fut, 10)  # fails with the reason, without waiting for the abort
        with pytest.raises(Errors.TopicAuthorizationFailedError, match="abort_transaction"):
            await p.commit_transaction()
        await p.abort_transaction()
        await p.begin_transaction()  # the producer goes on
        await (await p.send("t", b"w", partition=0))
        await p.commit_transaction()

    s = await _run([Errors.TopicAuthorizationFailedError.errno], [], body)
    # The refused partition got no records; nothing had been added, so that abort needed no EndTxn.
    assert s.log.count(PRODUCE) == 1 and s.ends == [True]

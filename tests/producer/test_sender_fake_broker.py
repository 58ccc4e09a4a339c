"""The Sender against a fake broker (tests/net/_net_fakes.py: a loopback server answering with our own
codecs exactly what each test scripts): what the producer does with each kind of Produce answer, one
answer at a time, which no real broker can be made to give on demand."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from aiokafka_lite import Producer
from aiokafka_lite import errors as Errors
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

METADATA, PRODUCE = 3, 0


class Script:
    """Answers Metadata with topic "t" (one partition, led by this broker) and each Produce with the next
    scripted error code (0: success at the next offset)."""

    def __init__(self, codes: list[int]) -> None:
        self.codes = codes
        self.produce = 0
        self.metadata = 0
        self.port = 0
        self.next_offset = 40

    async def __call__(self, conn: Any, header: Any, request: Any, frame: bytes) -> None:
        if header.request_api_key == METADATA:
            self.metadata += 1
            part = MetadataResponsePartition(error_code=0, partition_index=0, leader_id=1, leader_epoch=0,
                                             replica_nodes=[1], isr_nodes=[1], offline_replicas=[])
            await conn.reply(header, MetadataResponse(
                throttle_time_ms=0,
                brokers=[MetadataResponseBroker(node_id=1, host="127.0.0.1", port=self.port)],
                cluster_id="fake", controller_id=1,
                topics=[MetadataResponseTopic(error_code=0, name="t", is_internal=False, partitions=[part])]))
        elif header.request_api_key == PRODUCE:
            code = self.codes[self.produce] if self.produce < len(self.codes) else 0
            self.produce += 1
            base = -1 if code else self.next_offset
            if not code:
                self.next_offset += 1
            await conn.reply(header, ProduceResponse(throttle_time_ms=0, responses=[TopicProduceResponse(
                name="t", partition_responses=[PartitionProduceResponse(
                    index=0, error_code=code, base_offset=base, log_append_time_ms=-1, log_start_offset=0,
                    record_errors=[], error_message=None)])]))


async def _send_one(codes: list[int], **settings: Any) -> tuple[Any, Script]:
    script = Script(codes)
    async with FakeBroker(script, versions={18: (0, 3), 3: (0, 9), 0: (3, 8)}) as fake:
        script.port = fake.port
        settings = {"acks": 1, **settings}
        async with Producer(bootstrap_servers=fake.bootstrap, enable_idempotence=False, linger_ms=0,
                            retry_backoff_ms=10, **settings) as p:
            fut = await p.send("t", b"v", partition=0)
            try:
                return await fut, script
            except Errors.KafkaError as exc:
                return exc, script


async def test_a_moved_leader_refreshes_metadata_and_the_retry_lands() -> None:
    md, script = await _send_one([Errors.NotLeaderOrFollowerError.errno])
    assert md.offset == 40 and script.produce == 2
    assert script.metadata >= 2  # the refusal asked for fresh metadata before the retry


async def test_retriable_errors_are_retried_within_the_budget() -> None:
    md, script = await _send_one([Errors.RequestTimedOutError.errno, Errors.NotEnoughReplicasError.errno])
    assert md.offset == 40 and script.produce == 3


async def test_a_fatal_answer_fails_the_record_at_once() -> None:
    exc, script = await _send_one([Errors.TopicAuthorizationFailedError.errno])
    assert isinstance(exc, Errors.TopicAuthorizationFailedError) and script.produce == 1


async def test_retries_zero_fails_on_the_first_retriable_answer() -> None:
    exc, script = await _send_one([Errors.NotEnoughReplicasError.errno], retries=0)
    assert isinstance(exc, Errors.NotEnoughReplicasError) and script.produce == 1


@pytest.mark.parametrize("acks", [1, -1])
async def test_success_reports_the_broker_offset(acks: int) -> None:
    md, script = await _send_one([], acks=acks)
    assert (md.topic, md.partition, md.offset) == ("t", 0, 40) and script.produce == 1

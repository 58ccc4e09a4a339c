"""build_request makes the same ProduceRequest its constructors make, field for field and byte for byte."""

from __future__ import annotations

import asyncio

import pytest

from aiokafka_lite.producer.batch import ProducerBatch
from aiokafka_lite.producer.handles import BatchResult
from aiokafka_lite.producer.produce_wire import build_request
from aiokafka_lite.protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from aiokafka_lite.records import BatchBuilder
from aiokafka_lite.structs import TopicPartition


def _batches(loop: asyncio.AbstractEventLoop) -> list[ProducerBatch]:
    out = []
    for topic, partition, n in (("a", 0, 1), ("b", 3, 2), ("a", 2, 3), ("c-long-name" * 20, 0, 1)):
        tp = TopicPartition(topic, partition)
        batch = ProducerBatch(tp, BatchBuilder(0, 1 << 20), BatchResult(topic, partition, loop), 0.0, 0)
        for i in range(n):
            assert batch.builder is not None
            batch.builder.append(1000 + i, None, bytes([i]) * (9000 if i == 1 else 10))
        batch.close()
        out.append(batch)
    return out


@pytest.mark.parametrize("transactional_id", [None, "tx-1"])
def test_build_request_equals_the_constructed_request(transactional_id: str | None) -> None:
    loop = asyncio.new_event_loop()
    try:
        batches = _batches(loop)
        got = build_request(batches, acks=-1, timeout_ms=1234, transactional_id=transactional_id)
        by_topic: dict[str, list[PartitionProduceData]] = {}
        for b in batches:
            part = PartitionProduceData(index=b.tp.partition, records=b.data)
            by_topic.setdefault(b.tp.topic, []).append(part)
        want = ProduceRequest(transactional_id=transactional_id, acks=-1, timeout_ms=1234, topic_data=[
            TopicProduceData(name=t, partition_data=p) for t, p in by_topic.items()])
        assert type(got) is ProduceRequest
        assert repr(got) == repr(want)
        for version in range(ProduceRequest.MIN_VERSION, ProduceRequest.MAX_VERSION + 1):
            assert got.encode(version) == want.encode(version), version
    finally:
        loop.close()


def test_batch_outcomes_match_each_batch_to_its_partition_answer() -> None:
    """Two topics with the same partition numbers, an answer left out, a duplicate and a refusal."""
    from aiokafka_lite.errors import (
        DuplicateSequenceNumberError,
        KafkaConnectionError,
        NotLeaderForPartitionError,
    )
    from aiokafka_lite.producer.produce_wire import Ack, batch_outcomes
    from aiokafka_lite.protocol.messages.produce import (
        BatchIndexAndErrorMessage,
        PartitionProduceResponse,
        ProduceResponse,
        TopicProduceResponse,
    )

    loop = asyncio.new_event_loop()
    try:
        def batch(topic: str, partition: int) -> ProducerBatch:
            tp = TopicPartition(topic, partition)
            return ProducerBatch(tp, BatchBuilder(0, 1024), BatchResult(topic, partition, loop), 0.0, 0)

        def part(index: int, error: int = 0, base: int = -1) -> PartitionProduceResponse:
            return PartitionProduceResponse(index=index, error_code=error, base_offset=base,
                                            log_append_time_ms=7)

        refused = part(2, NotLeaderForPartitionError.errno)
        refused.record_errors = [BatchIndexAndErrorMessage(batch_index=3, batch_index_error_message="bad")]
        response = ProduceResponse(responses=[
            TopicProduceResponse(name="a", partition_responses=[
                part(0, base=10), part(1, DuplicateSequenceNumberError.errno, base=11), refused]),
            TopicProduceResponse(name="b", partition_responses=[part(0, base=20)]),
        ])
        batches = [batch("b", 0), batch("a", 0), batch("a", 1), batch("a", 2), batch("b", 1)]
        got = batch_outcomes(response, batches, 5)
        assert [b for b, _ in got] == batches
        assert got[0][1] == Ack(20, 7) and type(got[0][1]) is Ack
        assert got[1][1] == Ack(10, 7)
        assert got[2][1] == Ack(11, -1)  # DUPLICATE_SEQUENCE_NUMBER: written by an earlier attempt
        assert isinstance(got[3][1], NotLeaderForPartitionError) and "record 3: bad" in str(got[3][1])
        assert isinstance(got[4][1], KafkaConnectionError) and "b-1" in str(got[4][1])
    finally:
        loop.close()

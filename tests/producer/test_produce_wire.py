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

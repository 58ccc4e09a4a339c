"""Batch headers of what a mock cluster holds, read with raw Fetch requests.

librdkafka's mock cluster checks idempotent sequence numbers only for transactional producers
(``rd_kafka_mock_validate_records`` in rdkafka_mock.c returns at once without a TransactionalId). So when
a batch was written but its answer was lost (a broker set down with answers still delayed by an RTT
spike), the producer's correct retry -- the same producer id, epoch and base sequence -- is written a
second time, where Kafka would have answered it as a duplicate without writing it. To tell such replays
from real duplicates (the same records under a new sequence, which Kafka would have written too), the
chaos test needs each record's batch header; the confluent-kafka reader does not expose it.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any, NamedTuple

from aiokafka_lite.protocol import decode_response, encode_request
from aiokafka_lite.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from aiokafka_lite.records import read_batches

FETCH = 1
FETCH_VERSION = 4


class BatchOf(NamedTuple):
    producer_id: int
    producer_epoch: int
    base_sequence: int
    index: int  # the record's position in its batch


async def _fetch(addr: tuple[str, int], topic: str, partition: int, offset: int) -> tuple[int, int, bytes]:
    reader, writer = await asyncio.open_connection(*addr)
    try:
        req = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=8 << 20, isolation_level=0,
                           topics=[FetchTopic(topic=topic, partitions=[
                               FetchPartition(partition=partition, fetch_offset=offset,
                                              partition_max_bytes=8 << 20)])])
        writer.write(encode_request(req, FETCH_VERSION, 1, "chaos-batches"))
        await writer.drain()
        (size,) = struct.unpack(">i", await reader.readexactly(4))
        _, resp = decode_response(FETCH, FETCH_VERSION, await reader.readexactly(size))
        part = resp.responses[0].partitions[0]
        return part.error_code, part.high_watermark, part.records or b""
    finally:
        writer.close()


async def batch_headers(mc: Any, topic: str, partitions: int) -> dict[tuple[int, int], BatchOf]:
    """``(partition, offset) -> BatchOf`` for every record of ``topic`` on the mock cluster ``mc``."""
    out: dict[tuple[int, int], BatchOf] = {}
    addrs = [mc.broker_address(b) for b in mc.broker_ids]
    for p in range(partitions):
        offset, high = 0, None
        while high is None or offset < high:
            for addr in addrs:  # the leader answers; the others say NOT_LEADER_OR_FOLLOWER
                code, hw, data = await _fetch(addr, topic, p, offset)
                if code == 0:
                    break
            else:
                raise AssertionError(f"no broker served {topic}[{p}] at {offset}: last error {code}")
            high = hw
            batches = read_batches(data)
            if not batches and offset < high:
                raise AssertionError(f"empty fetch of {topic}[{p}] at {offset} below high watermark {high}")
            for b in batches:
                for i, r in enumerate(b.records):
                    out[(p, r.offset)] = BatchOf(b.producer_id, b.producer_epoch,
                                                                        b.base_sequence, i)
                offset = max(offset, b.base_offset + b.last_offset_delta + 1)
    return out

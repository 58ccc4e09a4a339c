"""A batch that does not decode: the records before it are delivered, then poll() raises an error that
names the topic, partition and offset and where seek() gets past it; after the seek, the records after it
come. Proven on Tansu, which stores a batch with a bad CRC (noida-db refuses it with CORRUPT_MESSAGE, as
Kafka does, so there a corrupt batch can only come from disk or the wire)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aiokafka_lite import Consumer, Producer, TopicPartition
from aiokafka_lite.config import COMMON, Config
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import CorruptRecordError
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from aiokafka_lite.records import BatchBuilder


async def _write_corrupt_batch(bootstrap: str, topic: str, values: list[bytes]) -> int:
    builder = BatchBuilder(0, 1 << 20)
    for v in values:
        builder.append(1, None, v, None)
    data = bytearray(builder.build())
    data[-3] ^= 0xFF  # inside the last record, after the CRC was computed
    code, offset = await _produce_raw(bootstrap, topic, bytes(data))
    assert code == 0, "Tansu 0.6 stores batches without checking their CRC"
    return offset


async def _produce_raw(bootstrap: str, topic: str, records: bytes) -> tuple[int, int]:
    """Send record-batch bytes as they are (what another client might write) to partition 0."""
    async with KafkaClient(Config(COMMON, {"bootstrap_servers": bootstrap})) as client:
        await client.refresh_metadata()
        node = client.cluster.leader_for(TopicPartition(topic, 0))
        assert node is not None
        request = ProduceRequest(acks=-1, timeout_ms=5000, topic_data=[TopicProduceData(
            name=topic, partition_data=[PartitionProduceData(index=0, records=records)])])
        response: Any = await client.send(node, request, max_version=9)
    part = response.responses[0].partition_responses[0]
    return int(part.error_code), int(part.base_offset)


@pytest.mark.parametrize("arrow", [False, True], ids=["records", "arrow"])
async def test_corrupt_batch_delivers_what_is_before_it_and_names_where_to_seek(
        tansu: EmbeddedBroker, new_topic: Callable[..., str], arrow: bool) -> None:
    topic = new_topic()
    async with Producer(bootstrap_servers=tansu.bootstrap, linger_ms=0) as p:
        await p.send_and_wait(topic, b"good-0", partition=0)
        await p.send_and_wait(topic, b"good-1", partition=0)
    bad_offset = await _write_corrupt_batch(tansu.bootstrap, topic, [b"bad-a", b"bad-b"])
    assert bad_offset == 2
    async with Producer(bootstrap_servers=tansu.bootstrap, linger_ms=0) as p:
        await p.send_and_wait(topic, b"good-4", partition=0)
    tp = TopicPartition(topic, 0)

    async def take(consumer: Consumer) -> list[bytes]:
        if arrow:
            got = await consumer.poll_arrow(timeout_ms=3000)
            return [v for b in got.values() for v in b.column("value").to_pylist()]
        got2 = await consumer.poll(timeout_ms=3000)
        return [r.value for rs in got2.values() for r in rs]  # type: ignore[misc]

    async with Consumer(bootstrap_servers=tansu.bootstrap, auto_offset_reset="earliest",
                        enable_auto_commit=False) as consumer:
        consumer.assign([tp])
        seen: list[bytes] = []
        error: CorruptRecordError | None = None
        for _ in range(10):
            try:
                seen += await take(consumer)
            except CorruptRecordError as exc:
                error = exc
                break
        assert seen == [b"good-0", b"good-1"]  # nothing before the bad batch is lost
        assert error is not None
        msg = str(error)
        assert f"{topic}-0" in msg and "offset 2" in msg and f"TopicPartition({topic!r}, 0), 4)" in msg, msg
        assert (error.topic, error.partition, error.offset, error.next_offset) == (topic, 0, 2, 4)
        assert await consumer.position(tp) == 2  # not moved past what was not delivered
        with pytest.raises(CorruptRecordError):  # still there until the application decides
            for _ in range(5):
                await take(consumer)
        consumer.seek(tp, 4)
        after: list[bytes] = []
        for _ in range(10):
            after += await take(consumer)
            if after:
                break
        assert after == [b"good-4"]


@pytest.mark.parametrize("arrow", [False, True], ids=["records", "arrow"])
async def test_a_header_key_that_is_not_utf8_is_delivered(
        broker: EmbeddedBroker, new_topic: Callable[..., str], arrow: bool) -> None:
    """Another client wrote a header key that is not UTF-8 (a valid batch otherwise): poll() and
    poll_arrow() deliver the record with U+FFFD in the key, and the records around it (it used to raise
    CorruptRecordError forever without moving)."""
    import google_crc32c

    topic = new_topic()
    builder = BatchBuilder(0, 1 << 20)
    builder.append(1, None, b"before", None)
    builder.append(2, None, b"poison", [("ab", b"x")])
    builder.append(3, None, b"after", None)
    data = bytearray(builder.build())
    pos = data.index(b"ab")
    data[pos:pos + 2] = b"\xed\xa0"
    data[17:21] = google_crc32c.value(bytes(data[21:])).to_bytes(4, "big")
    async with Producer(bootstrap_servers=broker.bootstrap) as p:  # creates the topic
        await p.send_and_wait(topic, b"first", partition=0)
    assert (await _produce_raw(broker.bootstrap, topic, bytes(data)))[0] == 0
    key = str(b"\xed\xa0", "utf-8", "replace")
    async with Consumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                        enable_auto_commit=False) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        got: list[tuple[bytes, Any]] = []
        for _ in range(20):
            if arrow:
                for b in (await consumer.poll_arrow(timeout_ms=2000)).values():
                    got += [(r["value"], [(h["key"], h["value"]) for h in r["headers"]])
                            for r in b.to_pylist()]
            else:
                for rs in (await consumer.poll(timeout_ms=2000)).values():
                    got += [(r.value, list(r.headers)) for r in rs]  # type: ignore[misc]
            if len(got) >= 4:
                break
    assert got == [(b"first", []), (b"before", []), (b"poison", [(key, b"x")]), (b"after", [])]

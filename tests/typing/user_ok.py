"""A user's script that uses the settings correctly: mypy --strict must accept it."""

from __future__ import annotations

import aiokafka_lite
from aiokafka_lite import Consumer, Producer


async def main() -> None:
    async with Producer(bootstrap_servers="127.0.0.1:9092", linger_ms=5, acks="all",
                        compression_type="lz4", enable_idempotence=True) as producer:
        fut = await producer.send("events", b"hello", key=b"k")
        md = await fut
        print(md.offset + 1)
    consumer = aiokafka_lite.Consumer("events", bootstrap_servers=["127.0.0.1:9092"], group_id="g",
                                      auto_offset_reset="earliest", max_poll_records=10)
    other: Consumer = consumer
    print(other)
    async with consumer:
        record = await consumer.getone()
        text: str = record.value.decode()             # bytes by default: no cast needed
        key: bytes | None = record.key                # records without a key have None
        print(text, key)
        for records in (await consumer.poll(timeout_ms=100)).values():
            for r in records:
                print(r.value.hex())
        async for r in consumer:
            print(len(r.value))
            break
    decoded = Consumer("events", bootstrap_servers="127.0.0.1:9092",
                       value_deserializer=lambda b: b.decode(), key_deserializer=int)
    async with decoded:
        rec = await decoded.getone()
        upper: str = rec.value.upper()                # the deserializer's type
        number: int | None = rec.key
        print(upper, number)
    admin = aiokafka_lite.Admin(bootstrap_servers="127.0.0.1:9092", request_timeout_ms=5000)
    print(admin)

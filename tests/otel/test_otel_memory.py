"""Instrumented clients keep no per-record state: memory stays flat over many traced records."""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

from aiokafka_lite import Consumer, Producer, TopicPartition


class Counting(SpanProcessor):
    """Counts ended spans by name and keeps none (so only our own memory is measured)."""

    def __init__(self) -> None:
        self.ended: dict[str, int] = {}

    def on_end(self, span: Any) -> None:
        self.ended[span.name] = self.ended.get(span.name, 0) + 1


async def _produce(producer: Producer, topic: str, n: int) -> None:
    futs = []
    for i in range(n):
        futs.append(await producer.send(topic, b"x" * 20, key=b"%d" % (i % 100), partition=0))
        if len(futs) >= 5000:
            await asyncio.gather(*futs)
            futs.clear()
    await asyncio.gather(*futs)


async def _consume(consumer: Consumer, n: int) -> None:
    for _ in range(n):
        await consumer.getone()


async def test_memory_flat_over_many_traced_records(tansu: Any, new_topic: Any) -> None:
    topic = new_topic()
    counting = Counting()
    provider = TracerProvider()
    provider.add_span_processor(counting)
    warm, n = 20_000, 200_000
    async with Producer(bootstrap_servers=tansu.bootstrap, tracer_provider=provider, linger_ms=20,
                        request_timeout_ms=10000) as producer, \
            Consumer(bootstrap_servers=tansu.bootstrap, tracer_provider=provider,
                     auto_offset_reset="earliest", request_timeout_ms=10000) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        await _produce(producer, topic, warm)
        await _consume(consumer, warm)
        # Allocated blocks rather than tracemalloc: as exact for a per-record leak (one object kept per
        # record is 200k blocks) and free, where tracemalloc would quadruple the run time.
        gc.collect()
        before = sys.getallocatedblocks()
        await _produce(producer, topic, n)
        await _consume(consumer, n)
        gc.collect()
        after = sys.getallocatedblocks()
    assert counting.ended[f"send {topic}"] == warm + n
    assert counting.ended[f"process {topic}"] == warm + n
    # 200k records traced both ways; anything kept per record would add 200k blocks or more.
    assert after - before < 20_000, f"{after - before} more blocks allocated"

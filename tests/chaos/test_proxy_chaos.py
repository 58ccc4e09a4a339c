"""Seeded chaos through the fault-injecting proxy (tests/producer/_kafka_proxy.py) in front of the real
brokers Tansu and noida-db.

Unlike librdkafka's mock cluster, both brokers check idempotent sequence numbers:
``test_broker_enforces_idempotent_sequences`` proves it on each before the chaos runs rely on it (a
replayed batch is not written twice, a batch with a sequence gap is refused with
OUT_OF_ORDER_SEQUENCE_NUMBER, the right next sequence is accepted). They differ in how they answer the
replay: Tansu 0.6 with DUPLICATE_SEQUENCE_NUMBER (46, no offset), noida-db 0.2.3 with no error and the
original offset, as Kafka does.

Each seed draws, with ``random.Random(seed)``, a list of faults for the proxy's Produce requests in
arrival order: injected retriable errors (not forwarded), dropped answers (forwarded and written, the
answer swallowed and the connection closed), delays of 50-500 ms, and closed connections (not
forwarded, everything in flight on that connection unanswered). Our idempotent producer must deliver
every record exactly once and in per-key order.
"""

from __future__ import annotations

import asyncio
import random
import struct
from collections.abc import Callable
from typing import Any

from _kafka_proxy import KafkaProxy
from _producer_peers import aread_confluent, create_topic
from _schedule import PRODUCE_ERRORS, account, record

from aiokafka_lite import Producer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.protocol import decode_response, encode_request
from aiokafka_lite.records import patch_producer_state

PRODUCE = 0
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
DUPLICATE_SEQUENCE_NUMBER = 46
TOTAL = 3000
PARTITIONS = 3
CHUNK = 20


def proxy_faults(seed: int, slots: int = 40) -> list[Any]:
    """The proxy's Produce faults of ``seed``: the first few requests pass, then each of ``slots``
    requests gets a fault with probability 0.3 (None = forwarded untouched)."""
    rng = random.Random(seed)
    faults: list[Any] = [None] * rng.randint(1, 4)
    for _ in range(slots):
        if rng.random() >= 0.3:
            faults.append(None)
            continue
        kind = rng.choice(("error", "drop", "delay", "close"))
        if kind == "error":
            faults.append(("error", rng.choice(PRODUCE_ERRORS)))
        elif kind == "delay":
            faults.append(("delay", round(rng.uniform(0.05, 0.5), 3)))
        else:
            faults.append(kind)
    if not any(faults):  # a seed without a single fault would test nothing
        faults.append("drop")
    return faults


async def _roundtrip(bootstrap: str, request: Any, version: int) -> tuple[int, int]:
    """Send one Produce request straight to the broker; its (error_code, base_offset)."""
    host, _, port = bootstrap.rpartition(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(encode_request(request, version, 7, "seq-probe"))
        await writer.drain()
        (size,) = struct.unpack(">i", await reader.readexactly(4))
        _, response = decode_response(PRODUCE, version, await reader.readexactly(size))
        part = response.responses[0].partition_responses[0]
        return part.error_code, part.base_offset
    finally:
        writer.close()


async def test_broker_enforces_idempotent_sequences(broker: EmbeddedBroker,
                                                    new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    async with KafkaProxy(broker.bootstrap) as proxy:
        proxy.capture = {PRODUCE}
        async with Producer(bootstrap_servers=proxy.bootstrap, enable_idempotence=True, acks="all",
                            linger_ms=0) as p:
            first = await p.send_and_wait(topic, b"seq-0", key=b"k")
    (_, version, request), = [c for c in proxy.captured if c[0] == PRODUCE]
    part = request.topic_data[0].partition_data[0]
    original = part.records
    pid, epoch, base_seq = struct.unpack_from(">qhi", original, 43)
    assert pid >= 0 and base_seq == 0

    # The same batch again: not written a second time (Kafka answers the original offset).
    code, offset = await _roundtrip(broker.bootstrap, request, version)
    print(f"{broker.kind}: replay of sequence 0 answered error {code} offset {offset} (first {first.offset})")
    assert code in (0, DUPLICATE_SEQUENCE_NUMBER), f"replay answered {code}"
    # A gap (next expected is 1): refused.
    part.records = patch_producer_state(original, pid, epoch, 5)
    code, _ = await _roundtrip(broker.bootstrap, request, version)
    print(f"{broker.kind}: sequence 5 after 0 answered error {code}")
    assert code == OUT_OF_ORDER_SEQUENCE_NUMBER, f"{broker.kind}: sequence gap answered {code}"
    # The right next sequence: written after the first.
    part.records = patch_producer_state(original, pid, epoch, 1)
    code, offset = await _roundtrip(broker.bootstrap, request, version)
    assert (code, offset) == (0, first.offset + 1)
    got = await aread_confluent(broker.bootstrap, topic, 2, timeout=10, settle=0.5)
    assert sorted(g.offset for g in got) == [first.offset, first.offset + 1]


async def test_ours_through_proxy_chaos(broker: EmbeddedBroker, proxy_seed: int,
                                        new_topic: Callable[..., str], chaos_table: Any) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, PARTITIONS)
    faults = proxy_faults(proxy_seed)
    async with KafkaProxy(broker.bootstrap) as proxy:
        proxy.faults.extend(faults)
        async with Producer(bootstrap_servers=proxy.bootstrap, enable_idempotence=True, acks="all",
                            linger_ms=2, request_timeout_ms=5000, delivery_timeout_ms=30_000) as p:
            futs = []
            for start in range(0, TOTAL, CHUNK):  # small chunks: many Produce requests meet the faults
                for i in range(start, start + CHUNK):
                    key, value = record(i)
                    futs.append(await p.send(topic, value, key=key))
                await asyncio.sleep(0.015)
            _, pending = await asyncio.wait(futs, timeout=60)
            assert not pending, f"{len(pending)} futures never completed"
            retries = p.metrics()["batch-retry-total"]
        injected, requests = proxy.injected, proxy.produce_requests
    acked = [i for i, f in enumerate(futs) if f.exception() is None]
    failed = {i: repr(f.exception()) for i, f in enumerate(futs) if f.exception() is not None}
    got = await aread_confluent(broker.bootstrap, topic, len(acked), timeout=15, settle=0.5)
    outcome = account(acked, failed, got)
    chaos_table.add(proxy_seed, f"aiokafka_lite/proxy/{broker.kind}", *outcome.numbers())
    detail = (f"{broker.kind} seed {proxy_seed}: {outcome} faults={faults} produce requests={requests} "
              f"injected={injected} batch retries={retries}")
    print(detail)
    assert injected > 0 and retries > 0, detail
    assert outcome.numbers() == (TOTAL, 0, 0, 0, 0), detail


async def test_control_the_harness_sees_duplicates_without_idempotence(
        broker: EmbeddedBroker, new_topic: Callable[..., str], chaos_table: Any) -> None:
    """The scoring can fail: without idempotence, a retried batch whose answer was dropped (the broker had
    written it) is written twice, and the read-back counts those copies as duplicates."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, PARTITIONS)
    async with KafkaProxy(broker.bootstrap) as proxy:
        proxy.faults.extend([None, None, "drop", None, None, "drop"])
        async with Producer(bootstrap_servers=proxy.bootstrap, enable_idempotence=False, acks="all",
                            linger_ms=2, retry_backoff_ms=10) as p:
            futs = []
            for start in range(0, 1000, CHUNK):
                for i in range(start, start + CHUNK):
                    key, value = record(i)
                    futs.append(await p.send(topic, value, key=key))
                await asyncio.sleep(0.015)
            await asyncio.wait(futs, timeout=60)
        assert proxy.injected == 2
    acked = [i for i, f in enumerate(futs) if f.done() and f.exception() is None]
    failed = {i: repr(f.exception()) for i, f in enumerate(futs) if f.done() and f.exception() is not None}
    got = await aread_confluent(broker.bootstrap, topic, len(acked), timeout=15, settle=0.5)
    outcome = account(acked, failed, got)
    chaos_table.add(-1, f"control-no-idempotence/proxy/{broker.kind}", *outcome.numbers())
    assert outcome.dup > 0, outcome

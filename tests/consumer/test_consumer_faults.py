"""Faults on librdkafka's mock cluster while consuming (assigned partitions; the mock's groups are broken
for two members): leader moves and a broker going down must neither skip nor repeat a record."""

from __future__ import annotations

import time
from typing import Any

from _consumer_helpers import aproduce

from aiokafka_lite.config import CONSUMER, Config
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.structs import TopicPartition as TP

PARTITIONS = 4


async def _consumer(bootstrap: str) -> tuple[Consumer, KafkaClient]:
    settings = {"bootstrap_servers": bootstrap, "auto_offset_reset": "earliest", "max_poll_records": 100,
                "fetch_max_wait_ms": 100, "metadata_max_age_ms": 2000, "request_timeout_ms": 5000,
                "retry_backoff_ms": 50}
    # The mock cluster's flexible Metadata answers carry a stray trailing byte; v8 is plain.
    client = KafkaClient(Config(CONSUMER, settings), api_version_caps={"Metadata": 8})
    await client.start()
    return Consumer(client=client, **settings), client


async def test_leader_moves_and_broker_down_lose_and_repeat_nothing(mock_cluster: Any) -> None:
    mc = mock_cluster(3)
    topic = "faults"
    mc.create_topic(topic, PARTITIONS, 3)
    await aproduce(mc.bootstrap, topic, 2000, PARTITIONS, **{"batch.num.messages": 50})
    consumer, client = await _consumer(mc.bootstrap)
    seen: dict[int, tuple[int, int]] = {}
    try:
        await consumer.start()
        consumer.assign([TP(topic, p) for p in range(PARTITIONS)])
        step, t_down = 0, 0.0
        deadline = time.monotonic() + 40
        while len(seen) < 4000 and time.monotonic() < deadline:
            for recs in (await consumer.poll(timeout_ms=200)).values():
                for r in recs:
                    k = int(r.value)
                    assert k not in seen, f"record {k} read twice: {seen[k]} and {(r.partition, r.offset)}"
                    seen[k] = (r.partition, r.offset)
            if step == 0 and len(seen) > 500:
                step = 1
                for p in range(PARTITIONS):  # every leader moves
                    mc.set_leader(topic, p, (p + 1) % 3 + 1)
            elif step == 1 and len(seen) > 1200:
                step, t_down = 2, time.monotonic()
                mc.set_down(2)  # leader of partition 0 and of partition 3
            elif step == 2 and time.monotonic() - t_down > 3:
                step = 3
                mc.set_up(2)
                await aproduce(mc.bootstrap, topic, 2000, PARTITIONS, start=2000,
                               **{"batch.num.messages": 50})
        assert step == 3, f"the run stopped at step {step} with {len(seen)} records"
        missing = [k for k in range(4000) if k not in seen]
        assert not missing, f"{len(missing)} records never arrived, e.g. {missing[:5]}"
        # Offsets per partition are consecutive: nothing skipped inside the log either.
        for p in range(PARTITIONS):
            offs = sorted(o for part, o in seen.values() if part == p)
            assert offs == list(range(len(offs)))
    finally:
        await consumer.stop()
        await client.close()


async def test_all_brokers_down_then_up_recovers(mock_cluster: Any) -> None:
    mc = mock_cluster(2)
    topic = "down"
    mc.create_topic(topic, 2, 2)
    await aproduce(mc.bootstrap, topic, 200, 2)
    consumer, client = await _consumer(mc.bootstrap)
    try:
        await consumer.start()
        consumer.assign([TP(topic, 0), TP(topic, 1)])
        got: set[bytes] = set()
        while len(got) < 200:
            for recs in (await consumer.poll(timeout_ms=2000)).values():
                got.update(r.value for r in recs)
        mc.set_down()  # every broker
        assert await consumer.poll(timeout_ms=1500) == {}
        mc.set_up()
        await aproduce(mc.bootstrap, topic, 100, 2, start=200)
        deadline = time.monotonic() + 30
        while len(got) < 300 and time.monotonic() < deadline:
            for recs in (await consumer.poll(timeout_ms=500)).values():
                for r in recs:
                    assert r.value not in got
                    got.add(r.value)
        assert len(got) == 300
    finally:
        await consumer.stop()
        await client.close()

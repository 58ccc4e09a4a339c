"""Metrics that only move under trouble: retries, errors and buffer waits on librdkafka's mock
cluster (faults injected there), and a rebalance's latency on Tansu."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aiokafka_lite import Consumer, Producer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import InvalidRecordError, KafkaTimeoutError

PRODUCE = 0
NOT_LEADER = 6


def value(entries: list[dict[str, Any]], group: str, name: str, **tags: str) -> Any:
    want = {k.replace("_", "-"): v for k, v in tags.items()}
    found = [e["value"] for e in entries if e["group"] == group and e["name"] == name
             and {k: v for k, v in e["tags"].items() if k != "client-id"} == want]
    assert len(found) == 1, f"{group}/{name} {tags}: {found}"
    return found[0]


@pytest.mark.asyncio
async def test_retries_and_errors_are_counted_per_client_and_topic(mock_cluster: Any) -> None:
    mc = mock_cluster(1)
    mc.create_topic("faulty", 1)
    async with Producer(bootstrap_servers=mc.bootstrap, retry_backoff_ms=10, linger_ms=0,
                        enable_idempotence=False, metrics_sample_window_ms=5000) as p:
        await p.send_and_wait("faulty", b"warm-up")
        mc.push_request_errors(PRODUCE, [NOT_LEADER, NOT_LEADER])  # retriable: two retries, then written
        await p.send_and_wait("faulty", b"retried")
        mc.push_request_errors(PRODUCE, [InvalidRecordError])  # not retriable: the record fails
        with pytest.raises(InvalidRecordError):
            await p.send_and_wait("faulty", b"refused")
        m = p.metrics(tagged=True)
    assert value(m, "producer-metrics", "record-send-total") == 2
    assert value(m, "producer-metrics", "record-retry-total") == 2
    assert value(m, "producer-metrics", "record-error-total") == 1
    assert value(m, "producer-metrics", "record-retry-rate") > 0
    assert value(m, "producer-metrics", "record-error-rate") > 0
    assert value(m, "producer-topic-metrics", "record-retry-total", topic="faulty") == 2
    assert value(m, "producer-topic-metrics", "record-error-total", topic="faulty") == 1


@pytest.mark.asyncio
async def test_bufferpool_wait_ratio_rises_while_send_waits_for_memory(mock_cluster: Any) -> None:
    mc = mock_cluster(1)
    mc.create_topic("slow", 1)
    async with Producer(bootstrap_servers=mc.bootstrap, buffer_memory=64 * 1024, batch_size=16 * 1024,
                        max_block_ms=400, linger_ms=0, metrics_sample_window_ms=1000) as p:
        await p.send_and_wait("slow", b"warm-up")
        assert value(p.metrics(tagged=True), "producer-metrics", "bufferpool-wait-ratio") == 0
        mc.set_down()  # nothing drains: the buffer fills and send() waits for memory until max_block_ms
        with pytest.raises(KafkaTimeoutError, match="max_block_ms"):
            while True:
                await p.send("slow", b"v" * 1000)
        m = p.metrics(tagged=True)
        mc.set_up()
        await p.flush()
    # 0.4 s waited within a window of at least 1 s (Java pads a young window): a ratio in (0, 0.4].
    assert 0.05 < value(m, "producer-metrics", "bufferpool-wait-ratio") <= 0.41
    assert value(m, "producer-metrics", "buffer-available-bytes") < 16 * 1024


@pytest.mark.asyncio
async def test_rebalance_latency_after_joining_a_group(tansu: EmbeddedBroker,
                                                      new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    async with Producer(bootstrap_servers=tansu.bootstrap) as p:
        await p.send_and_wait(topic, b"x")
    async with Consumer(topic, bootstrap_servers=tansu.bootstrap, group_id=f"g-{topic}",
                        auto_offset_reset="earliest", heartbeat_interval_ms=300,
                        session_timeout_ms=6000) as c:
        got = 0
        for _ in range(100):
            got += sum(len(v) for v in (await c.poll(timeout_ms=200)).values())
            if got:
                break
        assert got == 1
        m = c.metrics(tagged=True)
    assert value(m, "consumer-coordinator-metrics", "rebalance-total") >= 1
    assert value(m, "consumer-coordinator-metrics", "rebalance-latency-avg") > 0
    assert value(m, "consumer-coordinator-metrics", "rebalance-latency-max") >= \
        value(m, "consumer-coordinator-metrics", "rebalance-latency-avg")
    assert value(m, "consumer-coordinator-metrics", "last-rebalance-seconds-ago") >= 0

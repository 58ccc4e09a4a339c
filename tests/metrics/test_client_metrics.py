"""Java-named client metrics checked against known traffic on Tansu, and their Prometheus form."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest, start_http_server
from prometheus_client.parser import text_string_to_metric_families

from aiokafka_lite import Admin, Consumer, Producer, TopicPartition
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.metrics.prometheus import KafkaClientCollector

N, SIZE = 500, 200


def value(entries: list[dict[str, Any]], group: str, name: str, **tags: str) -> Any:
    want = {k.replace("_", "-"): v for k, v in tags.items()}
    found = [e["value"] for e in entries if e["group"] == group and e["name"] == name
             and {k: v for k, v in e["tags"].items() if k != "client-id"} == want]
    assert len(found) == 1, f"{group}/{name} {tags}: {found}"
    return found[0]


@pytest.mark.asyncio
async def test_producer_and_consumer_metrics_follow_traffic(tansu: EmbeddedBroker,
                                                            new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    async with Producer(bootstrap_servers=tansu.bootstrap, client_id="m-prod", linger_ms=20,
                        compression_type="gzip", metrics_sample_window_ms=1000) as p:
        for i in range(N):
            await p.send(topic, bytes([i % 251]) * SIZE, partition=i % 2)
        await p.flush()
        pm = p.metrics(tagged=True)
        flat = p.metrics()
    json.dumps(pm)
    assert all(e["tags"]["client-id"] == "m-prod" for e in pm)
    assert value(pm, "producer-metrics", "record-send-total") == N == flat["record-send-total"]
    assert value(pm, "producer-metrics", "record-send-rate") > 0
    assert value(pm, "producer-metrics", "record-error-total") == 0
    assert value(pm, "producer-metrics", "record-retry-rate") == 0
    batches = flat["batch-send-total"]
    assert 2 <= batches <= N
    # A batch holds the gzip-compressed records of one partition: more than one record's overhead, at
    # most all records of the partition uncompressed.
    assert 60 < value(pm, "producer-metrics", "batch-size-avg") < N * (SIZE + 20)
    assert 0 < value(pm, "producer-metrics", "compression-rate-avg") < 0.5
    assert value(pm, "producer-metrics", "request-latency-avg") > 0
    assert value(pm, "producer-metrics", "request-latency-max") >= value(pm, "producer-metrics",
                                                                         "request-latency-avg")
    assert value(pm, "producer-metrics", "buffer-available-bytes") == 32 * 1024 * 1024
    assert value(pm, "producer-metrics", "bufferpool-wait-ratio") == 0
    assert value(pm, "producer-metrics", "connection-count") >= 1
    assert value(pm, "producer-metrics", "connection-creation-total") >= 1
    assert 0 <= value(pm, "producer-metrics", "io-wait-ratio") <= 1
    assert value(pm, "producer-topic-metrics", "record-send-total", topic=topic) == N
    assert value(pm, "producer-topic-metrics", "byte-total", topic=topic) == flat["byte-total"]
    assert value(pm, "producer-node-metrics", "request-latency-avg", node_id="node-111") > 0
    assert value(pm, "producer-node-metrics", "request-total", node_id="node-111") >= 1

    async with Consumer(bootstrap_servers=tansu.bootstrap, client_id="m-cons", group_id=f"g-{topic}",
                        auto_offset_reset="earliest", enable_auto_commit=False) as c:
        tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        c.assign(tps)
        await c.seek_to_beginning(*tps)
        first = await c.poll(timeout_ms=5000, max_records=10)
        assert first
        lag_before = value(c.metrics(tagged=True), "consumer-fetch-manager-metrics", "records-lag-max")
        got = sum(len(v) for v in first.values())
        while got < N:
            got += sum(len(v) for v in (await c.poll(timeout_ms=5000)).values())
        await c.commit()
        await c.commit()
        cm = c.metrics(tagged=True)
    json.dumps(cm)
    assert lag_before > 0
    assert value(cm, "consumer-fetch-manager-metrics", "records-lag-max") == 0
    assert value(cm, "consumer-fetch-manager-metrics", "records-lag", topic=topic, partition="0") == 0
    assert value(cm, "consumer-fetch-manager-metrics", "records-consumed-total") == N
    # Bytes as fetched (Java counts batch bytes): gzip shrank the repetitive values well below N * SIZE.
    assert 0 < value(cm, "consumer-fetch-manager-metrics", "bytes-consumed-total") < N * SIZE
    assert value(cm, "consumer-fetch-manager-metrics", "records-consumed-total", topic=topic) == N
    assert value(cm, "consumer-fetch-manager-metrics", "bytes-consumed-total", topic=topic) == \
        value(cm, "consumer-fetch-manager-metrics", "bytes-consumed-total")
    assert value(cm, "consumer-fetch-manager-metrics", "records-consumed-rate", topic=topic) > 0
    assert value(cm, "consumer-fetch-manager-metrics", "fetch-latency-avg") > 0
    assert value(cm, "consumer-fetch-manager-metrics", "fetch-rate") > 0
    assert value(cm, "consumer-coordinator-metrics", "commit-total") == 2
    assert value(cm, "consumer-coordinator-metrics", "commit-latency-avg") > 0
    assert 0 <= value(cm, "consumer-metrics", "last-poll-seconds-ago") < 60
    assert value(cm, "consumer-metrics", "connection-count") >= 1


@pytest.mark.asyncio
async def test_prometheus_collector_exposes_every_client(tansu: EmbeddedBroker,
                                                         new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    async with Producer(bootstrap_servers=tansu.bootstrap, client_id="prom-p") as p, \
            Admin(bootstrap_servers=tansu.bootstrap, client_id="prom-a") as admin:
        for _ in range(7):
            await p.send(topic, b"x" * 10)
        await p.flush()
        await admin.list_topics()
        registry = CollectorRegistry()
        registry.register(KafkaClientCollector(p, admin))
        text = generate_latest(registry).decode()
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for fam in text_string_to_metric_families(text) for s in fam.samples}
    assert samples[("kafka_producer_record_send_total", (("client_id", "prom-p"),))] == 7
    assert samples[("kafka_producer_topic_record_send_total",
                    (("client_id", "prom-p"), ("topic", topic)))] == 7
    assert samples[("kafka_admin_client_connection_count", (("client_id", "prom-a"),))] >= 1
    assert ("kafka_producer_node_request_latency_avg", (("client_id", "prom-p"), ("node_id", "node-111"))) \
        in samples


@pytest.mark.asyncio
async def test_prometheus_http_scrape_from_its_own_thread(tansu: EmbeddedBroker,
                                                          new_topic: Callable[..., str]) -> None:
    """A real scrape: prometheus_client's HTTP server thread asks the collector while the loop runs."""
    import urllib.request

    topic = new_topic()
    registry = CollectorRegistry()
    async with Producer(bootstrap_servers=tansu.bootstrap, client_id="scraped") as p:
        await p.send_and_wait(topic, b"x")
        registry.register(KafkaClientCollector(p))
        server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
        try:
            url = f"http://127.0.0.1:{server.server_port}/metrics"
            body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read().decode())
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)
    samples = {(s.name, s.labels.get("topic")): s.value
               for fam in text_string_to_metric_families(body) for s in fam.samples}
    assert samples[("kafka_producer_record_send_total", None)] == 1
    assert samples[("kafka_producer_topic_record_send_total", topic)] == 1


@pytest.mark.asyncio
async def test_windowed_rate_forgets_old_traffic(tansu: EmbeddedBroker,
                                                 new_topic: Callable[..., str]) -> None:
    """With 2 samples of 300 ms, a rate covers at most 600 ms: it falls to 0 once sending stops."""
    topic = new_topic()
    async with Producer(bootstrap_servers=tansu.bootstrap, metrics_sample_window_ms=300,
                        metrics_num_samples=2) as p:
        for _ in range(50):
            await p.send(topic, b"r")
        await p.flush()
        assert value(p.metrics(tagged=True), "producer-metrics", "record-send-rate") > 0
        await asyncio.sleep(1.0)
        m = p.metrics(tagged=True)
    assert value(m, "producer-metrics", "record-send-rate") == 0
    assert value(m, "producer-metrics", "record-send-total") == 50


def test_cli_stats_shows_metrics_while_producing_and_consuming(tansu: EmbeddedBroker,
                                                               new_topic: Callable[..., str],
                                                               capfd: pytest.CaptureFixture[str]) -> None:
    from aiokafka_lite.cli import main

    topic = new_topic()
    assert main(["stats", "produce", topic, "-n", "300", "-s", "50", "--interval", "0.2", "--json",
                 "-b", tansu.bootstrap]) == 0
    snapshots = [json.loads(line) for line in capfd.readouterr().out.splitlines()]
    assert snapshots[-1]["at"] == "final"
    assert value(snapshots[-1]["metrics"], "producer-metrics", "record-send-total") == 300
    assert main(["stats", "consume", topic, "-n", "300", "--match", "records-", "-b", tansu.bootstrap]) == 0
    out = capfd.readouterr().out
    final = out[out.index("-- final"):]
    assert "records-consumed-total" in final and "records-lag-max" in final
    assert "fetch-latency" not in final  # --match filters

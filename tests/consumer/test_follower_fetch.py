"""Fetching from the closest replica (KIP-392) on librdkafka's mock cluster.

Three brokers in racks r1, r2, r3; the partitions are led by brokers 1 and 2 and the consumer sits in
rack r3. The mock does not choose the replica from the rack itself: ``set_follower`` names the replica
its leader answers with as PreferredReadReplica (Fetch v11+, rdkafka_mock_handlers.c: the leader sends
it, with no records, when a follower is set; the follower then serves the fetch), which stands in for
the broker's RackAwareReplicaSelector. Request tracking counts the Fetch requests each broker got.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest
from _consumer_helpers import aproduce

from aiokafka_lite import errors as Errors
from aiokafka_lite.config import CONSUMER, Config
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.protocol.messages.fetch import FetchRequest
from aiokafka_lite.structs import TopicPartition as TP
from aiokafka_lite.testing import MockCluster

PARTITIONS = 3
FETCH = 1
FOLLOWER = 3


def _cluster(mock_cluster: Any, topic: str) -> MockCluster:
    mc: MockCluster = mock_cluster(3)
    for broker in (1, 2, 3):
        mc.set_rack(broker, f"r{broker}")
    mc.create_topic(topic, PARTITIONS, 3)
    for p in range(PARTITIONS):
        mc.set_leader(topic, p, 1 + p % 2)  # led in racks r1 and r2
        mc.set_follower(topic, p, FOLLOWER)  # the replica in the consumer's rack
    return mc


async def _consumer(bootstrap: str, **extra: Any) -> tuple[Consumer, KafkaClient]:
    settings = {"bootstrap_servers": bootstrap, "auto_offset_reset": "earliest", "max_poll_records": 200,
                "fetch_max_wait_ms": 100, "request_timeout_ms": 5000, "retry_backoff_ms": 50,
                "reconnect_backoff_ms": 20, "reconnect_backoff_max_ms": 200, "client_rack": "r3", **extra}
    # The mock cluster's flexible Metadata answers carry a stray trailing byte; v8 is plain.
    client = KafkaClient(Config(CONSUMER, settings), api_version_caps={"Metadata": 8})
    await client.start()
    consumer = Consumer(client=client, **settings)
    await consumer.start()
    return consumer, client


class Reader:
    """Consumes and checks: every value once, offsets of each partition consecutive from 0."""

    def __init__(self, consumer: Consumer) -> None:
        self.consumer = consumer
        self.seen: dict[int, tuple[int, int]] = {}

    async def _poll(self) -> None:
        for recs in (await self.consumer.poll(timeout_ms=100)).values():
            for r in recs:
                k = int(r.value)
                assert k not in self.seen, f"record {k} read twice: {self.seen[k]}, {(r.partition, r.offset)}"
                self.seen[k] = (r.partition, r.offset)

    async def until(self, count: int, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while len(self.seen) < count and time.monotonic() < deadline:
            await self._poll()
        assert len(self.seen) >= count, f"only {len(self.seen)} of {count} records arrived"

    async def spin(self, seconds: float) -> None:
        """Keep polling for ``seconds``, whatever arrives (checked all the same)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await self._poll()

    def check(self, total: int) -> None:
        assert sorted(self.seen) == list(range(total))
        for p in range(PARTITIONS):
            offs = sorted(o for part, o in self.seen.values() if part == p)
            assert offs == list(range(len(offs)))


def fetches(mc: MockCluster) -> Counter[int]:
    return Counter(r.broker_id for r in mc.requests() if r.api_key == FETCH)


def test_rack_id_goes_in_the_fetch_request() -> None:
    from aiokafka_lite.consumer.fetch_session import FetchRequestData
    from aiokafka_lite.consumer.fetcher import Fetcher
    from aiokafka_lite.consumer.metrics import ConsumerMetrics
    from aiokafka_lite.consumer.subscription import SubscriptionState

    config = Config(CONSUMER, {"client_rack": "r3"})
    fetcher = Fetcher(None, SubscriptionState(), config, ConsumerMetrics())
    req, _ = fetcher._build_request(11, FetchRequestData(0, 0, {}, []))
    assert isinstance(req, FetchRequest) and req.rack_id == "r3"


async def test_most_fetches_go_to_the_replica_in_our_rack(mock_cluster: Any) -> None:
    topic = "near"
    mc = _cluster(mock_cluster, topic)
    await aproduce(mc.bootstrap, topic, 3000, PARTITIONS, **{"batch.num.messages": 50})
    consumer, client = await _consumer(mc.bootstrap)
    try:
        mc.start_request_tracking()
        consumer.assign([TP(topic, p) for p in range(PARTITIONS)])
        reader = Reader(consumer)
        await reader.until(3000)
        reader.check(3000)
        counts = fetches(mc)
        share = counts[FOLLOWER] / sum(counts.values())
        print(f"fetch requests per broker {dict(counts)}: {share:.0%} to the follower in our rack")
        assert share > 0.8, counts
    finally:
        await consumer.stop()
        await client.close()


async def test_without_rack_or_follower_everything_goes_to_the_leaders(mock_cluster: Any) -> None:
    topic = "far"
    mc = _cluster(mock_cluster, topic)
    for p in range(PARTITIONS):
        mc.set_follower(topic, p, -1)
    await aproduce(mc.bootstrap, topic, 600, PARTITIONS)
    consumer, client = await _consumer(mc.bootstrap)
    try:
        mc.start_request_tracking()
        consumer.assign([TP(topic, p) for p in range(PARTITIONS)])
        reader = Reader(consumer)
        await reader.until(600)
        assert fetches(mc)[FOLLOWER] == 0
    finally:
        await consumer.stop()
        await client.close()


async def test_follower_down_back_to_the_leader_nothing_lost_or_repeated(mock_cluster: Any) -> None:
    topic = "down"
    mc = _cluster(mock_cluster, topic)
    await aproduce(mc.bootstrap, topic, 1500, PARTITIONS, **{"batch.num.messages": 50})
    consumer, client = await _consumer(mc.bootstrap, max_poll_records=50)
    try:
        consumer.assign([TP(topic, p) for p in range(PARTITIONS)])
        reader = Reader(consumer)
        await reader.until(300)
        mc.start_request_tracking()
        mc.set_down(FOLLOWER)
        await reader.spin(1)  # fetches to the follower fail; the leader still names it
        # The leader notices its follower is gone (Kafka: it leaves the ISR) and stops naming it.
        for p in range(PARTITIONS):
            mc.set_follower(topic, p, -1)
        await aproduce(mc.bootstrap, topic, 1500, PARTITIONS, start=1500, **{"batch.num.messages": 50})
        await reader.until(3000)
        reader.check(3000)
        counts = fetches(mc)
        assert counts[1] and counts[2], counts  # the leaders served the rest
    finally:
        await consumer.stop()
        await client.close()


async def test_lagging_follower_out_of_range_is_no_reset(mock_cluster: Any) -> None:
    """OFFSET_OUT_OF_RANGE from a follower that lags means "ask the leader", not auto_offset_reset
    (which, being earliest here, would read everything twice)."""
    topic = "lag"
    mc = _cluster(mock_cluster, topic)
    await aproduce(mc.bootstrap, topic, 600, PARTITIONS)
    consumer, client = await _consumer(mc.bootstrap)
    try:
        consumer.assign([TP(topic, p) for p in range(PARTITIONS)])
        reader = Reader(consumer)
        await reader.until(600)
        ends = {p: (await consumer.end_offsets([TP(topic, p)]))[TP(topic, p)] for p in range(PARTITIONS)}
        for p in range(PARTITIONS):  # the follower falls behind our position and stays there
            mc.set_follower_wmarks(topic, p, -1, ends[p] - 5)
        await aproduce(mc.bootstrap, topic, 600, PARTITIONS, start=600)
        mc.start_request_tracking()
        await reader.spin(1.5)  # out of range on the follower, back to the leader...
        before = fetches(mc)
        assert before[1] + before[2] > 0, before
        for p in range(PARTITIONS):  # ...which names the follower again until it has caught up
            mc.set_follower_wmarks(topic, p, -1, -1)
        await reader.until(1200)
        reader.check(1200)
    finally:
        await consumer.stop()
        await client.close()


async def test_back_to_the_leader_after_metadata_max_age(mock_cluster: Any) -> None:
    """The replica is followed for metadata_max_age_ms at a time; then the leader is asked again."""
    topic = "age"
    mc = _cluster(mock_cluster, topic)
    await aproduce(mc.bootstrap, topic, 300, PARTITIONS)
    consumer, client = await _consumer(mc.bootstrap, metadata_max_age_ms=400)
    try:
        consumer.assign([TP(topic, p) for p in range(PARTITIONS)])
        reader = Reader(consumer)
        await reader.until(300)
        mc.start_request_tracking()
        await reader.spin(2.0)
        counts = fetches(mc)
        # About five returns to each leader in 2 s; the rest of the fetches stay on the follower.
        assert counts[1] >= 3 and counts[2] >= 3 and counts[FOLLOWER] > counts[1] + counts[2], counts
    finally:
        await consumer.stop()
        await client.close()


@pytest.mark.parametrize("error", [Errors.NotLeaderOrFollowerError, Errors.ReplicaNotAvailableError])
async def test_follower_error_sends_the_partition_back_to_the_leader(mock_cluster: Any, error: Any) -> None:
    """The follower answers NOT_LEADER_OR_FOLLOWER / REPLICA_NOT_AVAILABLE (it left the replica set):
    the next fetch goes to the leader, which names a replica again; nothing is lost or repeated."""
    topic = "err"
    mc = _cluster(mock_cluster, topic)
    await aproduce(mc.bootstrap, topic, 600, PARTITIONS)
    consumer, client = await _consumer(mc.bootstrap)
    try:
        consumer.assign([TP(topic, p) for p in range(PARTITIONS)])
        reader = Reader(consumer)
        await reader.until(600)
        mc.start_request_tracking()
        mc.push_request_error_rtts(FOLLOWER, FETCH, [(error, 0)])
        await aproduce(mc.bootstrap, topic, 600, PARTITIONS, start=600)
        await reader.until(1200)
        reader.check(1200)
        counts = fetches(mc)
        assert counts[1] and counts[2], counts  # each leader was asked again after the error
    finally:
        await consumer.stop()
        await client.close()

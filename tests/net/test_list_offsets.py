"""The one ListOffsets client (net/list_offsets.py) on librdkafka's mock cluster: leader moves and retriable
errors are asked again, final errors are not, a missing topic is final only when the caller says so, and a
partition unanswered at the deadline gets a KafkaTimeoutError carrying the last error (issue 13: three clients
with three retry policies became this one)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from aiokafka_lite import errors as Errors
from aiokafka_lite.config import Config
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.net.list_offsets import EARLIEST, LATEST, ListedOffset, list_offsets
from aiokafka_lite.structs import TopicPartition

CAPS = {"Metadata": 8}
LIST_OFFSETS = 2


async def _produce(bootstrap: str, topic: str, n: int) -> None:
    from aiokafka_lite import Producer

    async with Producer(bootstrap_servers=bootstrap, linger_ms=0) as producer:
        for i in range(n):
            await producer.send(topic, b"v%d" % i, partition=0)


async def test_answers_across_leaders_and_through_retriable_errors(
    mock_cluster: Any, make_config: Callable[..., Config]
) -> None:
    mc = mock_cluster(3)
    mc.create_topic("lo", partitions=3)
    for p, node in enumerate((1, 2, 3)):
        mc.set_leader("lo", p, node)
    await _produce(mc.bootstrap, "lo", 5)
    tps = [TopicPartition("lo", p) for p in range(3)]
    async with KafkaClient(make_config(mc.bootstrap), api_version_caps=CAPS) as client:
        await client.wait_for_topic("lo", 5000)
        # Each of the three leaders first says "not me", then "unknown partition": both are retriable.
        mc.push_request_errors(LIST_OFFSETS,
                               [Errors.NotLeaderOrFollowerError, Errors.LeaderNotAvailableError] * 3)
        got = await list_offsets(client, dict.fromkeys(tps, LATEST), timeout=10, retry_backoff_ms=10)
        assert got == {tps[0]: ListedOffset(5, -1, got[tps[0]].leader_epoch),  # type: ignore[union-attr]
                       tps[1]: ListedOffset(0, -1, got[tps[1]].leader_epoch),  # type: ignore[union-attr]
                       tps[2]: ListedOffset(0, -1, got[tps[2]].leader_epoch)}  # type: ignore[union-attr]
        assert sum(mc.error_stack_count(b, LIST_OFFSETS) for b in (1, 2, 3)) == 0  # the errors were all used
        early = await list_offsets(client, {tps[0]: EARLIEST}, timeout=5)
        assert early[tps[0]] == ListedOffset(0, -1, early[tps[0]].leader_epoch)  # type: ignore[union-attr]


async def test_a_final_error_is_not_retried_and_a_timeout_carries_the_last_error(
    mock_cluster: Any, make_config: Callable[..., Config]
) -> None:
    mc = mock_cluster(1)
    mc.create_topic("lo2", partitions=1)
    tp = TopicPartition("lo2", 0)
    async with KafkaClient(make_config(mc.bootstrap), api_version_caps=CAPS) as client:
        await client.wait_for_topic("lo2", 5000)
        mc.push_request_errors(LIST_OFFSETS, [Errors.TopicAuthorizationFailedError, 0])
        started = time.monotonic()
        got = await list_offsets(client, {tp: LATEST}, timeout=10, retry_backoff_ms=10)
        assert isinstance(got[tp], Errors.TopicAuthorizationFailedError)
        assert time.monotonic() - started < 5
        mc.clear_request_errors(LIST_OFFSETS)
        mc.push_request_errors(LIST_OFFSETS, [Errors.NotLeaderOrFollowerError] * 200)
        got = await list_offsets(client, {tp: LATEST}, timeout=1.0, retry_backoff_ms=20,
                                 retry_backoff_max_ms=50)
        error = got[tp]
        assert isinstance(error, Errors.KafkaTimeoutError), error
        assert "lo2[0]" in str(error) and isinstance(error.__cause__, Errors.NotLeaderOrFollowerError)
        mc.clear_request_errors(LIST_OFFSETS)


async def test_a_missing_topic_is_final_only_when_asked(
    mock_cluster: Any, make_config: Callable[..., Config]
) -> None:
    mc = mock_cluster(1)
    mc.create_topic("present", partitions=1)
    missing = TopicPartition("absent-topic", 0)
    beyond = TopicPartition("present", 7)
    async with KafkaClient(make_config(mc.bootstrap),
                           api_version_caps=CAPS) as client:
        started = time.monotonic()
        got = await list_offsets(client, {missing: LATEST, beyond: LATEST}, timeout=10,
                                 missing_topics_final=True)
        assert isinstance(got[missing], Errors.UnknownTopicOrPartitionError)
        assert not got[missing].retriable and "does not exist" in str(got[missing])
        assert isinstance(got[beyond], Errors.UnknownTopicOrPartitionError)
        assert "partitions 0..0 do" in str(got[beyond])
        assert time.monotonic() - started < 5
        got = await list_offsets(client, {missing: LATEST}, timeout=1.0, retry_backoff_ms=50)
        assert isinstance(got[missing], Errors.KafkaTimeoutError)  # waited for it, as a consumer does


async def test_latest_offsets_is_the_true_end_even_where_list_offsets_falls_short(
    broker: Any, new_topic: Callable[..., str], make_config: Callable[..., Config]
) -> None:
    """One batch of 5 records: Tansu 0.6 answers ListOffsets(latest) with the batch's base offset plus one;
    ``latest_offsets`` (the CLI's and the Spark source's one lookup of the end) still says 5, on both
    brokers."""
    from aiokafka_lite import Producer
    from aiokafka_lite.net.list_offsets import latest_offsets

    topic = new_topic()
    async with Producer(bootstrap_servers=broker.bootstrap, linger_ms=50) as producer:
        futures = [await producer.send(topic, b"v%d" % i, partition=0) for i in range(5)]
        await producer.flush()
        for f in futures:
            await f
    tp = TopicPartition(topic, 0)
    async with KafkaClient(make_config(broker.bootstrap)) as client:
        await client.wait_for_topic(topic, 5000)
        got = await latest_offsets(client, [tp], timeout=10)
    assert isinstance(got[tp], ListedOffset) and got[tp].offset == 5

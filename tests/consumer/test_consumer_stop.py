"""stop() while poll() waits inside a rebalance: the poll raises ConsumerStoppedError (it used to raise
AttributeError: close() clears the join task that the waiting poll() reads after its await)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from _consumer_helpers import create_topic

from aiokafka_lite import Consumer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import ConsumerStoppedError


@pytest.mark.parametrize("how", ["poll", "getone", "async-for"])
async def test_stop_during_a_rebalance_stops_a_waiting_poll(
        tansu: EmbeddedBroker, new_topic: Callable[..., str], how: str) -> None:
    # Tansu holds a first JoinGroup for half the session timeout: the join is in progress throughout.
    topic = new_topic()
    await asyncio.to_thread(create_topic, tansu.bootstrap, topic, 2)
    consumer = Consumer(topic, bootstrap_servers=tansu.bootstrap, group_id=f"{topic}-g",
                        session_timeout_ms=10_000, auto_offset_reset="earliest")
    await consumer.start()

    async def use() -> object:
        if how == "poll":
            return await consumer.poll(timeout_ms=20_000)
        if how == "getone":
            return await consumer.getone()
        async for record in consumer:
            return record
        return None

    task = asyncio.ensure_future(use())
    await asyncio.sleep(0.5)
    assert not task.done()
    assert consumer._coordinator is not None and consumer._coordinator.protocol._join_task is not None
    await asyncio.wait_for(consumer.stop(), 15)
    done, _ = await asyncio.wait([task], timeout=5)
    assert done, "poll() did not return after stop()"
    if how == "async-for":
        assert task.exception() is None and task.result() is None  # iteration just ends
    else:
        with pytest.raises(ConsumerStoppedError):
            task.result()


@pytest.mark.parametrize("name", ["bad topic!", "", "..", ".", "x" * 250, "tópico", 7])
async def test_subscribing_to_an_illegal_topic_name_raises(tansu: EmbeddedBroker, name: object) -> None:
    """An illegal topic name used to wait for its metadata forever; Kafka's rule refuses it at once."""
    from aiokafka_lite.errors import IllegalArgumentError

    async with Consumer(bootstrap_servers=tansu.bootstrap, group_id="g-illegal") as consumer:
        with pytest.raises(IllegalArgumentError, match="illegal topic name"):
            consumer.subscribe([name])  # type: ignore[list-item]
        assert consumer.subscription() == set()
        consumer.subscribe(["a-legal.topic_name"])
        assert consumer.subscription() == {"a-legal.topic_name"}

"""The order service's tests: only the testing kit's fixtures (kafka_broker, kafka_cluster, kafka_topic)
and helpers (produce, read_back), as docs/testing.md shows them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from orders import Biller, OrderTotals

import aiokafka_lite
from aiokafka_lite import TopicPartition
from aiokafka_lite.testing import produce, read_back


async def wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def running(app: Any) -> AsyncIterator[Any]:
    """Run ``app.run()`` in a task for the block; stop it after, and fail if it failed."""
    task = asyncio.create_task(app.run())
    try:
        yield app
    finally:
        app.stop()
        await asyncio.wait_for(task, 30)


async def committed(bootstrap: str, group: str, topic: str, partitions: int) -> int:
    async with aiokafka_lite.Consumer(bootstrap_servers=bootstrap, group_id=group) as consumer:
        offsets = [await consumer.committed(TopicPartition(topic, p)) for p in range(partitions)]
    return sum(o or 0 for o in offsets)


async def test_orders_are_summed_and_committed(kafka_broker, kafka_topic):
    topic = await kafka_topic(partitions=2)
    await produce(kafka_broker, topic, [b"ann:100", b"bob:250", b"ann:50"])

    totals = OrderTotals(kafka_broker.bootstrap, topic, group=f"{topic}-totals")
    async with running(totals):
        await wait_for(lambda: totals.processed == 3)
    assert totals.totals == {"ann": 150, "bob": 250}
    assert await committed(kafka_broker.bootstrap, f"{topic}-totals", topic, 2) == 3

    # A restarted service resumes after what it committed: nothing is counted twice.
    await produce(kafka_broker, topic, [b"bob:1"])
    again = OrderTotals(kafka_broker.bootstrap, topic, group=f"{topic}-totals")
    async with running(again):
        await wait_for(lambda: again.processed == 1)
    assert again.totals == {"bob": 1}


async def test_invoices_and_offsets_commit_in_one_transaction(kafka_broker, kafka_topic):
    orders, invoices = await kafka_topic(), await kafka_topic()
    await produce(kafka_broker, orders, [b"ann:100", b"bob:10"])

    biller = Biller(kafka_broker.bootstrap, orders, invoices, group=f"{orders}-billing",
                    transactional_id=f"{orders}-biller")
    async with running(biller):
        await wait_for(lambda: biller.invoiced == 2)

    got = await read_back(kafka_broker, invoices, 2)  # read_committed: only committed invoices
    assert sorted(r.value for r in got) == [b"ann:120", b"bob:12"]
    assert await committed(kafka_broker.bootstrap, f"{orders}-billing", orders, 1) == 2


async def test_totals_recover_from_a_cluster_outage(kafka_cluster, kafka_topic):
    topic = await kafka_topic(partitions=3, on=kafka_cluster)
    # The mock cluster serves KIP-848 groups (classic JoinGroup v6 does not parse there).
    totals = OrderTotals(kafka_cluster.bootstrap, topic, group=f"{topic}-totals", group_protocol="consumer")
    async with running(totals), aiokafka_lite.Producer(bootstrap_servers=kafka_cluster.bootstrap) as producer:
        await asyncio.gather(*[await producer.send(topic, b"ann:1") for _ in range(6)])
        await wait_for(lambda: totals.processed == 6)
        with kafka_cluster.broker_down():  # every broker refuses connections, the coordinator too
            late = [await producer.send(topic, b"bob:5") for _ in range(4)]
            await asyncio.sleep(2.0)  # the outage
            assert totals.processed == 6 and not any(f.done() for f in late)
        await asyncio.wait_for(asyncio.gather(*late), 30)  # delivered once the brokers are back
        await wait_for(lambda: totals.processed == 10)
    assert totals.totals == {"ann": 6, "bob": 20}
    assert await committed(kafka_cluster.bootstrap, f"{topic}-totals", topic, 3) == 10


async def test_a_slow_broker_and_injected_errors_only_delay_the_totals(kafka_cluster, kafka_topic):
    topic = await kafka_topic(partitions=1, on=kafka_cluster)
    kafka_cluster.set_leader(topic, 0, 2)  # a leader move before the service starts
    # The mock cluster serves KIP-848 groups (classic JoinGroup v6 does not parse there).
    totals = OrderTotals(kafka_cluster.bootstrap, topic, group=f"{topic}-totals", group_protocol="consumer")
    async with running(totals):
        with kafka_cluster.delayed_link(2, 300):
            await produce(kafka_cluster, topic, [b"ann:1", b"ann:2"])
            await wait_for(lambda: totals.processed == 2)
        kafka_cluster.push_request_errors(1, [aiokafka_lite.errors.NotLeaderOrFollowerError] * 2)  # Fetch
        kafka_cluster.set_leader(topic, 0, 3)
        await produce(kafka_cluster, topic, [b"ann:3"])
        await wait_for(lambda: totals.processed == 3)
    assert totals.totals == {"ann": 6}

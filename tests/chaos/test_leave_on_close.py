"""stop() while the group coordinator is unknown (NOT_COORDINATOR just came back, the lookup still
failing): the member finds the coordinator within the close timeout and sends LeaveGroup, so the group
does not wait a session timeout for it (it used to skip the LeaveGroup). On noida-db behind a fault proxy."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from _noida_faults import FaultProxy, create_topic

from aiokafka_lite import Consumer
from aiokafka_lite.embedded import EmbeddedBroker

HEARTBEAT, FIND_COORDINATOR, LEAVE_GROUP = 12, 10, 13


async def test_stop_with_the_coordinator_unknown_still_leaves_the_group(
        noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 2)
    async with FaultProxy(noida.bootstrap) as proxy:
        consumer = Consumer(topic, bootstrap_servers=proxy.bootstrap, group_id=f"{topic}-g",
                            session_timeout_ms=6000, heartbeat_interval_ms=100,
                            enable_auto_commit=False)  # no commit on close to find the coordinator first
        await consumer.start()
        for _ in range(100):
            await consumer.poll(timeout_ms=100)
            if consumer.assignment():
                break
        assert consumer.assignment()
        coordinator = consumer._coordinator
        assert coordinator is not None
        proxy.inject(FIND_COORDINATOR, 15, count=3)  # COORDINATOR_NOT_AVAILABLE: the lookup keeps failing
        proxy.inject(HEARTBEAT, 16)  # NOT_COORDINATOR: the member forgets its coordinator
        for _ in range(100):
            if coordinator.coordinator_id is None:
                break
            await asyncio.sleep(0.02)
        assert coordinator.coordinator_id is None
        leaves_before = proxy.requests.get(LEAVE_GROUP, 0)
        await asyncio.wait_for(consumer.stop(), 20)
        assert proxy.requests.get(LEAVE_GROUP, 0) == leaves_before + 1, proxy.log

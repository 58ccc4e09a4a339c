"""A small order service, the sample application of docs/testing.md.

Orders arrive on a topic as ``customer:amount`` (amount in cents). Two parts:

* :class:`OrderTotals` consumes them in a group, keeps a running total per customer and commits what it
  processed after each batch; a commit that fails (a broker is away) is retried with the next poll, so an
  outage delays the totals but loses or repeats nothing once the brokers are back.
* :class:`Biller` is a transactional pipeline: each batch of orders becomes invoices on another topic, and
  the consumed offsets commit in the same transaction, so invoices and progress move together or not at all.

The tests in tests/ use only the fixtures of the testing kit (``aiokafka-lite[testing]``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiokafka_lite
from aiokafka_lite import TopicPartition
from aiokafka_lite.errors import KafkaError

log = logging.getLogger("orders")


def parse(value: bytes) -> tuple[str, int]:
    customer, _, amount = value.decode().partition(":")
    return customer, int(amount)


class OrderTotals:
    """Sums orders per customer; ``run()`` until ``stop()``; ``processed`` counts the orders summed."""

    def __init__(self, bootstrap: str, topic: str, group: str, **settings: Any) -> None:
        self.totals: dict[str, int] = {}
        self.processed = 0
        self.commit_failures = 0
        self._consumer: aiokafka_lite.Consumer[bytes, bytes] = aiokafka_lite.Consumer(
            topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
            enable_auto_commit=False, **settings)
        self._stopping = asyncio.Event()

    async def run(self) -> None:
        uncommitted = False
        async with self._consumer as consumer:
            while not self._stopping.is_set():
                batch = await consumer.poll(timeout_ms=200)
                for records in batch.values():
                    for record in records:
                        customer, amount = parse(bytes(record.value))
                        self.totals[customer] = self.totals.get(customer, 0) + amount
                        self.processed += 1
                        uncommitted = True
                if uncommitted:
                    try:
                        await consumer.commit()
                        uncommitted = False
                    except KafkaError as exc:  # e.g. the coordinator is down: commit again next round
                        self.commit_failures += 1
                        log.warning("commit failed (%s); retrying with the next poll", exc)
            if uncommitted:
                await consumer.commit()

    def stop(self) -> None:
        self._stopping.set()


class Biller:
    """Orders in, invoices (``customer:amount``, tax added) out, in one transaction per batch."""

    TAX_PERCENT = 20

    def __init__(self, bootstrap: str, source: str, sink: str, group: str, transactional_id: str) -> None:
        self.sink, self.group = sink, group
        self.invoiced = 0
        self._consumer: aiokafka_lite.Consumer[bytes, bytes] = aiokafka_lite.Consumer(
            source, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
            enable_auto_commit=False, isolation_level="read_committed")
        self._producer = aiokafka_lite.Producer(bootstrap_servers=bootstrap,
                                                transactional_id=transactional_id)
        self._stopping = asyncio.Event()

    async def run(self) -> None:
        async with self._consumer as consumer, self._producer as producer:
            while not self._stopping.is_set():
                batch = await consumer.poll(timeout_ms=200)
                if not batch:
                    continue
                async with producer.transaction():  # commits on exit, aborts on an error
                    offsets: dict[TopicPartition, int] = {}
                    for tp, records in batch.items():
                        for record in records:
                            customer, amount = parse(bytes(record.value))
                            total = amount + amount * self.TAX_PERCENT // 100
                            await producer.send(self.sink, f"{customer}:{total}".encode(), customer.encode())
                            offsets[tp] = record.offset + 1
                    await producer.send_offsets_to_transaction(offsets, self.group)
                self.invoiced += sum(len(r) for r in batch.values())

    def stop(self) -> None:
        self._stopping.set()

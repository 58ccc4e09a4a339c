"""read_committed and offsets_for_times, on noida-db (Tansu does not hide aborted records and answers
offset 0 to every timestamp lookup; see brokers.md)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from _consumer_helpers import create_topic
from confluent_kafka import Producer

from aiokafka_lite import errors
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.structs import TopicPartition as TP


def _transactions(bootstrap: str, topic: str, txn_id: str) -> None:
    """Committed 0-9, aborted 100-109, committed 10-19, then 20-24 outside any transaction."""
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 1})
    p.init_transactions(15)
    for values, commit in ((range(0, 10), True), (range(100, 110), False), (range(10, 20), True)):
        p.begin_transaction()
        for i in values:
            p.produce(topic, value=b"%d" % i, partition=0)
        p.flush(10)
        if commit:
            p.commit_transaction(15)
        else:
            p.abort_transaction(15)
    plain = Producer({"bootstrap.servers": bootstrap})
    for i in range(20, 25):
        plain.produce(topic, value=b"%d" % i, partition=0)
    assert plain.flush(10) == 0
    p.close()
    plain.close()


async def _read_all(consumer: Consumer, tp: TP, settle: float = 1.0) -> list[bytes]:
    values: list[bytes] = []
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < settle:
        got = await consumer.poll(timeout_ms=200)
        if got:
            quiet_since = time.monotonic()
            values.extend(r.value for r in got[tp])
    return values


async def test_read_committed_hides_aborted_records(noida: Any, new_topic: Any) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 1)
    await asyncio.to_thread(_transactions, noida.bootstrap, topic, new_topic("txn"))
    tp = TP(topic, 0)
    committed = [b"%d" % i for i in range(25)]
    aborted = [b"%d" % i for i in range(100, 110)]
    async with Consumer(bootstrap_servers=noida.bootstrap, auto_offset_reset="earliest",
                        isolation_level="read_committed") as c:
        c.assign([tp])
        assert await _read_all(c, tp) == committed
        # The position moved past the control markers at the end too: nothing is left to read.
        end = (await c.end_offsets([tp]))[tp]
        assert await c.position(tp) == end
        assert c.last_stable_offset(tp) == end
    async with Consumer(bootstrap_servers=noida.bootstrap, auto_offset_reset="earliest") as c:
        c.assign([tp])
        assert await _read_all(c, tp) == committed[:10] + aborted + committed[10:]


async def test_offsets_for_times(noida: Any, new_topic: Any) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 1)
    base = int(time.time() * 1000) - 60_000  # recent: noida expires records older than 7 days
    p = Producer({"bootstrap.servers": noida.bootstrap})
    for i in range(10):
        p.produce(topic, value=b"%d" % i, partition=0, timestamp=base + i * 1000)
    assert await asyncio.to_thread(p.flush, 10) == 0
    p.close()
    tp = TP(topic, 0)
    async with Consumer(bootstrap_servers=noida.bootstrap) as c:
        found = await c.offsets_for_times({tp: base + 3500})
        assert found[tp] is not None and (found[tp].offset, found[tp].timestamp) == (4, base + 4000)
        assert (await c.offsets_for_times({tp: base + 10**7}))[tp] is None
        with pytest.raises(ValueError):
            await c.offsets_for_times({tp: -5})
        c.assign([tp])
        c.seek(tp, found[tp].offset)
        got = await c.poll(timeout_ms=5000)
        assert got[tp][0].value == b"4" and got[tp][0].timestamp == base + 4000
    with pytest.raises(errors.ConsumerStoppedError):
        await c.offsets_for_times({tp: base})

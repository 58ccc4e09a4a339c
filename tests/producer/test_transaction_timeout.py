"""``transaction_timeout_ms`` reaches the transaction coordinator, on noida-db.

What noida-db 0.2.3 really does with it (measured before writing these tests):

* it does NOT abort a transaction left open past the timeout: with ``transaction_timeout_ms=1000``, a
  transaction held open 3 s, 15 s and 65 s still committed, and its record was visible to a
  read_committed confluent-kafka consumer; confluent-kafka's own producer (``transaction.timeout.ms``
  1000, open 20 s) saw the same. There is no expiry (not even on a timer scan) to test against here,
  and no other broker we can run does transactions (Tansu does not hide aborted records);
* it DOES check the value against its maximum, as Kafka checks ``transaction.max.timeout.ms``
  (default 15 min): 3 600 000 ms is refused with INVALID_TRANSACTION_TIMEOUT, 1 ms is accepted.

So the tests prove that the configured value is what InitProducerId carries (a fault-injecting proxy
captures the request), and that the broker's refusal of a value above its maximum reaches the caller
as a clear error, at once, instead of a retry loop or a hang.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from _kafka_proxy import KafkaProxy
from _producer_peers import aread_confluent, create_topic

from aiokafka_lite import Producer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import InvalidTransactionTimeoutError, ProducerClosedError

INIT_PRODUCER_ID = 22


async def test_transaction_timeout_is_sent_in_init_producer_id(noida: EmbeddedBroker,
                                                               new_topic: Callable[..., str]) -> None:
    topic, txn_id = new_topic(), new_topic("txn")
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 1)
    async with KafkaProxy(noida.bootstrap) as proxy:
        proxy.capture.add(INIT_PRODUCER_ID)
        async with Producer(bootstrap_servers=proxy.bootstrap, transactional_id=txn_id,
                            transaction_timeout_ms=4321) as p:
            async with p.transaction():
                await p.send(topic, b"through the proxy")
            await p.begin_transaction()
            await p.send_and_wait(topic, b"aborted")
            await p.abort_transaction()
    inits = [req for key, _, req in proxy.captured if key == INIT_PRODUCER_ID]
    assert inits, "no InitProducerId went through the proxy"
    assert [(r.transactional_id, r.transaction_timeout_ms) for r in inits] == [(txn_id, 4321)] * len(inits)
    got = await aread_confluent(noida.bootstrap, topic, 1, isolation="read_committed", settle=0.5)
    assert [g.value for g in got] == [b"through the proxy"]


async def test_transaction_timeout_above_the_brokers_maximum_fails_start(
        noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    p = Producer(bootstrap_servers=noida.bootstrap, transactional_id=new_topic("txn"),
                 transaction_timeout_ms=3_600_000)
    t0 = time.monotonic()
    try:
        with pytest.raises(InvalidTransactionTimeoutError, match="INVALID_TRANSACTION_TIMEOUT"):
            await p.start()
        assert time.monotonic() - t0 < 10  # refused at once, not retried until a timeout
        with pytest.raises(ProducerClosedError):  # a failed start() leaves the producer closed
            await p.send(new_topic(), b"x")
    finally:
        await p.stop()
    # A timeout within the maximum (even a tiny one) is accepted.
    async with Producer(bootstrap_servers=noida.bootstrap, transactional_id=new_topic("txn"),
                        transaction_timeout_ms=1000) as q:
        async with q.transaction():
            await q.send(new_topic(), b"ok")

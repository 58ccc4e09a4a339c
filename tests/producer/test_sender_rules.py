"""The producer's Sender, IdempotenceState and TransactionManager on a sans-I/O fake broker.

One test per rule of ``aiokafka_lite/producer/idempotence.py`` (I2 ... I7), plus retry backoff, shutdown
with every broker unreachable, and the transaction state machine. Everything is real except the client:
the fake (``_fake_broker.py``) turns each request into a call the test answers by script, and time is a
virtual clock that only moves when nothing else can happen -- so the virtual time a scenario took shows
whether anything waited for a timeout, and no test sleeps on the wall clock (except the shutdown test,
which is about the wall clock).
"""

from __future__ import annotations

import asyncio

import pytest
from _fake_broker import Rig

from aiokafka_lite.errors import (
    DuplicateSequenceNumberError,
    IllegalStateError,
    InvalidProducerEpochError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NotLeaderOrFollowerError,
    OutOfOrderSequenceNumberError,
    ProducerFenced,
    UnknownProducerIdError,
)
from aiokafka_lite.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from aiokafka_lite.protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from aiokafka_lite.protocol.messages.produce import ProduceRequest
from aiokafka_lite.structs import TopicPartition
from aiokafka_lite.producer.transaction import TxnState

A, B = TopicPartition("t", 0), TopicPartition("t", 1)
PID = 1000
DUP = DuplicateSequenceNumberError.errno
OOS = OutOfOrderSequenceNumberError.errno
UNKNOWN_PID = UnknownProducerIdError.errno
NOT_LEADER = NotLeaderOrFollowerError.errno
BAD_EPOCH = InvalidProducerEpochError.errno


# -- I2: one batch per partition in flight; pipelining across partitions ---------------------------------


async def test_one_batch_per_partition_in_flight_but_partitions_pipeline() -> None:
    async with Rig({A: 1, B: 1}, max_in_flight=5) as rig:
        await _one_batch_per_partition(rig)


async def _one_batch_per_partition(rig: Rig) -> None:
    a = [rig.add(A, b"a%d" % i) for i in range(3)]
    await rig.start()

    first = await rig.next_produce()
    assert set(first.batches) == {A} and first.state(A) == (PID, 0, 0) and first.values(A) == [b"a0"]
    await rig.settle()
    assert not rig.client.pending(ProduceRequest), "a second batch of A went while the first was in flight"
    assert rig.idem.in_flight_count(A) == 1

    # Another partition on the same node is not held back: its request goes while A's is out.
    b0 = rig.add(B, b"b0")
    second = await rig.next_produce(node=1)
    assert set(second.batches) == {B} and second.state(B) == (PID, 0, 0)
    assert not first.future.done() and not second.future.done()  # two requests in flight to node 1
    await rig.settle()
    assert not rig.client.pending(ProduceRequest)

    # Each answer lets exactly the next batch of A go, with the next sequence.
    first.answer()
    for i in (1, 2):
        call = await rig.next_produce()
        assert set(call.batches) == {A} and call.state(A) == (PID, 0, i) and call.values(A) == [b"a%d" % i]
        await rig.settle()
        assert not rig.client.pending(ProduceRequest)
        call.answer()
    second.answer()
    await rig.done(*a, b0)
    assert [b.result.base_offset for b in a] == [0, 1, 2] and b0.result.base_offset == 0
    assert rig.client.written(A) == [b"a0", b"a1", b"a2"]
    assert not rig.client.pending(InitProducerIdRequest)

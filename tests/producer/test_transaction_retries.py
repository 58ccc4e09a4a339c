"""The transaction coordinator's round trips retry through net/retry.py: what is asked again comes from the
error's class, and a call ends by its deadline even when the coordinator never answers."""

from __future__ import annotations

import asyncio

import pytest
from _fake_broker import Rig

from aiokafka_lite.errors import (
    ConcurrentTransactionsError,
    InvalidTxnStateError,
    KafkaTimeoutError,
)
from aiokafka_lite.net.retry import ExponentialBackoff
from aiokafka_lite.producer.transaction import TransactionManager, TxnState
from aiokafka_lite.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from aiokafka_lite.protocol.messages.init_producer_id import InitProducerIdResponse
from aiokafka_lite.structs import TopicPartition

A = TopicPartition("t", 0)


async def _open_transaction(rig: Rig) -> TransactionManager:
    """Initialized, one transaction begun with partition A added and one record delivered."""
    txn = rig.txn
    assert txn is not None
    txn.backoff = ExponentialBackoff(1, 1)  # the retry policy is the helper's (tests/net/test_retry.py)
    rig.sender.start()
    init_task = asyncio.ensure_future(txn.initialize(5))
    (await rig.next_init()).reply(InitProducerIdResponse(producer_id=7, producer_epoch=0))
    await init_task
    txn.begin()
    txn.check_send(A)
    batch = rig.add(A, b"a0")
    await rig.add_partitions(A)
    (await rig.next_produce()).answer()
    await rig.done(batch)
    txn.begin_commit()
    return txn


async def test_an_end_txn_never_answered_times_out_at_the_calls_deadline() -> None:
    async with Rig({A: 1}, transactional_id="tx") as rig:
        txn = await _open_transaction(rig)
        commit = asyncio.ensure_future(txn.end(True, 0.3))
        await rig.next_call(EndTxnRequest)  # and never answered
        with pytest.raises(KafkaTimeoutError, match="EndTxn for transactional_id 'tx'"):
            await asyncio.wait_for(commit, 10)  # not the coordinator's silence: the call's own 0.3 s
        assert txn.state is TxnState.COMMITTING  # the outcome is unknown: the commit may be retried


async def test_a_retriable_end_txn_answer_is_asked_again_and_a_refusal_is_not() -> None:
    async with Rig({A: 1}, transactional_id="tx") as rig:
        txn = await _open_transaction(rig)
        commit = asyncio.ensure_future(txn.end(True, 5))
        busy = EndTxnResponse(error_code=ConcurrentTransactionsError.errno)
        (await rig.next_call(EndTxnRequest)).reply(busy)
        (await rig.next_call(EndTxnRequest)).reply(EndTxnResponse())
        await commit
        assert txn.state is TxnState.READY

        txn.begin()
        txn.begin_commit()  # nothing was added: no EndTxn
        await txn.end(True, 5)
        txn.begin()
        txn.check_send(A)
        batch = rig.add(A, b"a1")
        await rig.add_partitions(A)
        (await rig.next_produce()).answer()
        await rig.done(batch)
        txn.begin_commit()
        commit = asyncio.ensure_future(txn.end(True, 5))
        (await rig.next_call(EndTxnRequest)).reply(EndTxnResponse(error_code=InvalidTxnStateError.errno))
        with pytest.raises(InvalidTxnStateError):
            await commit
        await rig.settle()
        assert not rig.client.pending(EndTxnRequest)  # refused: not asked again

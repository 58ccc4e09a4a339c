"""The TransactionManager against a scripted fake broker (tests/net/_net_fakes.py) with the real Producer:
the order of the transactional requests, retries of the answers Kafka says to retry, and every
transactional request x every kind of error it can get (issue 24.1), one answer at a time as no real
broker gives them on demand. Fencing, a fatal and an abortable error for InitProducerId,
AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, Produce inside a transaction and EndTxn: each moves
the producer to the matching state (transaction.verdict), fails every pending future with the exception
users catch (ProducerFenced for fencing, the abortable error for abortable ones) within one round trip,
every later call raises it at once, and stop() returns within request_timeout_ms whatever is pending."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from aiokafka_lite import Producer, TopicPartition
from aiokafka_lite import errors as Errors
from aiokafka_lite.producer.transaction import TxnState
from aiokafka_lite.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnResponse
from aiokafka_lite.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopicResult,
)
from aiokafka_lite.protocol.messages.end_txn import EndTxnResponse
from aiokafka_lite.protocol.messages.find_coordinator import Coordinator, FindCoordinatorResponse
from aiokafka_lite.protocol.messages.init_producer_id import InitProducerIdResponse
from aiokafka_lite.protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from aiokafka_lite.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)
from aiokafka_lite.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "net"))
from _net_fakes import FakeBroker

PRODUCE, METADATA, FIND_COORDINATOR, INIT_PID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = (
    0, 3, 10, 22, 24, 25, 26, 28)
VERSIONS = {18: (0, 3), 0: (3, 8), 3: (0, 9), 10: (0, 4), 22: (0, 4), 24: (0, 3), 25: (0, 3), 26: (0, 3),
            28: (0, 3)}
REQUEST_TIMEOUT_MS = 4000
#: "Within one round trip" on loopback, with room for a loaded machine: far below any timeout involved.
PROMPT = 1.0

FENCED = Errors.ProducerFenced.errno
BAD_EPOCH = Errors.InvalidProducerEpochError.errno
TXN_AUTH = Errors.TransactionalIdAuthorizationFailedError.errno
TOPIC_AUTH = Errors.TopicAuthorizationFailedError.errno
GROUP_AUTH = Errors.GroupAuthorizationFailedError.errno
ABORTABLE = Errors.TransactionAbortableError.errno
OOS = Errors.OutOfOrderSequenceNumberError.errno


class Script:
    """One broker leading "t"-0 and coordinating everything; ``errors[api_key]`` are the error codes the
    first requests of that kind get, in order, before they succeed. ``log``: every request's API key
    (Metadata left out); ``ends``: each EndTxn's ``committed``."""

    def __init__(self, errors: dict[int, list[int]]) -> None:
        self.port = 0
        self.errors = {key: list(codes) for key, codes in errors.items()}
        self.log: list[int] = []
        self.ends: list[bool] = []

    def _code(self, key: int) -> int:
        codes = self.errors.get(key)
        return codes.pop(0) if codes else 0

    async def __call__(self, conn: Any, header: Any, req: Any, frame: bytes) -> None:
        key = header.request_api_key
        if key != METADATA:
            self.log.append(key)
        if key == METADATA:
            part = MetadataResponsePartition(error_code=0, partition_index=0, leader_id=1, leader_epoch=0,
                                             replica_nodes=[1], isr_nodes=[1], offline_replicas=[])
            await conn.reply(header, MetadataResponse(
                throttle_time_ms=0,
                brokers=[MetadataResponseBroker(node_id=1, host="127.0.0.1", port=self.port)],
                cluster_id="fake", controller_id=1,
                topics=[MetadataResponseTopic(error_code=0, name="t", is_internal=False, partitions=[part])]))
        elif key == FIND_COORDINATOR:
            await conn.reply(header, FindCoordinatorResponse(throttle_time_ms=0, coordinators=[Coordinator(
                key=req.coordinator_keys[0], node_id=1, host="127.0.0.1", port=self.port, error_code=0,
                error_message=None)]))
        elif key == INIT_PID:
            await conn.reply(header, InitProducerIdResponse(error_code=self._code(key), producer_id=7,
                                                            producer_epoch=len(self.ends)))
        elif key == ADD_PARTITIONS:
            result = AddPartitionsToTxnTopicResult(name="t", results_by_partition=[
                AddPartitionsToTxnPartitionResult(partition_index=0, partition_error_code=self._code(key))])
            await conn.reply(header, AddPartitionsToTxnResponse(results_by_topic_v3_and_below=[result]))
        elif key == ADD_OFFSETS:
            await conn.reply(header, AddOffsetsToTxnResponse(error_code=self._code(key)))
        elif key == TXN_OFFSET_COMMIT:
            await conn.reply(header, TxnOffsetCommitResponse(topics=[TxnOffsetCommitResponseTopic(
                name="src", partitions=[TxnOffsetCommitResponsePartition(partition_index=0,
                                                                         error_code=self._code(key))])]))
        elif key == PRODUCE:
            await conn.reply(header, ProduceResponse(responses=[TopicProduceResponse(
                name="t", partition_responses=[PartitionProduceResponse(
                    index=0, error_code=self._code(key), base_offset=0, log_append_time_ms=-1,
                    log_start_offset=0, record_errors=[], error_message=None)])]))
        elif key == END_TXN:
            self.ends.append(req.committed)
            await conn.reply(header, EndTxnResponse(error_code=self._code(key)))


async def _run(add_errors: list[int], end_errors: list[int], body: Any) -> Script:
    script = Script({ADD_PARTITIONS: add_errors, END_TXN: end_errors})
    async with FakeBroker(script, versions=VERSIONS) as fake:
        script.port = fake.port
        async with Producer(bootstrap_servers=fake.bootstrap, transactional_id="tx", linger_ms=0,
                            retry_backoff_ms=10) as p:
            await body(p)
    return script


async def test_a_transaction_in_order_with_retried_answers() -> None:
    async def body(p: Producer) -> None:
        await p.begin_transaction()
        await (await p.send("t", b"v", partition=0))
        await p.commit_transaction()

    s = await _run([Errors.ConcurrentTransactionsError.errno], [Errors.ConcurrentTransactionsError.errno],
                   body)
    # InitProducerId first; the partition is added (once refused, retried) before its records go out; EndTxn
    # commits, once refused and retried.
    assert s.log.index(INIT_PID) < s.log.index(ADD_PARTITIONS) < s.log.index(PRODUCE) < s.log.index(END_TXN)
    assert s.log.count(ADD_PARTITIONS) == 2 and s.ends == [True, True]


async def test_an_unauthorized_partition_makes_the_transaction_abortable() -> None:
    async def body(p: Producer) -> None:
        await p.begin_transaction()
        fut = await p.send("t", b"v", partition=0)
        with pytest.raises(Errors.TopicAuthorizationFailedError):
            await asyncio.wait_for(fut, 10)  # fails with the reason, without waiting for the abort
        with pytest.raises(Errors.TopicAuthorizationFailedError, match="abort_transaction"):
            await p.commit_transaction()
        await p.abort_transaction()
        await p.begin_transaction()  # the producer goes on
        await (await p.send("t", b"w", partition=0))
        await p.commit_transaction()

    s = await _run([Errors.TopicAuthorizationFailedError.errno], [], body)
    # The refused partition got no records; nothing had been added, so that abort needed no EndTxn.
    assert s.log.count(PRODUCE) == 1 and s.ends == [True]


# -- every request x every kind of error -------------------------------------------------------------------


def _producer(fake: FakeBroker) -> Producer:
    return Producer(bootstrap_servers=fake.bootstrap, transactional_id="tx", linger_ms=0, retry_backoff_ms=10,
                    request_timeout_ms=REQUEST_TIMEOUT_MS, max_block_ms=REQUEST_TIMEOUT_MS)


async def _transaction(p: Producer, request: int, futs: list[Any]) -> None:
    """Run one transaction up to the request under test, keeping its record futures in ``futs``; raises
    what the request under test made its call raise."""
    await p.begin_transaction()
    futs += [await p.send("t", b"v%d" % i, partition=0) for i in range(3)]
    await asyncio.wait_for(asyncio.gather(*futs), REQUEST_TIMEOUT_MS / 1000)
    if request in (ADD_OFFSETS, TXN_OFFSET_COMMIT):
        futs.append(await p.send("t", b"more", partition=0))
        await p.send_offsets_to_transaction({TopicPartition("src", 0): 5}, "group")
    await p.commit_transaction()


async def _fails(p: Producer, request: int, kind: type[BaseException], state: TxnState) -> None:
    """The request under test fails its call with ``kind`` within one round trip, the transaction is in
    ``state``, and each record has its outcome: acknowledged, or failed with ``kind``."""
    futs: list[Any] = []
    t0 = time.monotonic()
    with pytest.raises(kind):
        await _transaction(p, request, futs)
    assert time.monotonic() - t0 < PROMPT, "the failure did not reach the call within one round trip"
    assert p._txn is not None and p._txn.state is state
    await asyncio.sleep(0.05)  # one round of the Sender
    for fut in futs:
        assert fut.done()
        assert fut.exception() is None or isinstance(fut.exception(), kind), fut.exception()
    if request in (ADD_PARTITIONS, PRODUCE):
        assert all(isinstance(f.exception(), kind) for f in futs)


async def _stops_promptly(p: Producer) -> None:
    t0 = time.monotonic()
    await asyncio.wait_for(p.stop(), REQUEST_TIMEOUT_MS / 1000)
    assert time.monotonic() - t0 < PROMPT


async def _later_calls_raise(p: Producer, kind: type[BaseException], *, abortable: bool) -> None:
    """Every later call answers at once from the state."""
    t0 = time.monotonic()
    calls: list[Any] = [lambda: p.send("t", b"later", partition=0), p.commit_transaction,
                        lambda: p.send_offsets_to_transaction({TopicPartition("src", 0): 6}, "group")]
    if not abortable:
        calls += [p.begin_transaction, p.abort_transaction, p.flush,
                  lambda: p.send_many("t", [b"x"], partition=0)]
    for call in calls:
        with pytest.raises(kind) as info:
            await call()
        if abortable:
            assert "abort_transaction()" in str(info.value), info.value
    assert time.monotonic() - t0 < PROMPT


FATAL_CASES = [
    (INIT_PID, FENCED, Errors.ProducerFenced),
    (INIT_PID, TXN_AUTH, Errors.TransactionalIdAuthorizationFailedError),
    (ADD_PARTITIONS, FENCED, Errors.ProducerFenced), (ADD_PARTITIONS, BAD_EPOCH, Errors.ProducerFenced),
    (ADD_PARTITIONS, TXN_AUTH, Errors.TransactionalIdAuthorizationFailedError),
    (ADD_OFFSETS, FENCED, Errors.ProducerFenced), (ADD_OFFSETS, BAD_EPOCH, Errors.ProducerFenced),
    (ADD_OFFSETS, TXN_AUTH, Errors.TransactionalIdAuthorizationFailedError),
    (TXN_OFFSET_COMMIT, FENCED, Errors.ProducerFenced), (TXN_OFFSET_COMMIT, BAD_EPOCH, Errors.ProducerFenced),
    (TXN_OFFSET_COMMIT, TXN_AUTH, Errors.TransactionalIdAuthorizationFailedError),
    (PRODUCE, FENCED, Errors.ProducerFenced), (PRODUCE, BAD_EPOCH, Errors.ProducerFenced),
    (PRODUCE, TXN_AUTH, Errors.TransactionalIdAuthorizationFailedError),
    (END_TXN, FENCED, Errors.ProducerFenced), (END_TXN, BAD_EPOCH, Errors.ProducerFenced),
    (END_TXN, TXN_AUTH, Errors.TransactionalIdAuthorizationFailedError),
]


@pytest.mark.parametrize(("request_key", "code", "kind"), FATAL_CASES,
                         ids=[f"{r}-{c}" for r, c, _ in FATAL_CASES])
async def test_a_fatal_error_fails_everything_pending_and_every_later_call(
        request_key: int, code: int, kind: type[BaseException]) -> None:
    script = Script({request_key: [code]})
    async with FakeBroker(script, versions=VERSIONS) as fake:
        script.port = fake.port
        p = _producer(fake)
        if request_key == INIT_PID:
            with pytest.raises(kind):
                await p.start()
            with pytest.raises(Errors.ProducerClosedError):  # a failed start() leaves it closed
                await p.send("t", b"x", partition=0)
            await asyncio.wait_for(p.stop(), 1)
            return
        await p.start()
        try:
            await _fails(p, request_key, kind, TxnState.FATAL_ERROR)
            await _later_calls_raise(p, kind, abortable=False)
        finally:
            await _stops_promptly(p)
        assert script.ends == ([True] if request_key == END_TXN else []), "a fenced producer committed"


ABORTABLE_CASES = [
    (ADD_PARTITIONS, TOPIC_AUTH, Errors.TopicAuthorizationFailedError),
    (ADD_PARTITIONS, ABORTABLE, Errors.TransactionAbortableError),
    (ADD_OFFSETS, GROUP_AUTH, Errors.GroupAuthorizationFailedError),
    (ADD_OFFSETS, ABORTABLE, Errors.TransactionAbortableError),
    (TXN_OFFSET_COMMIT, GROUP_AUTH, Errors.GroupAuthorizationFailedError),
    (TXN_OFFSET_COMMIT, Errors.UnknownMemberIdError.errno, Errors.UnknownMemberIdError),
    (PRODUCE, TOPIC_AUTH, Errors.TopicAuthorizationFailedError),
    (PRODUCE, OOS, Errors.OutOfOrderSequenceNumberError),
    (PRODUCE, ABORTABLE, Errors.TransactionAbortableError),
    (END_TXN, ABORTABLE, Errors.TransactionAbortableError),
]


@pytest.mark.parametrize(("request_key", "code", "kind"), ABORTABLE_CASES,
                         ids=[f"{r}-{c}" for r, c, _ in ABORTABLE_CASES])
async def test_an_abortable_error_fails_the_pending_records_and_abort_recovers(
        request_key: int, code: int, kind: type[BaseException]) -> None:
    script = Script({request_key: [code]})
    async with FakeBroker(script, versions=VERSIONS) as fake:
        script.port = fake.port
        p = _producer(fake)
        await p.start()
        try:
            await _fails(p, request_key, kind, TxnState.ABORTABLE_ERROR)
            await _later_calls_raise(p, kind, abortable=True)
            await asyncio.wait_for(p.abort_transaction(), PROMPT)
            async with p.transaction():  # the producer goes on
                await (await p.send("t", b"next", partition=0))
            assert script.ends[-1] is True
        finally:
            await _stops_promptly(p)


async def test_stop_in_an_abortable_state_aborts_and_returns_within_request_timeout() -> None:
    """stop() with a record of the open transaction failed aborts it (EndTxn(abort)) and returns (it
    once skipped the abort: stop() marked the producer closed first, and the abort refused to run)."""
    script = Script({PRODUCE: [TOPIC_AUTH]})
    async with FakeBroker(script, versions=VERSIONS) as fake:
        script.port = fake.port
        p = _producer(fake)
        await p.start()
        await p.begin_transaction()
        fut = await p.send("t", b"v", partition=0)
        with pytest.raises(Errors.TopicAuthorizationFailedError):
            await asyncio.wait_for(fut, PROMPT)
        t0 = time.monotonic()
        await p.stop()
        assert time.monotonic() - t0 < PROMPT
    assert script.ends == [False]


async def test_a_transaction_block_whose_commit_fails_abortably_is_aborted() -> None:
    """``async with transaction()``: a record refused while the commit flushes makes the commit raise the
    record's error; the block aborts the transaction on its way out, so the next one can begin."""
    script = Script({PRODUCE: [TOPIC_AUTH]})
    async with FakeBroker(script, versions=VERSIONS) as fake:
        script.port = fake.port
        async with _producer(fake) as p:
            with pytest.raises(Errors.TopicAuthorizationFailedError):
                async with p.transaction():
                    await p.send("t", b"refused", partition=0)
            assert p._txn is not None and p._txn.state is TxnState.READY
            async with p.transaction():
                await p.send("t", b"next", partition=0)
    assert script.ends == [False, True]

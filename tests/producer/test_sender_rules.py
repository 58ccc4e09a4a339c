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
    CoordinatorLoadInProgressError,
    DuplicateSequenceNumberError,
    InvalidProducerEpochError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    MessageTooLargeError,
    NotLeaderOrFollowerError,
    OutOfOrderSequenceNumberError,
    ProducerClosedError,
    ProducerFenced,
    UnknownProducerIdError,
)
from aiokafka_lite.producer.transaction import TransactionManager, TxnState
from aiokafka_lite.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopicResult,
)
from aiokafka_lite.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from aiokafka_lite.protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from aiokafka_lite.protocol.messages.produce import ProduceRequest
from aiokafka_lite.structs import TopicPartition

A, B = TopicPartition("t", 0), TopicPartition("t", 1)
PID = 1000
DUP = DuplicateSequenceNumberError.errno
OOS = OutOfOrderSequenceNumberError.errno
UNKNOWN_PID = UnknownProducerIdError.errno
NOT_LEADER = NotLeaderOrFollowerError.errno
BAD_EPOCH = InvalidProducerEpochError.errno
#: The Rig's default delivery_timeout_ms, in seconds: no scenario below may come near it.
DELIVERY_TIMEOUT = 120.0


# -- I2 ---------------------------------------------------------------------------------------------------


async def test_one_batch_per_partition_in_flight_while_partitions_pipeline() -> None:
    """I2: three queued batches of A go one at a time, each after the previous one's answer, although
    max_in_flight is 5; B's batch on the same node goes while A's request is still out."""
    async with Rig({A: 1, B: 1}, max_in_flight=5) as rig:
        a = [rig.add(A, b"a%d" % i) for i in range(3)]
        await rig.start()

        first = await rig.next_produce()
        assert set(first.batches) == {A} and first.state(A) == (PID, 0, 0) and first.values(A) == [b"a0"]
        await rig.settle()
        assert not rig.client.pending(ProduceRequest), "a second batch of A went while the first was out"
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
            assert set(call.batches) == {A} and call.state(A) == (PID, 0, i)
            assert call.values(A) == [b"a%d" % i]
            await rig.settle()
            assert not rig.client.pending(ProduceRequest)
            call.answer()
        second.answer()
        await rig.done(*a, b0)
        assert [b.result.base_offset for b in a] == [0, 1, 2] and b0.result.base_offset == 0
        assert rig.client.written(A) == [b"a0", b"a1", b"a2"]
        assert not rig.client.pending(InitProducerIdRequest)


# -- I3 / I4 ----------------------------------------------------------------------------------------------


async def test_nothing_goes_to_a_broker_while_its_connection_writes_are_paused() -> None:
    """As Java's NetworkClient waits for the last request to be written: while the connection's transport
    holds more than its high-water mark, the Sender sends that broker nothing (the batch waits, it is not
    copied into a write buffer); the drain wakes it, without waiting for an answer or a timer."""
    async with Rig({A: 1, B: 2}, max_in_flight=5) as rig:
        rig.client.paused.add(1)
        a0, b0 = rig.add(A, b"a0"), rig.add(B, b"b0")
        await rig.start()
        other = await rig.next_produce(node=2)  # another broker is not held back
        assert set(other.batches) == {B}
        await rig.settle()
        assert not rig.client.pending(ProduceRequest) and not a0.in_flight
        rig.client.resume(1)
        await rig.settle()
        first = rig.client.take(ProduceRequest, 1)
        assert first is not None and first.values(A) == [b"a0"]
        first.answer()
        other.answer()
        await rig.until(lambda: a0.result.done and b0.result.done, "both acknowledged")


async def test_an_open_batch_waits_for_its_partitions_batch_in_flight() -> None:
    """Self-clocking (accumulator.py): without idempotence and with linger_ms=0, an open batch whose
    partition has a batch in flight waits for that answer, still taking records, and then goes as one;
    a closed batch behind it still pipelines, another partition is not held, and a flush sends at once."""
    async with Rig({A: 1, B: 1}, max_in_flight=5, idempotent=False) as rig:
        rig.sender.start()
        rig.add(A, b"a0")
        first = await rig.next_produce()
        assert first.values(A) == [b"a0"]
        held = rig.add(A, b"a1")
        assert held.builder is not None
        assert held.builder.append(1_700_000_000_000, None, b"a2", None) is not None  # a send() meanwhile
        await rig.settle()
        assert not rig.client.pending(ProduceRequest), "an open batch went while its partition's was out"

        rig.add(B, b"b0")  # another partition on the node goes at once
        other = await rig.next_produce()
        assert set(other.batches) == {B}

        first.answer()  # the answer releases the held batch, with every record it took meanwhile
        second = await rig.next_produce()
        assert second.values(A) == [b"a1", b"a2"]

        rig.add(A, b"a3")
        rig.add(A, b"a4")  # closes a3's batch: a closed batch pipelines behind the one in flight
        third = await rig.next_produce()
        assert third.values(A) == [b"a3"]
        await rig.settle()
        assert not rig.client.pending(ProduceRequest)  # a4's batch is open: it waits

        rig.acc.flushes_in_progress += 1  # a flush wants everything out now
        rig.acc.bell.ring()
        fourth = await rig.next_produce()
        assert fourth.values(A) == [b"a4"]
        for call in (other, second, third, fourth):
            call.answer()
        await rig.until(lambda: not rig.acc.incomplete, "every batch acknowledged")
        assert rig.client.written(A) == [b"a0", b"a1", b"a2", b"a3", b"a4"]


async def test_unknown_outcome_retried_under_same_sequence_and_duplicate_is_success() -> None:
    """I3/I4: the broker wrote A's batch but the answer was lost; the retry carries the same producer id,
    epoch and base sequence, DUPLICATE_SEQUENCE_NUMBER completes it, and nothing is written twice."""
    async with Rig({A: 1}) as rig:
        a0 = rig.add(A, b"a0", b"a1")
        a1 = rig.add(A, b"a2")
        await rig.start()
        first = await rig.next_produce()
        assert first.state(A) == (PID, 0, 0)
        first.lose_answer()

        retry = await rig.next_produce()
        assert retry.state(A) == (PID, 0, 0) and retry.values(A) == [b"a0", b"a1"]
        assert a0.unknown_outcome and not a0.result.done
        assert retry.batches[A].records == first.batches[A].records
        retry.answer({A: DUP})
        await rig.done(a0)
        assert a0.result.error is None

        # The next batch follows in the same epoch (no bump), after the two records of a0.
        nxt = await rig.next_produce()
        assert nxt.state(A) == (PID, 0, 2) and nxt.values(A) == [b"a2"]
        nxt.answer()
        await rig.done(a1)
        assert a1.result.error is None and a1.result.base_offset == 2
        assert rig.client.written(A) == [b"a0", b"a1", b"a2"]
        assert not rig.client.calls_of(InitProducerIdRequest)[1:]


# -- I5a --------------------------------------------------------------------------------------------------


async def test_unknown_outcome_then_unknown_producer_id_fails_batch_and_bumps_promptly() -> None:
    """I5a: A's first attempt gets no answer, its retry UNKNOWN_PRODUCER_ID. A fails saying it may or
    may not have been written and is never sent again; the epoch is bumped and the next batch goes under
    the new epoch at sequence 0; B is served meanwhile -- and nothing waits for delivery_timeout_ms."""
    async with Rig({A: 1, B: 2}) as rig:
        a0 = rig.add(A, b"a0")
        a1 = rig.add(A, b"a1")
        await rig.start()
        first = await rig.next_produce(node=1)
        assert first.state(A) == (PID, 0, 0)
        first.fail(KafkaConnectionError("connection reset with the request in flight"))

        retry = await rig.next_produce(node=1)
        assert retry.state(A) == (PID, 0, 0) and retry.values(A) == [b"a0"]
        b0 = rig.add(B, b"b0")  # another partition keeps going while A's trouble is sorted out
        other = await rig.next_produce(node=2)
        assert other.state(B) == (PID, 0, 0)
        other.answer()
        retry.answer({A: UNKNOWN_PID})
        await rig.done(a0, b0)
        assert isinstance(a0.result.error, UnknownProducerIdError)
        assert "may or may not have been written" in str(a0.result.error)
        assert b0.result.error is None

        await rig.grant_bump(PID, 0)
        nxt = await rig.next_produce(node=1)
        assert nxt.state(A) == (PID, 1, 0) and nxt.values(A) == [b"a1"]
        nxt.answer()
        await rig.done(a1)
        assert a1.result.error is None

        await rig.settle()
        assert [c.values(A) for c in rig.produce_calls(A)] == [[b"a0"], [b"a0"], [b"a1"]]
        assert rig.client.written(A) == [b"a1"]
        # Liveness: one retry backoff (100 ms, +20 %) is all the virtual time that passed.
        assert rig.clock is not None and rig.clock.elapsed < 0.5 < DELIVERY_TIMEOUT
        assert rig.steps < 1000


# -- I5b --------------------------------------------------------------------------------------------------


async def test_out_of_order_after_acknowledged_sequence_reports_lost_records_and_bumps() -> None:
    """I5b: A's batch 0 is acknowledged, batch 1 (the next sequence) refused OUT_OF_ORDER: batch 1 fails
    with OutOfOrderSequenceNumberError saying the broker lost acknowledged records (never resent), the
    epoch is bumped and batch 2 succeeds under the new epoch."""
    async with Rig({A: 1}) as rig:
        a = [rig.add(A, b"a%d" % i) for i in range(3)]
        await rig.start()
        c0 = await rig.next_produce()
        c0.answer()
        c1 = await rig.next_produce()
        assert c1.state(A) == (PID, 0, 1)
        c1.answer({A: OOS})
        await rig.done(a[0], a[1])
        assert a[0].result.error is None
        err = a[1].result.error
        assert isinstance(err, OutOfOrderSequenceNumberError), err
        assert "lost acknowledged records" in str(err)

        await rig.grant_bump(PID, 0)
        c2 = await rig.next_produce()
        assert c2.state(A) == (PID, 1, 0) and c2.values(A) == [b"a2"]
        c2.answer()
        await rig.done(a[2])
        assert a[2].result.error is None
        assert [c.values(A) for c in rig.produce_calls(A)] == [[b"a0"], [b"a1"], [b"a2"]]
        assert rig.clock is not None and rig.clock.elapsed < 1.0


async def test_lost_acknowledged_records_surface_even_when_the_next_batch_had_no_answer() -> None:
    """I5b before I5a (issue 24.4): batch 0 is acknowledged; batch 1's first attempt gets no answer (a
    broker crash), and its retry under the same sequence is refused OUT_OF_ORDER -- the broker lost
    sequence 0, which it had acknowledged. Batch 1 was not written either (the broker would have answered
    DUPLICATE_SEQUENCE_NUMBER), so the loss is certain: it fails with OutOfOrderSequenceNumberError
    naming the lost acknowledged records, not only "may or may not have been written"."""
    async with Rig({A: 1}) as rig:
        a = [rig.add(A, b"a%d" % i) for i in range(3)]
        await rig.start()
        (await rig.next_produce()).answer()
        c1 = await rig.next_produce()
        assert c1.state(A) == (PID, 0, 1)
        c1.fail()  # unknown outcome (I4)
        retry = await rig.next_produce()
        assert retry.state(A) == (PID, 0, 1) and retry.values(A) == [b"a1"]
        retry.answer({A: OOS})
        await rig.done(a[1])
        err = a[1].result.error
        assert isinstance(err, OutOfOrderSequenceNumberError), err
        assert "lost acknowledged records" in str(err), err

        await rig.grant_bump(PID, 0)
        c2 = await rig.next_produce()
        assert c2.state(A) == (PID, 1, 0) and c2.values(A) == [b"a2"]
        c2.answer()
        await rig.done(a[2])
        assert a[2].result.error is None


# -- I5c --------------------------------------------------------------------------------------------------


async def test_first_batch_refused_unknown_producer_id_is_resequenced_under_new_epoch() -> None:
    """I5c: the first batch of A is refused UNKNOWN_PRODUCER_ID (certainly not written): the epoch is
    bumped first, then the same records go again at sequence 0 of the new epoch and succeed."""
    async with Rig({A: 1}) as rig:
        a0 = rig.add(A, b"a0", b"a1")
        await rig.start()
        first = await rig.next_produce()
        assert first.state(A) == (PID, 0, 0)
        first.answer({A: UNKNOWN_PID})
        await rig.settle()
        assert not rig.client.pending(ProduceRequest), "resent before the epoch bump"

        await rig.grant_bump(PID, 0)
        again = await rig.next_produce()
        assert again.state(A) == (PID, 1, 0)
        assert again.values(A) == [b"a0", b"a1"]
        assert not a0.result.done
        again.answer()
        await rig.done(a0)
        assert a0.result.error is None and a0.result.base_offset == 0
        assert rig.client.written(A) == [b"a0", b"a1"]


# -- I6 ---------------------------------------------------------------------------------------------------


async def test_expired_sequenced_batch_bumps_epoch_before_next_batch() -> None:
    """I6: A's batch holds sequence 0, is refused NOT_LEADER_OR_FOLLOWER on every attempt and expires
    after delivery_timeout_ms: the epoch is bumped before A's next batch goes, at sequence 0."""
    async with Rig({A: 1}, delivery_timeout_ms=1000) as rig:
        a0 = rig.add(A, b"a0")
        await rig.start()
        attempts = 0
        while not a0.result.done:
            call = await rig.until(lambda: a0.result.done or rig.client.take(ProduceRequest), "retry")
            if call is True:
                break
            assert call.state(A) == (PID, 0, 0)
            attempts += 1
            call.answer({A: NOT_LEADER})
            await rig.settle(3)
        err = a0.result.error
        assert isinstance(err, KafkaTimeoutError) and "NOT_LEADER_OR_FOLLOWER" in str(err), err
        assert attempts >= 2 and rig.clock is not None and 1.0 <= rig.clock.elapsed < 2.0

        a1 = rig.add(A, b"a1")
        init = await rig.next_init()
        assert not rig.client.pending(ProduceRequest), "a batch went before the epoch bump"
        assert (init.request.producer_id, init.request.producer_epoch) == (PID, 0)
        init.reply(InitProducerIdResponse(producer_id=PID, producer_epoch=1))
        nxt = await rig.next_produce()
        assert nxt.state(A) == (PID, 1, 0) and nxt.values(A) == [b"a1"]
        nxt.answer()
        await rig.done(a1)
        assert a1.result.error is None


# -- I7 ---------------------------------------------------------------------------------------------------


async def test_bump_waits_for_unknown_outcome_retry_under_old_epoch() -> None:
    """I7: B's first batch asks for a bump (UNKNOWN_PRODUCER_ID) while A's batch of unknown outcome waits
    for its retry: the bump waits, A is retried under the old epoch, and once A is answered the bump
    happens and B goes under the new one -- no deadlock, no timeout."""
    async with Rig({A: 1, B: 2}) as rig:
        a0 = rig.add(A, b"a0")
        b0 = rig.add(B, b"b0")
        await rig.start()
        ca = await rig.next_produce(node=1)
        cb = await rig.next_produce(node=2)
        ca.fail()  # A: unknown outcome, retried after the backoff
        await rig.settle(3)
        cb.answer({B: UNKNOWN_PID})  # B: certainly not written, wants a new epoch
        await rig.settle()
        assert rig.idem.bump_needed

        retry = await rig.next_produce(node=1)
        assert not rig.client.calls_of(InitProducerIdRequest)[1:], "bumped with A's outcome unknown"
        assert not rig.client.pending(ProduceRequest), "B went before the bump"
        assert retry.state(A) == (PID, 0, 0) and retry.values(A) == [b"a0"]
        retry.answer()
        await rig.done(a0)
        assert a0.result.error is None

        await rig.grant_bump(PID, 0)
        again = await rig.next_produce(node=2)
        assert again.state(B) == (PID, 1, 0) and again.values(B) == [b"b0"]
        again.answer()
        await rig.done(b0)
        assert b0.result.error is None
        assert rig.clock is not None and rig.clock.elapsed < 0.5


async def test_bump_waiting_for_unknown_outcome_happens_when_that_batch_expires() -> None:
    """I7, the bound: the unknown-outcome batch the bump waits for never gets an answer (every retry
    breaks the connection); it expires after delivery_timeout_ms, and then the bump starts at once and
    the other partition's batch goes -- the wait ends, it does not deadlock."""
    async with Rig({A: 1, B: 2}, delivery_timeout_ms=2000) as rig:
        a0 = rig.add(A, b"a0")
        await rig.start()
        attempts = 0
        b0 = None
        while True:
            call = await rig.until(lambda: a0.result.done or rig.client.take(ProduceRequest, 1), "A's retry")
            if call is True:
                break
            attempts += 1
            assert call.state(A) == (PID, 0, 0)
            assert not rig.client.calls_of(InitProducerIdRequest)[1:], "bumped with A's outcome unknown"
            call.fail()
            if attempts == 2:
                # B asks for a bump while A waits for its retry (B is created later than A, so it does
                # not expire with it).
                b0 = rig.add(B, b"b0")
                (await rig.next_produce(node=2)).answer({B: UNKNOWN_PID})
        assert b0 is not None and attempts >= 4
        expired_at = rig.loop.time()
        err = a0.result.error
        assert isinstance(err, KafkaTimeoutError) and "may have been written" in str(err), err
        assert not b0.result.done
        init = await rig.until(lambda: rig.client.take(InitProducerIdRequest) or b0.result.done, "the bump")
        late = rig.loop.time() - expired_at
        assert init is not True, f"no bump after the blocking batch expired; B expired {late:.3f} s later"
        assert late < 0.05, f"the bump started {late:.3f} s after the batch blocking it expired"
        init.reply(InitProducerIdResponse(producer_id=PID, producer_epoch=1))
        again = await rig.next_produce(node=2)
        assert again.state(B) == (PID, 1, 0) and again.values(B) == [b"b0"]
        again.answer()
        await rig.done(b0)
        assert b0.result.error is None
        assert rig.clock is not None and 2.0 <= rig.clock.elapsed < 3.0


async def test_refused_epoch_bump_falls_back_to_new_producer_id() -> None:
    """I8 with a broker that will not bump the epoch of an id: the Sender asks for a fresh producer id,
    and every partition starts again at sequence 0 under it."""
    async with Rig({A: 1}) as rig:
        a0 = rig.add(A, b"a0")
        await rig.start()
        (await rig.next_produce()).answer({A: UNKNOWN_PID})
        bump = await rig.next_init()
        assert (bump.request.producer_id, bump.request.producer_epoch) == (PID, 0)
        bump.reply(InitProducerIdResponse(error_code=BAD_EPOCH))
        fresh = await rig.next_init()
        assert (fresh.request.producer_id, fresh.request.producer_epoch) == (-1, -1)
        fresh.reply(InitProducerIdResponse(producer_id=2000, producer_epoch=0))
        again = await rig.next_produce()
        assert again.state(A) == (2000, 0, 0) and again.values(A) == [b"a0"]
        again.answer()
        await rig.done(a0)
        assert a0.result.error is None and not rig.fatal


async def test_split_halves_keep_the_sequence_range_without_bump() -> None:
    """I1/I3 with a batch refused as too large: its halves take its sequence range (0 and 2), go one
    after the other, and the next batch follows at sequence 4 in the same epoch."""
    async with Rig({A: 1}) as rig:
        a0 = rig.add(A, b"r0", b"r1", b"r2", b"r3")
        a1 = rig.add(A, b"r4")
        await rig.start()
        (await rig.next_produce()).answer({A: MessageTooLargeError.errno})
        first = await rig.next_produce()
        assert first.state(A) == (PID, 0, 0) and first.values(A) == [b"r0", b"r1"]
        await rig.settle()
        assert not rig.client.pending(ProduceRequest)
        first.answer()
        second = await rig.next_produce()
        assert second.state(A) == (PID, 0, 2) and second.values(A) == [b"r2", b"r3"]
        second.answer()
        third = await rig.next_produce()
        assert third.state(A) == (PID, 0, 4) and third.values(A) == [b"r4"]
        third.answer()
        await rig.done(a0, a1)
        assert a0.result.error is None and a1.result.error is None
        assert rig.client.written(A) == [b"r0", b"r1", b"r2", b"r3", b"r4"]
        assert not rig.client.calls_of(InitProducerIdRequest)[1:]


async def test_init_producer_id_retriable_error_retried_after_backoff() -> None:
    """A retriable InitProducerId failure is retried after retry_backoff_ms (here 100 ms), while records
    wait -- not when they are about to expire (delivery_timeout_ms)."""
    async with Rig({A: 1}) as rig:
        a0 = rig.add(A, b"a0")
        rig.sender.start()
        (await rig.next_init()).reply(InitProducerIdResponse(error_code=CoordinatorLoadInProgressError.errno))
        failed_at = rig.loop.time()
        again = await rig.until(lambda: rig.client.take(InitProducerIdRequest) or a0.result.done,
                                "the second InitProducerId")
        waited = rig.loop.time() - failed_at
        assert again is not True, f"the records expired first: {a0.result.error}"
        assert waited < 1.0, f"InitProducerId retried after {waited:.1f} s instead of ~0.1 s"
        again.reply(InitProducerIdResponse(producer_id=PID, producer_epoch=0))
        call = await rig.next_produce()
        assert call.state(A) == (PID, 0, 0)
        call.answer()
        await rig.done(a0)
        assert a0.result.error is None


# -- backoff ----------------------------------------------------------------------------------------------


async def test_retry_backoff_grows_exponentially_up_to_max() -> None:
    """Each retry of a batch waits twice as long as the previous one (+-20 % jitter), up to
    retry_backoff_max_ms; the retry goes when its backoff ends."""
    async with Rig({A: 1}, retry_backoff_ms=100, retry_backoff_max_ms=1000) as rig:
        a0 = rig.add(A, b"a0")
        await rig.start()
        delays: list[float] = []
        retry_at = 0.0
        for attempt in range(1, 8):
            call = await rig.next_produce()
            assert call.state(A) == (PID, 0, 0)
            assert rig.loop.time() >= retry_at, "retried before its backoff ended"
            call.answer({A: NOT_LEADER})
            await rig.until(lambda n=attempt: a0.attempts == n and not a0.in_flight, "the retry scheduled")
            retry_at = a0.retry_at
            delays.append(retry_at - rig.loop.time())  # the clock stands still until the Sender sleeps
        expected = [0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]
        for got, want in zip(delays, expected, strict=True):
            assert want * 0.8 - 1e-9 <= got <= want * 1.2 + 1e-9, (delays, expected)
        assert all(delays[i] < delays[i + 1] for i in range(3)), delays


# -- shutdown ---------------------------------------------------------------------------------------------


async def test_close_with_every_node_unreachable_ends_within_delivery_timeout() -> None:
    """Sender.close() while every broker refuses connections: it returns once delivery_timeout_ms has
    passed for the records (plus a little loop time), and every record fails with KafkaTimeoutError that
    says why: the last error of a batch that was tried, the unreachable node of one never sent."""
    async with Rig({A: 1, B: 1}, virtual=False, delivery_timeout_ms=300, retry_backoff_ms=20,
                   retry_backoff_max_ms=40) as rig:
        loop = asyncio.get_running_loop()
        a0 = rig.add(A, b"a0")
        created = loop.time()
        await rig.start()
        call = await rig.next_produce()
        rig.client.down.add(1)
        call.fail(KafkaConnectionError("node 1: connection reset by peer"))
        b0 = rig.add(B, b"b0")
        await rig.settle(5)

        await asyncio.wait_for(rig.sender.close(), 5)
        took = loop.time() - created
        assert 0.3 <= took < 0.3 + 0.25, took
        assert not rig.sender.running
        assert not rig.client.pending(ProduceRequest)
        for batch in (a0, b0):
            assert isinstance(batch.result.error, KafkaTimeoutError), batch.result.error
            assert "delivery_timeout_ms=300" in str(batch.result.error)
        assert "last error: KafkaConnectionError: node 1: connection reset by peer" in str(a0.result.error)
        assert "may have been written" in str(a0.result.error)
        assert "never sent: node 1 unreachable" in str(b0.result.error)
        assert rig.client.connect_attempts >= 1
        assert not rig.acc.incomplete


@pytest.mark.parametrize("needs", ["a connection", "metadata"])
async def test_an_unusable_client_fails_every_batch_instead_of_asking_again(needs: str) -> None:
    """A closed client fails a connect, or a metadata request (for a partition whose leader is unknown),
    at once, before any backoff: the Sender takes that as final and fails every batch with the client's
    error after one attempt, instead of asking again every round until the records expire."""
    tp = A if needs == "a connection" else TopicPartition("elsewhere", 0)
    closed = ProducerClosedError("the client was closed (stopped)")
    async with Rig({A: 1}, idempotent=False) as rig:
        rig.client.unusable = closed
        rig.sender.start()
        batch = rig.add(tp, b"x")
        await rig.done(batch)
        assert batch.result.error is closed
        assert rig.fatal == [closed]
        assert rig.client.metadata_requests + rig.client.connect_attempts == 1
        assert rig.clock is not None and rig.clock.elapsed == 0  # not at the delivery timeout


# -- transactions -----------------------------------------------------------------------------------------


def _begin(rig: Rig) -> None:
    assert rig.txn is not None
    rig.txn.begin()
    rig.txn.check_send(A)


async def _init_txn(rig: Rig, producer_id: int = 7, epoch: int = 0) -> TransactionManager:
    """Start the Sender and initialize the transactional producer (InitProducerId answered)."""
    txn = rig.txn
    assert txn is not None
    rig.sender.start()
    init_task = asyncio.ensure_future(txn.initialize(5))
    init = await rig.next_init()
    assert init.request.transactional_id == "tx" and init.request.producer_id == -1
    init.reply(InitProducerIdResponse(producer_id=producer_id, producer_epoch=epoch))
    await init_task
    assert txn.state is TxnState.READY
    return txn


async def test_failed_produce_in_transaction_is_abortable_and_abort_bumps_epoch() -> None:
    """A batch refused inside a transaction moves it to ABORTABLE_ERROR: commit is refused, abort sends
    EndTxn(abort) and re-inits the producer id (the batch left a sequence gap), and the next transaction
    sends under the new epoch from sequence 0."""
    async with Rig({A: 1}, transactional_id="tx") as rig:
        txn = await _init_txn(rig, 7, 3)

        _begin(rig)
        a0 = rig.add(A, b"a0")
        await rig.add_partitions(A)
        call = await rig.next_produce()
        assert call.request.transactional_id == "tx"
        assert call.state(A) == (7, 3, 0) and call.batches[A].is_transactional
        call.answer({A: OOS})
        await rig.done(a0)
        assert isinstance(a0.result.error, OutOfOrderSequenceNumberError)
        assert txn.state is TxnState.ABORTABLE_ERROR
        try:
            txn.begin_commit()
        except OutOfOrderSequenceNumberError as exc:  # the abortable error, saying what to do
            assert "abort_transaction()" in str(exc) and exc.__cause__ is a0.result.error
        else:
            raise AssertionError("commit allowed after a failed record")
        await rig.settle()
        assert not rig.client.pending(InitProducerIdRequest), "the Sender bumped by itself in a transaction"

        txn.begin_abort()
        end_task = asyncio.ensure_future(txn.end(False, 5))
        end = await rig.next_call(EndTxnRequest)
        assert (end.request.producer_id, end.request.producer_epoch, end.request.committed) == (7, 3, False)
        end.reply(EndTxnResponse())
        bump = await rig.next_init()
        assert bump.request.transactional_id == "tx"
        assert (bump.request.producer_id, bump.request.producer_epoch) == (7, 3)
        bump.reply(InitProducerIdResponse(producer_id=7, producer_epoch=4))
        await end_task
        assert txn.state is TxnState.READY and (rig.idem.producer_id, rig.idem.producer_epoch) == (7, 4)

        _begin(rig)
        a1 = rig.add(A, b"a1")
        await rig.add_partitions(A)
        call = await rig.next_produce()
        assert call.state(A) == (7, 4, 0) and call.values(A) == [b"a1"]
        call.answer()
        await rig.done(a1)
        assert a1.result.error is None
        txn.begin_commit()
        commit_task = asyncio.ensure_future(txn.end(True, 5))
        end = await rig.next_call(EndTxnRequest)
        assert (end.request.producer_epoch, end.request.committed) == (4, True)
        end.reply(EndTxnResponse())
        await commit_task
        assert txn.state is TxnState.READY


async def test_invalid_producer_epoch_in_transaction_is_fatal() -> None:
    """INVALID_PRODUCER_EPOCH on a produce inside a transaction means another producer took over: the
    batch fails with ProducerFenced, the Sender reports it as fatal and fails everything else queued."""
    async with Rig({A: 1, B: 2}, transactional_id="tx") as rig:
        txn = await _init_txn(rig)

        _begin(rig)
        a0 = rig.add(A, b"a0")
        await rig.add_partitions(A)
        call = await rig.next_produce(node=1)
        txn.check_send(B)
        b0 = rig.add(B, b"b0")  # waits for its AddPartitionsToTxn, which the test never answers
        call.answer({A: BAD_EPOCH})
        await rig.done(a0, b0)
        assert isinstance(a0.result.error, ProducerFenced), a0.result.error
        assert len(rig.fatal) == 1 and isinstance(rig.fatal[0], ProducerFenced)
        assert rig.sender.error is rig.fatal[0]
        assert b0.result.error is rig.fatal[0]
        assert not rig.acc.incomplete


async def test_fenced_add_partitions_makes_transaction_fatal() -> None:
    """PRODUCER_FENCED on AddPartitionsToTxn: the transaction is in FATAL_ERROR and every later call
    raises ProducerFenced; the partition's batch is never sent."""
    async with Rig({A: 1}, transactional_id="tx") as rig:
        txn = await _init_txn(rig)
        _begin(rig)
        rig.add(A, b"a0")
        call = await rig.next_call(AddPartitionsToTxnRequest)
        call.reply(AddPartitionsToTxnResponse(results_by_topic_v3_and_below=[AddPartitionsToTxnTopicResult(
            name="t", results_by_partition=[AddPartitionsToTxnPartitionResult(
                partition_index=0, partition_error_code=ProducerFenced.errno)])]))
        await rig.until(lambda: txn.state is TxnState.FATAL_ERROR, "the fatal state")
        assert isinstance(txn.error, ProducerFenced)
        for attempt in (lambda: txn.check_send(A), txn.begin_commit, txn.begin_abort, txn.begin):
            try:
                attempt()
            except ProducerFenced:
                pass
            else:
                raise AssertionError(f"{attempt} did not raise")
        await rig.settle()
        assert not rig.produce_calls(A)


async def _abort(rig: Rig) -> asyncio.Future[None]:
    """What Producer.abort_transaction() does (producer.py ``_abort``): drop the unsent records, wait for
    the ones in flight, then EndTxn(abort); returns the end() task, EndTxn answered."""
    txn = rig.txn
    assert txn is not None
    txn.begin_abort()
    rig.sender.abort_queued(KafkaError("the transaction was aborted before this record was sent"))
    await rig.acc.wait_for(list(rig.acc.incomplete))
    end_task = asyncio.ensure_future(txn.end(False, 5))
    (await rig.next_call(EndTxnRequest)).reply(EndTxnResponse())
    await rig.until(lambda: end_task.done() or rig.client.pending(InitProducerIdRequest), "the abort")
    if not end_task.done():  # a bump closes the gap of a dropped batch: grant it
        await rig.grant_bump(7, rig.idem.producer_epoch)
    await end_task
    return end_task


async def _commit(rig: Rig) -> None:
    txn = rig.txn
    assert txn is not None
    txn.begin_commit()
    end_task = asyncio.ensure_future(txn.end(True, 5))
    (await rig.next_call(EndTxnRequest)).reply(EndTxnResponse())
    await end_task


async def _dropped_sequenced_batch(rig: Rig) -> TransactionManager:
    """A committed transaction wrote sequence 0 of A; in the next one, A's batch got sequence 1, was
    refused NOT_LEADER_OR_FOLLOWER (certainly not written) and waits for its retry when the transaction
    is aborted."""
    txn = await _init_txn(rig)
    _begin(rig)
    a0 = rig.add(A, b"a0")
    await rig.add_partitions(A)
    (await rig.next_produce()).answer()
    await rig.done(a0)
    await _commit(rig)

    _begin(rig)
    a1 = rig.add(A, b"a1")
    await rig.add_partitions(A)
    call = await rig.next_produce()
    assert call.state(A) == (7, 0, 1)
    call.answer({A: NOT_LEADER})
    await rig.until(lambda: not a1.in_flight, "A's retry scheduled")
    await _abort(rig)
    assert txn.state is TxnState.READY
    assert a1.result.done and a1.result.error is not None
    return txn


async def test_abort_dropping_sequenced_batch_leaves_no_sequence_gap() -> None:
    """I6 across an abort: the broker holds sequence 0 of A; a batch that held sequence 1 and was dropped
    unsent by abort_transaction() leaves a gap, so the next transaction's batch of A must go at sequence
    1 of the same epoch or at 0 of a new one -- sequence 2 of the same epoch gets
    OUT_OF_ORDER_SEQUENCE_NUMBER from the broker."""
    async with Rig({A: 1}, transactional_id="tx") as rig:
        await _dropped_sequenced_batch(rig)
        _begin(rig)
        a2 = rig.add(A, b"a2")
        await rig.add_partitions(A)
        call = await rig.next_produce()
        pid, epoch, seq = call.state(A)
        assert (epoch, seq) == (0, 1) or (epoch > 0 and seq == 0), \
            f"sequence gap: the broker holds 7/0 up to seq 0; next transaction sent {pid}/{epoch} seq {seq}"
        call.answer()
        await rig.done(a2)


async def test_abort_dropping_sequenced_batch_does_not_block_later_retries() -> None:
    """After abort_transaction() dropped a sequenced batch, a later batch of the same partition that needs
    a retry gets it after its backoff -- not only when delivery_timeout_ms expires it."""
    async with Rig({A: 1}, transactional_id="tx") as rig:
        await _dropped_sequenced_batch(rig)
        _begin(rig)
        a2 = rig.add(A, b"a2")
        await rig.add_partitions(A)
        call = await rig.next_produce()
        call.answer({A: NOT_LEADER})
        refused_at = rig.loop.time()
        retry = await rig.until(lambda: rig.client.take(ProduceRequest) or a2.result.done, "a2's retry")
        waited = rig.loop.time() - refused_at
        assert retry is not True, f"a2 was never retried; after {waited:.0f} s: {a2.result.error}"
        assert waited < 1.0
        assert retry.values(A) == [b"a2"]
        retry.answer()
        await rig.done(a2)
        assert a2.result.error is None

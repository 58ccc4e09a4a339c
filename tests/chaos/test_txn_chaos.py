"""A transactional consume-transform-produce loop on noida-db under seeded faults: connections closed
and answers lost (Produce, AddPartitionsToTxn, TxnOffsetCommit, EndTxn) through a proxy, injected
retriable errors, a second producer starting with the loop's transactional_id (a restarted instance:
the loop's producer is fenced mid-transaction), and random aborts by the loop itself.

Every output record names the transaction attempt that wrote it, so a read_committed reader can tell
an aborted attempt's record from a committed one. The loop recovers as a Kafka application must: after
its own abort it rewinds to the last committed input offsets; after a failure it aborts (or, when the
producer cannot, starts a new producer with the same transactional_id, which fences the old one) and
rewinds to the offsets the broker holds for the group. Then, for confluent-kafka's and our own
read_committed consumers: each input appears in the output exactly once, no aborted attempt's record
is visible, and the group's committed offsets cover the whole input.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import confluent_kafka
from _noida_faults import (
    ADD_OFFSETS_TO_TXN,
    ADD_PARTITIONS_TO_TXN,
    CONCURRENT_TRANSACTIONS,
    COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE,
    END_TXN,
    NOT_COORDINATOR,
    NOT_ENOUGH_REPLICAS,
    NOT_LEADER_OR_FOLLOWER,
    PRODUCE,
    TXN_OFFSET_COMMIT,
    FaultProxy,
    create_topic,
)

from aiokafka_lite import Producer
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.errors import KafkaError
from aiokafka_lite.structs import TopicPartition as TP

INPUTS = 240
SRC_PARTITIONS, DST_PARTITIONS = 3, 2
PRODUCER: dict[str, Any] = {
    "request_timeout_ms": 4000, "retry_backoff_ms": 50, "transaction_timeout_ms": 10000,
    "linger_ms": 2, "max_block_ms": 15000}

FAULTS: list[tuple[str, int, int]] = [
    ("close", 0, 0),
    ("fence", 0, 0),  # a second producer with our transactional_id starts: ours is a zombie now
    ("error", PRODUCE, NOT_LEADER_OR_FOLLOWER),
    ("error", PRODUCE, NOT_ENOUGH_REPLICAS),
    ("error", END_TXN, COORDINATOR_NOT_AVAILABLE),
    ("error", END_TXN, CONCURRENT_TRANSACTIONS),
    ("error", END_TXN, NOT_COORDINATOR),
    ("error", TXN_OFFSET_COMMIT, COORDINATOR_LOAD_IN_PROGRESS),
    ("error", ADD_OFFSETS_TO_TXN, CONCURRENT_TRANSACTIONS),
    ("drop", PRODUCE, 0),
    ("drop", ADD_PARTITIONS_TO_TXN, 0),
    ("drop", TXN_OFFSET_COMMIT, 0),
    ("drop", END_TXN, 0),
]



def _broker_committed(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    """The group's committed offsets as the broker holds them (read with confluent-kafka)."""
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                                  "enable.auto.commit": False})
    try:
        tps = [confluent_kafka.TopicPartition(topic, p) for p in range(SRC_PARTITIONS)]
        got = c.committed(tps, timeout=10)
        return {tp.partition: max(tp.offset, 0) for tp in got}
    finally:
        c.close()


def _read_confluent(bootstrap: str, topic: str, isolation: str, want: int) -> list[bytes]:
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": f"peer-{time.monotonic_ns()}",
                                  "enable.auto.commit": False, "isolation.level": isolation})
    try:
        c.assign([confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                  for p in range(DST_PARTITIONS)])
        out: list[bytes] = []
        deadline, quiet_until = time.monotonic() + 20, None
        while time.monotonic() < deadline:
            msgs = c.consume(num_messages=1000, timeout=0.2)
            for m in msgs:
                assert not m.error(), m.error()
                out.append(m.value())
            if len(out) >= want and quiet_until is None:
                quiet_until = time.monotonic() + 1.0  # keep reading: what should not be there would show
            if quiet_until is not None and time.monotonic() > quiet_until:
                break
        return out
    finally:
        c.close()


async def _read_ours(bootstrap: str, topic: str, want: int) -> list[bytes]:
    async with Consumer(bootstrap_servers=bootstrap, isolation_level="read_committed",
                        auto_offset_reset="earliest") as c:
        c.assign([TP(topic, p) for p in range(DST_PARTITIONS)])
        out: list[bytes] = []
        deadline, quiet_until = time.monotonic() + 20, None
        while time.monotonic() < deadline:
            for records in (await c.poll(timeout_ms=200)).values():
                out.extend(r.value for r in records)
            if len(out) >= want and quiet_until is None:
                quiet_until = time.monotonic() + 1.0
            if quiet_until is not None and time.monotonic() > quiet_until:
                break
        return out


async def test_consume_transform_produce_exactly_once(noida: Any, new_topic: Any,
                                                      proxy_seed: int) -> None:
    seed = proxy_seed  # tests/chaos/conftest.py: seeds 0..min(--chaos-seeds, 4)-1
    rng = random.Random(seed)
    src, dst, group, txn_id = new_topic("src"), new_topic("dst"), new_topic("g"), new_topic("txn")
    await asyncio.to_thread(create_topic, noida.bootstrap, src, SRC_PARTITIONS)
    await asyncio.to_thread(create_topic, noida.bootstrap, dst, DST_PARTITIONS)
    async with Producer(bootstrap_servers=noida.bootstrap) as p:
        for i in range(INPUTS):
            await p.send(src, b"in-%d" % i, key=b"k%d" % (i % 7), partition=i % SRC_PARTITIONS)
    committed_attempts: set[int] = set()
    aborted_attempts: set[int] = set()
    unknown_attempts: set[int] = set()
    failures: list[str] = []
    producers_made = 1
    source = Consumer(bootstrap_servers=noida.bootstrap, auto_offset_reset="earliest", max_poll_records=8)
    async with FaultProxy(noida.bootstrap) as proxy, source as c:
        tps = [TP(src, p) for p in range(SRC_PARTITIONS)]
        c.assign(tps)
        producer = Producer(bootstrap_servers=proxy.bootstrap, transactional_id=txn_id, **PRODUCER)
        await producer.start()
        attempt = 0
        fencers: list[asyncio.Task[None]] = []
        done = {p: 0 for p in range(SRC_PARTITIONS)}  # committed input offsets, as the loop knows them
        deadline = time.monotonic() + 60
        try:
            while min(done[p] for p in done) < INPUTS // SRC_PARTITIONS:
                assert time.monotonic() < deadline, f"seed {seed}: no end; done {done}, failures {failures}"
                batch = await c.poll(timeout_ms=200)
                if not batch:
                    continue
                attempt += 1
                if rng.random() < 0.5:
                    kind, api, code = FAULTS[rng.randrange(len(FAULTS))]
                    if kind == "close":
                        asyncio.get_running_loop().call_later(rng.uniform(0, 0.03), proxy.close_all)
                    elif kind == "fence":
                        fence = _fence(noida.bootstrap, txn_id, rng.uniform(0, 0.03))
                        fencers.append(asyncio.create_task(fence))
                    elif kind == "error":
                        proxy.inject(api, code, rng.randint(1, 2))
                    else:
                        proxy.drop(api)
                deliberate_abort = rng.random() < 0.2
                offsets = {tp: records[-1].offset + 1 for tp, records in batch.items()}
                try:
                    await asyncio.wait_for(_one_transaction(producer, dst, group, batch, offsets, attempt,
                                                            deliberate_abort), 30)
                except KafkaError as exc:
                    await asyncio.gather(*fencers)  # a fencing producer must be gone before ours returns
                    failures.append(f"attempt {attempt}: {exc!r}")
                    unknown_attempts.add(attempt)
                    try:
                        await asyncio.wait_for(producer.abort_transaction(), 20)
                    except (KafkaError, asyncio.TimeoutError) as abort_exc:
                        failures.append(f"attempt {attempt} abort: {abort_exc!r}")
                        await producer.stop(timeout=2)
                        producer = Producer(bootstrap_servers=proxy.bootstrap, transactional_id=txn_id,
                                            **PRODUCER)
                        await producer.start()
                        producers_made += 1
                    else:
                        unknown_attempts.discard(attempt)
                        aborted_attempts.add(attempt)
                    proxy.clear()
                    truth = await asyncio.to_thread(_broker_committed, noida.bootstrap, group, src)
                    done.update(truth)
                    for tp in tps:
                        c.seek(tp, done[tp.partition])
                    continue
                proxy.clear()
                if deliberate_abort:
                    aborted_attempts.add(attempt)
                    for tp in tps:
                        c.seek(tp, done[tp.partition])
                else:
                    committed_attempts.add(attempt)
                    done.update({tp.partition: off for tp, off in offsets.items()})
        finally:
            await asyncio.gather(*fencers, return_exceptions=True)
            await producer.stop(timeout=5)

    expected = sorted(b"in-%d" % i for i in range(INPUTS))
    truth = await asyncio.to_thread(_broker_committed, noida.bootstrap, group, src)
    assert truth == {p: INPUTS // SRC_PARTITIONS for p in range(SRC_PARTITIONS)}, truth
    readers = {
        "confluent read_committed": await asyncio.to_thread(_read_confluent, noida.bootstrap, dst,
                                                            "read_committed", INPUTS),
        "aiokafka_lite read_committed": await _read_ours(noida.bootstrap, dst, INPUTS),
    }
    for who, values in readers.items():
        attempts = {int(v.rsplit(b"-a", 1)[1]) for v in values}
        visible_aborted = sorted(attempts & aborted_attempts)
        assert not visible_aborted, f"seed {seed}: {who} sees aborted attempts {visible_aborted}; " \
                                    f"failures {failures}; faults {proxy.log}"
        assert attempts <= committed_attempts | unknown_attempts, (who, attempts - committed_attempts)
        inputs = sorted(v.rsplit(b"-a", 1)[0].removeprefix(b"out-") for v in values)
        dups = sorted({v for v in inputs if inputs.count(v) > 1})
        missing = sorted(set(expected) - set(inputs))
        assert not dups and not missing, (
            f"seed {seed}: {who}: duplicated {dups[:5]}, missing {missing[:5]}; failures {failures}; "
            f"faults {proxy.log}")
    everything = await asyncio.to_thread(_read_confluent, noida.bootstrap, dst, "read_uncommitted", INPUTS)
    aborted_in_log = {int(v.rsplit(b"-a", 1)[1]) for v in everything} & aborted_attempts
    print(f"seed {seed}: {attempt} attempts, {len(committed_attempts)} committed, {len(aborted_attempts)} "
          f"aborted ({len(aborted_in_log)} of them left records in the log), "
          f"{len(unknown_attempts)} unknown, "
          f"{producers_made} producers, {len(proxy.log)} faults, failures {failures[:4]}")


async def _fence(bootstrap: str, txn_id: str, delay: float) -> None:
    """Start (InitProducerId bumps the epoch, aborting the open transaction) and stop a producer with the
    loop's transactional_id, as a restarted instance of the application would."""
    await asyncio.sleep(delay)
    async with Producer(bootstrap_servers=bootstrap, transactional_id=txn_id, **PRODUCER):
        pass


async def _one_transaction(producer: Producer, dst: str, group: str, batch: dict[TP, list[Any]],
                           offsets: dict[TP, int], attempt: int, deliberate_abort: bool) -> None:
    await producer.begin_transaction()
    for records in batch.values():
        for r in records:
            await producer.send(dst, b"out-%s-a%d" % (r.value, attempt), key=r.key)
    await producer.send_offsets_to_transaction(offsets, group)
    if deliberate_abort:
        await producer.flush()  # the records reach the log; the abort marker must hide them
        await producer.abort_transaction()
    else:
        await producer.commit_transaction()

"""Seeded producer chaos on librdkafka's mock cluster: 3 brokers, 6 partitions, replication 3.

Each seed draws a fault schedule (``_schedule.make_schedule``: leader moves, injected Produce errors,
a broker down for 0.5-2 s, RTT spikes) that is carried out while ~20k records keyed by 60 keys are sent
(the value carries a per-key counter). confluent-kafka reads everything back, and each run is scored:
acked, lost (acked but not read), dup, out of order (per key, a counter going backwards), failed.

Our idempotent producer (acks=all, linger_ms=2, the default 5 requests in flight per connection) must
score 0 lost / 0 dup / 0 out of order / 0 failed on every seed. The mock cluster checks idempotent
sequence numbers only for transactional producers (rdkafka_mock.c, ``rd_kafka_mock_validate_records``),
so order here must come from the producer alone. For the same reason the mock writes a correct retry
of a batch whose answer was lost (same producer id, epoch and sequence) a second time, where Kafka would
not: such copies are told apart by their batch headers (``_batches.py``) and reported as
``mock-replays``, not as dup. A copy under a new sequence (which Kafka would write too) is a dup.

confluent-kafka's producer runs the same schedule with the same settings; its numbers are only
recorded in the table, for comparison.

Both clients get request_timeout_ms=5000 and delivery_timeout_ms=20000 (message.timeout.ms) so that a
stuck run ends as failed records instead of hanging the suite.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
from _batches import batch_headers
from _producer_peers import aread_confluent
from _schedule import KEYS, Action, Outcome, account, apply_schedule, ident, make_schedule, record

from aiokafka_lite import Producer

TOTAL = 20_000
CHUNK = 100  # records sent, then a pause: production spans the schedule's window
PAUSE = 0.02
PARTITIONS = 6
REQUEST_TIMEOUT_MS = 5000
DELIVERY_TIMEOUT_MS = 20_000


def _describe(seed: int, schedule: list[Action], outcome: Outcome) -> str:
    lines = [f"seed {seed}: acked={outcome.acked} lost={outcome.lost} dup={outcome.dup} "
             f"out-of-order={outcome.out_of_order} failed={outcome.failed} mock-replays={outcome.replayed}",
             "schedule:", *(f"  {a}" for a in schedule)]
    if outcome.first_errors:
        lines.append(f"errors: {outcome.first_errors}")
    if outcome.examples:
        lines.append(f"examples: {outcome.examples}")
    return "\n".join(lines)


async def _read_back(bootstrap: str, topic: str, count: int) -> list[Any]:
    # Read the ``count`` records the log holds, then 0.5 s more in case more are there.
    return await aread_confluent(bootstrap, topic, count, timeout=15, settle=0.5)


async def _run_ours(mc: Any, topic: str, schedule: list[Action]) -> tuple[list[int], dict[int, str]]:
    async with Producer(bootstrap_servers=mc.bootstrap, enable_idempotence=True, acks="all", linger_ms=2,
                        request_timeout_ms=REQUEST_TIMEOUT_MS,
                        delivery_timeout_ms=DELIVERY_TIMEOUT_MS) as p:
        t0 = time.monotonic()
        chaos = asyncio.ensure_future(apply_schedule(mc, topic, schedule, t0))
        futs = []
        try:
            for start in range(0, TOTAL, CHUNK):
                for i in range(start, start + CHUNK):
                    key, value = record(i)
                    futs.append(await p.send(topic, value, key=key))
                await asyncio.sleep(PAUSE)
        finally:
            await chaos
        _, pending = await asyncio.wait(futs, timeout=DELIVERY_TIMEOUT_MS / 1000 + 30)
        assert not pending, f"{len(pending)} futures never completed"
        assert p.metrics()["record-retry-total"] > 0  # the schedule really hit the producer
    acked = [i for i, f in enumerate(futs) if f.exception() is None]
    failed = {i: repr(f.exception()) for i, f in enumerate(futs) if f.exception() is not None}
    return acked, failed


def _produce_confluent(bootstrap: str, topic: str, acked: list[int], failed: dict[int, str]) -> int:
    """confluent-kafka's idempotent producer in this thread; returns records left unreported by flush."""
    lock = threading.Lock()

    def on_delivery(err: Any, msg: Any) -> None:
        k, n = ident(msg.value())
        with lock:
            if err is None:
                acked.append(n * KEYS + k)
            else:
                failed[n * KEYS + k] = str(err)

    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                  "linger.ms": 2, "request.timeout.ms": REQUEST_TIMEOUT_MS,
                                  "message.timeout.ms": DELIVERY_TIMEOUT_MS})
    for start in range(0, TOTAL, CHUNK):
        for i in range(start, start + CHUNK):
            key, value = record(i)
            p.produce(topic, value, key=key, on_delivery=on_delivery)
        p.poll(0)
        time.sleep(PAUSE)
    return p.flush(DELIVERY_TIMEOUT_MS / 1000 + 30)


async def _run_confluent(mc: Any, topic: str, schedule: list[Action]) -> tuple[list[int], dict[int, str]]:
    acked: list[int] = []
    failed: dict[int, str] = {}
    t0 = time.monotonic()
    chaos = asyncio.ensure_future(apply_schedule(mc, topic, schedule, t0))
    try:
        left = await asyncio.to_thread(_produce_confluent, mc.bootstrap, topic, acked, failed)
    finally:
        await chaos
    reported = set(acked) | set(failed)
    for i in range(TOTAL):
        if i not in reported:
            failed[i] = f"no delivery report ({left} left after flush)"
    return acked, failed


async def _chaos_run(client: str, seed: int, mock_cluster: Callable[..., Any], new_topic: Callable[..., str],
                     chaos_table: Any) -> tuple[Outcome, list[Action]]:
    mc = mock_cluster(3)
    topic = new_topic()
    mc.create_topic(topic, partitions=PARTITIONS, replication_factor=3)
    schedule = make_schedule(seed, partitions=PARTITIONS)
    run = _run_ours if client == "aiokafka_lite" else _run_confluent
    acked, failed = await run(mc, topic, schedule)
    headers = await batch_headers(mc, topic, PARTITIONS)  # also: how many records the log holds
    got = await _read_back(mc.bootstrap, topic, len(headers))
    assert len(got) >= len(headers), f"confluent-kafka read {len(got)} of {len(headers)} records"
    outcome = account(acked, failed, got, headers)
    chaos_table.add(seed, client, *outcome.row())
    print(_describe(seed, schedule, outcome))
    return outcome, schedule


async def test_ours_keeps_every_record_once_in_order(chaos_seed: int, mock_cluster: Callable[..., Any],
                                                     new_topic: Callable[..., str], chaos_table: Any) -> None:
    outcome, schedule = await _chaos_run("aiokafka_lite", chaos_seed, mock_cluster, new_topic, chaos_table)
    assert outcome.numbers() == (TOTAL, 0, 0, 0, 0), _describe(chaos_seed, schedule, outcome)


async def test_confluent_kafka_under_the_same_schedule(
        chaos_seed: int, mock_cluster: Callable[..., Any], new_topic: Callable[..., str],
        chaos_table: Any) -> None:
    """Recorded for comparison only: librdkafka may fail records under these faults. The test checks just
    that the harness ran: every record was produced and the schedule was carried out."""
    outcome, _ = await _chaos_run("confluent-kafka", chaos_seed, mock_cluster, new_topic, chaos_table)
    assert outcome.acked + outcome.failed == TOTAL  # every record accounted for (unreported = failed)

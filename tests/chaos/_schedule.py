"""Seeded fault schedules for librdkafka's mock cluster, and the bookkeeping of a chaos run.

``make_schedule(seed, ...)`` draws, with ``random.Random(seed)`` only, a list of timed actions:
leader moves, 1-5 injected Produce errors per push (to any broker, and to the broker of each RTT spike
while it is slow), one broker down for 0.5-2 s, RTT spikes of a few hundred ms.
The same seed always gives the same schedule, so a failing seed can be replayed with ``--chaos-seeds``
and the test id (timing still varies from run to run: the schedule is fixed, the interleaving is not).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

PRODUCE = 0
# NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR, NOT_ENOUGH_REPLICAS,
# NOT_ENOUGH_REPLICAS_AFTER_APPEND, NETWORK_EXCEPTION: all retriable for an idempotent producer.
PRODUCE_ERRORS = (6, 7, 56, 19, 20, 13)


class Action(NamedTuple):
    at: float  # seconds after the run started
    op: str  # "leader" | "errors" | "broker_errors" | "down" | "up" | "rtt"
    args: tuple[Any, ...]

    def __str__(self) -> str:
        return f"{self.at:5.2f}s {self.op}{self.args}"


def make_schedule(seed: int, *, partitions: int, brokers: int = 3, window: float = 4.0) -> list[Action]:
    """The fault schedule of ``seed``, sorted by time; it ends with every broker up and RTT 0.

    Inside each RTT spike, 1-5 Produce errors are pushed to the slow broker itself
    (``push_request_error_rtts``): while its answers are slow several batches of a partition are in flight,
    and an error on the first of them is what tests ordering across retries.
    """
    rng = random.Random(seed)
    acts: list[Action] = []
    broker_ids = list(range(1, brokers + 1))

    def errors(at: float) -> Action:
        codes = [rng.choice(PRODUCE_ERRORS) for _ in range(rng.randint(1, 5))]
        return Action(round(at, 2), "errors", (codes,))

    for _ in range(rng.randint(2, 5)):
        acts.append(Action(round(rng.uniform(0.1, window), 2), "leader",
                           (rng.randrange(partitions), rng.choice(broker_ids))))
    for _ in range(rng.randint(1, 3)):
        acts.append(errors(rng.uniform(0.1, window)))
    down = rng.choice(broker_ids)
    t_down = round(rng.uniform(0.2, window - 1.0), 2)
    acts.append(Action(t_down, "down", (down,)))
    acts.append(Action(round(t_down + rng.uniform(0.5, 2.0), 2), "up", (down,)))
    for _ in range(rng.randint(1, 2)):
        b = rng.choice(broker_ids)
        t = round(rng.uniform(0.1, window - 0.5), 2)
        length = rng.uniform(0.3, 1.0)
        acts.append(Action(t, "rtt", (b, rng.randint(200, 600))))
        codes = [rng.choice(PRODUCE_ERRORS) for _ in range(rng.randint(1, 5))]
        acts.append(Action(round(t + rng.uniform(0.05, length - 0.05), 2), "broker_errors", (b, codes)))
        acts.append(Action(round(t + length, 2), "rtt", (b, 0)))
    acts.sort(key=lambda a: a.at)
    return acts


async def apply_schedule(mc: Any, topic: str, schedule: Iterable[Action], t0: float) -> None:
    """Carry the actions out on the mock cluster ``mc`` at their times (``t0``: ``time.monotonic()`` of the
    run's start). The mock's calls are synchronous and quick; they run on the event loop like
    tests/producer/test_faults.py does."""
    for act in schedule:
        delay = t0 + act.at - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        if act.op == "leader":
            mc.set_leader(topic, *act.args)
        elif act.op == "errors":
            mc.push_request_errors(PRODUCE, act.args[0])
        elif act.op == "broker_errors":
            broker, codes = act.args
            mc.push_request_error_rtts(broker, PRODUCE, [(c, 0) for c in codes])
        elif act.op == "down":
            mc.set_down(*act.args)
        elif act.op == "up":
            mc.set_up(*act.args)
        elif act.op == "rtt":
            mc.set_rtt(*act.args)
        else:  # pragma: no cover - make_schedule makes only the ops above
            raise AssertionError(f"unknown action {act}")


# --------------------------------------------------------------------------------------------------
# Records and their accounting

KEYS = 60


def record(i: int) -> tuple[bytes, bytes]:
    """Record ``i`` of a run: key ``k<i % KEYS>``, value ``<key index>:<per-key counter>``."""
    k = i % KEYS
    return b"k%02d" % k, b"%02d:%07d" % (k, i // KEYS)


def ident(value: bytes) -> tuple[int, int]:
    k, _, n = value.partition(b":")
    return int(k), int(n)


@dataclass
class Outcome:
    acked: int
    lost: int
    dup: int
    out_of_order: int
    failed: int
    #: copies that repeat an earlier batch's producer id, epoch and sequence (a retry a sequence-checking
    #: broker would have answered as duplicate without writing; librdkafka's mock writes it): not in ``dup``
    replayed: int
    first_errors: list[str]
    examples: list[str]

    def numbers(self) -> tuple[int, int, int, int, int]:
        return self.acked, self.lost, self.dup, self.out_of_order, self.failed

    def row(self) -> tuple[int, int, int, int, int, int]:
        return (*self.numbers(), self.replayed)


def account(acked: Iterable[int], failed: dict[int, str], got: Iterable[Any],
            batches: dict[tuple[int, int], Any] | None = None) -> Outcome:
    """Compare what the producer was told (``acked`` record numbers, ``failed`` number -> error) with what
    a reader found (``got``: records with ``partition``, ``offset``, ``value``).

    lost: acknowledged but not read. dup: copies read beyond the first. out of order: per key, in log
    order, a record's counter below one read before it (first copies only; a second copy counts as dup).
    With ``batches`` (``(partition, offset)`` -> producer id, epoch, base sequence, index in batch), a copy
    whose batch header and position equal the first copy's is counted as ``replayed`` instead of dup.
    """
    acked_ids = {ident(record(i)[1]) for i in acked}
    rows = sorted(got, key=lambda g: (g.partition, g.offset))
    seen: Counter[tuple[int, int]] = Counter()
    first_at: dict[tuple[int, int], tuple[int, int]] = {}
    replayed = 0
    high: dict[int, int] = {}
    ooo = 0
    examples: list[str] = []
    for g in rows:
        rid = ident(g.value)
        seen[rid] += 1
        if seen[rid] > 1:
            first_header = batches.get(first_at[rid]) if batches is not None else None
            if first_header is not None and batches.get((g.partition, g.offset)) == first_header:
                replayed += 1
                continue
            if len(examples) < 5:
                examples.append(f"dup {rid} at p{g.partition}@{g.offset}")
            continue
        first_at[rid] = (g.partition, g.offset)
        k, n = rid
        if n < high.get(k, -1):
            ooo += 1
            if len(examples) < 5:
                examples.append(f"key {k}: counter {n} after {high[k]} at p{g.partition}@{g.offset}")
        high[k] = max(high.get(k, -1), n)
    lost_ids = acked_ids - set(seen)
    if lost_ids and len(examples) < 5:
        examples.append(f"lost e.g. {sorted(lost_ids)[:3]}")
    dup = sum(c - 1 for c in seen.values()) - replayed
    errors = sorted({e for e in failed.values()})[:3]
    return Outcome(len(acked_ids), len(lost_ids), dup, ooo, len(failed), replayed, errors, examples)

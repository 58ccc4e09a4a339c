"""A commit that is still retrying when a rebalance takes its partitions away fails with CommitFailedError
(aiokafka's contract) and leaves the committed offset the partitions' next owner reads from untouched.

The rule (membership.commit_sync, checked by the committer before every attempt): a partition the member
held when commit() was called and has given up since is not committed. Without it the retry goes out
with the member's *new* generation (classic) or epoch (KIP-848), which the coordinator accepts, and moves
the committed offset under the new owner (it repeats or skips records; group chaos seed 3 found it).

The order is fixed by construction, not by timing: every OffsetCommit is refused with a retriable error
(or one saying the coordinator moved) from the first attempt on, so the commit keeps retrying; the test
waits for that first refusal, lets a second member join, waits until the group's new assignment is
installed in both members, and only then lets OffsetCommit through. The classic group runs on the real
brokers through the chaos fault proxy (librdkafka's mock cannot run a 2-member classic group); the
KIP-848 group on librdkafka's mock cluster (Tansu and noida-db have no ConsumerGroupHeartbeat).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aiokafka_lite import errors as Errors
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.structs import TopicPartition as TP
from aiokafka_lite.testing import MockCluster

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "chaos"))
from _noida_faults import (
    COORDINATOR_LOAD_IN_PROGRESS,
    NOT_COORDINATOR,
    OFFSET_COMMIT,
    FaultProxy,
    create_topic,
)

PARTITIONS = 2
#: More refusals than the commit can use up: its timeout over the retry backoff is at most 300 attempts.
REFUSALS = 2000
COMMON: dict[str, Any] = {"auto_offset_reset": "earliest", "enable_auto_commit": False,
                          "request_timeout_ms": 30000, "retry_backoff_ms": 100, "retry_backoff_max_ms": 100}
CLASSIC: dict[str, Any] = {**COMMON, "heartbeat_interval_ms": 100, "session_timeout_ms": 6000}
ERRORS = pytest.mark.parametrize("code", [COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR],
                                 ids=["retriable", "coordinator-lost"])


async def until(cond: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def split_between(a: Consumer, b: Consumer, tps: set[TP]) -> set[TP]:
    """Wait until ``a`` and ``b`` have installed one generation's assignment that splits ``tps`` between
    them (b polls, a's membership task works without polls); returns what b took from a."""
    deadline = time.monotonic() + 30
    while True:
        await b.poll(timeout_ms=50)
        mine, theirs = a.assignment(), b.assignment()
        if mine and theirs and mine | theirs == tps and a._coordinator is not None \
                and a._coordinator.has_assignment() and await b.wait_for_assignment(5) == theirs:
            return theirs
        if time.monotonic() > deadline:
            raise AssertionError(f"no split of {sorted(tps)}: a holds {sorted(mine)}, b {sorted(theirs)}")


async def commit_across_rebalance(a: Consumer, b: Consumer, topic: str, refuse: Callable[[], None],
                                  refused: Callable[[], bool], let_through: Callable[[], None]) -> None:
    """The scenario, for either protocol: ``a`` owns every partition, commits 1 everywhere, then commits
    5 while every OffsetCommit is refused; ``b`` joins and takes a partition; then commits go through."""
    tps = {TP(topic, p) for p in range(PARTITIONS)}
    await a.start()
    assert await a.wait_for_assignment(30) == tps
    await a.commit(dict.fromkeys(tps, 1))
    refuse()
    commit = asyncio.create_task(a.commit(dict.fromkeys(tps, 5)))
    try:
        await until(refused, "the commit's first attempt to be refused")
        assert not commit.done()
        await b.start()
        b.subscribe([topic])
        moved = await split_between(a, b, tps)
        let_through()
        (outcome,) = await asyncio.wait_for(asyncio.gather(commit, return_exceptions=True), 30)
    finally:
        commit.cancel()
    seen = {tp.partition: await b.committed(tp) for tp in moved}
    assert seen == {tp.partition: 1 for tp in moved}, f"b took these at offset 1, a's retry committed {seen}"
    assert isinstance(outcome, Errors.CommitFailedError), f"the commit ended with {outcome!r}"
    assert "given up" in str(outcome)


@ERRORS
async def test_classic_commit_retrying_across_a_rebalance_fails_and_moves_no_offset(
        broker: Any, new_topic: Callable[..., str], code: int) -> None:
    topic, group = new_topic(), new_topic("g")
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, PARTITIONS)
    async with FaultProxy(broker.bootstrap) as proxy:
        a = Consumer(topic, bootstrap_servers=proxy.bootstrap, group_id=group, **CLASSIC)
        b = Consumer(bootstrap_servers=broker.bootstrap, group_id=group, **CLASSIC)
        try:
            await commit_across_rebalance(
                a, b, topic, refuse=lambda: proxy.inject(OFFSET_COMMIT, code, REFUSALS),
                refused=lambda: any(e[1:3] == ("error", OFFSET_COMMIT) for e in proxy.log),
                let_through=proxy.clear)
        finally:
            await a.stop()
            await b.stop()


@ERRORS
async def test_kip848_commit_retrying_across_a_reconciliation_fails_and_moves_no_offset(
        mock_cluster: Callable[..., MockCluster], new_topic: Callable[..., str], code: int) -> None:
    mc = mock_cluster(1)
    mc.set_consumer_group_timing(heartbeat_interval_ms=100)
    topic, group = new_topic(), new_topic("g")
    mc.create_topic(topic, PARTITIONS, 1)
    a = Consumer(topic, bootstrap_servers=mc.bootstrap, group_id=group, group_protocol="consumer", **COMMON)
    b = Consumer(bootstrap_servers=mc.bootstrap, group_id=group, group_protocol="consumer", **COMMON)

    def refuse() -> None:
        mc.start_request_tracking()
        mc.push_request_errors(OFFSET_COMMIT, [code] * REFUSALS)

    try:
        await commit_across_rebalance(
            a, b, topic, refuse=refuse,
            refused=lambda: any(r.api_key == OFFSET_COMMIT for r in mc.requests()),
            let_through=lambda: mc.clear_request_errors(OFFSET_COMMIT))
    finally:
        await a.stop()
        await b.stop()

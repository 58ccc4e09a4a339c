"""A producer batch's state machine (aiokafka_lite/producer/batch.py): one enum, the table this test and
docs/producer.md spell out, one door (``ProducerBatch.transition_to``). The walk drives real batches
through the door along every pair of states; the flags the hot loops read (``is_open``, ``in_flight``)
follow the state; no producer module (the compiled send path included) changes them beside the door."""

from __future__ import annotations

import asyncio
from collections import deque
from pathlib import Path

import pytest
from _state_tables import attribute_assignments, check_drawn, check_is, check_reachable

from aiokafka_lite._state import IllegalTransitionError
from aiokafka_lite.producer.batch import BATCH, BatchState, ProducerBatch
from aiokafka_lite.producer.handles import BatchResult
from aiokafka_lite.records import BatchBuilder
from aiokafka_lite.structs import TopicPartition

ROOT = Path(__file__).resolve().parents[2]
PRODUCER = ROOT / "aiokafka_lite" / "producer"
B = BatchState
EXPECTED = {
    B.OPEN: {B.SEALED, B.DONE},
    B.SEALED: {B.BUILT, B.DONE},
    B.BUILT: {B.IN_FLIGHT, B.DONE},
    B.IN_FLIGHT: {B.BUILT, B.DONE},
    B.DONE: set(),
}


def test_the_table_is_the_documented_one() -> None:
    check_is(BATCH, EXPECTED, "batch")
    check_reachable(BATCH, B.OPEN)
    check_drawn(BATCH, ROOT / "docs" / "producer.md", "batch")


def _path_to(target: BatchState) -> list[BatchState]:
    """The shortest way from OPEN to ``target`` along the table."""
    came: dict[BatchState, BatchState | None] = {B.OPEN: None}
    todo = deque([B.OPEN])
    while todo:
        s = todo.popleft()
        for nxt in sorted(EXPECTED[s], key=lambda x: x.value):
            if nxt not in came:
                came[nxt] = s
                todo.append(nxt)
    path: list[BatchState] = []
    at: BatchState | None = target
    while at is not None and at is not B.OPEN:
        path.append(at)
        at = came[at]
    return path[::-1]


def _batch(loop: asyncio.AbstractEventLoop) -> ProducerBatch:
    tp = TopicPartition("t", 0)
    batch = ProducerBatch(tp, BatchBuilder(0, 1024), BatchResult("t", 0, loop), 0.0, 0)
    assert batch.builder is not None and batch.builder.append(1, None, b"v", None) == 0
    return batch


def _flags(batch: ProducerBatch) -> tuple[bool, bool]:
    return batch.is_open, batch.in_flight


async def test_the_door_walks_the_table() -> None:
    """Every pair: a batch brought to ``old`` through the door moves to ``new`` iff the table lists it,
    else IllegalTransitionError leaves it (and its flags) as it was."""
    loop = asyncio.get_running_loop()
    for old in B:
        for new in B:
            batch = _batch(loop)
            for step in _path_to(old):
                batch.close() if step is B.BUILT else batch.transition_to(step)
            assert batch.state is old
            if new is old or new in EXPECTED[old]:
                batch.transition_to(new)
                assert batch.state is new
            else:
                before = _flags(batch)
                with pytest.raises(IllegalTransitionError, match=f"{old.name} -> {new.name}"):
                    batch.transition_to(new)
                assert batch.state is old and _flags(batch) == before
            assert _flags(batch) == (batch.state is B.OPEN, batch.state is B.IN_FLIGHT)


async def test_close_builds_once_and_a_retry_keeps_the_bytes() -> None:
    batch = _batch(asyncio.get_running_loop())
    data = batch.close()
    assert batch.state is B.BUILT and batch.builder is None
    batch.transition_to(B.IN_FLIGHT)
    batch.transition_to(B.BUILT)  # a retry
    assert batch.close() is data and batch.state is B.BUILT
    batch.transition_to(B.DONE)
    with pytest.raises(IllegalTransitionError, match="DONE -> IN_FLIGHT"):
        batch.transition_to(B.IN_FLIGHT)


_FLAGS = {"is_open", "in_flight", "state"}


def test_no_batch_state_changes_beside_the_door() -> None:
    """Only ProducerBatch.transition_to (and constructors) assign a state or the batch's flags, in any
    producer module (the private twins included) and the compiled send path."""
    bad = [f"{path.name}:{line} {fn}() assigns .{attr}"
           for path in sorted(PRODUCER.glob("*.py"))
           for fn, line, attr in attribute_assignments(path)
           if attr in _FLAGS and fn != "__init__" and (path.name, fn) != ("batch.py", "transition_to")]
    for path in sorted(PRODUCER.glob("*.pyx")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if any(f".{f} =" in line for f in ("is_open", "in_flight")):
                bad.append(f"{path.name}:{i} assigns a batch flag")
    assert not bad, "a batch's state changed beside its door:\n" + "\n".join(bad)

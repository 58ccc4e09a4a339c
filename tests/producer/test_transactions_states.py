"""The producer's state machines (aiokafka_lite/producer/states.py): the lifecycle, the producer id/epoch
and the transaction. The door refuses every move its table does not list; the tables are the ones this
test and docs/producer.md spell out (so a transition added to the code's table alone fails here); and no
module of the producer changes a state except through its door (so a transition added beside the table
fails here too)."""

from __future__ import annotations

import ast
import enum
from pathlib import Path
from typing import Any

import pytest
from _state_tables import check_all

from aiokafka_lite.producer.states import (
    LIFECYCLE,
    PID,
    TXN,
    Lifecycle,
    PidState,
    TxnState,
)

ROOT = Path(__file__).resolve().parents[2]
PRODUCER = ROOT / "aiokafka_lite" / "producer"

L, P, T = Lifecycle, PidState, TxnState
#: The tables as they are meant to be: change one only together with the code's and docs/producer.md's.
EXPECTED: dict[str, tuple[dict[Any, frozenset[Any]], dict[Any, set[Any]], Any]] = {
    "lifecycle": (LIFECYCLE, {
        L.NEW: {L.STARTING, L.STOPPED},
        L.STARTING: {L.NEW, L.RUNNING, L.FAILED, L.STOPPED},
        L.RUNNING: {L.FAILED, L.CLOSING},
        L.FAILED: {L.CLOSING, L.STOPPED},
        L.CLOSING: {L.STOPPED},
        L.STOPPED: set(),
    }, L.NEW),
    "producer id": (PID, {
        P.NO_PID: {P.INITIALIZING},
        P.INITIALIZING: {P.READY, P.NO_PID},
        P.READY: {P.BUMP_NEEDED},
        P.BUMP_NEEDED: {P.BUMPING},
        P.BUMPING: {P.READY, P.BUMP_NEEDED},
    }, P.NO_PID),
    "transaction": (TXN, {
        T.UNINITIALIZED: {T.INITIALIZING, T.FATAL_ERROR},
        T.INITIALIZING: {T.READY, T.UNINITIALIZED, T.FATAL_ERROR},
        T.READY: {T.IN_TRANSACTION, T.FATAL_ERROR},
        T.IN_TRANSACTION: {T.COMMITTING, T.ABORTING, T.ABORTABLE_ERROR, T.FATAL_ERROR},
        T.COMMITTING: {T.READY, T.ABORTING, T.ABORTABLE_ERROR, T.FATAL_ERROR},
        T.ABORTING: {T.READY, T.FATAL_ERROR},
        T.ABORTABLE_ERROR: {T.ABORTING, T.FATAL_ERROR},
        T.FATAL_ERROR: set(),
    }, T.UNINITIALIZED),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_the_table_is_walked_and_drawn(name: str) -> None:
    """The documented table; its door allows exactly its moves; every state is reachable; docs draw it."""
    table, expected, initial = EXPECTED[name]
    check_all(table, expected, initial, ROOT / "docs" / "producer.md", name)


# -- one door ---------------------------------------------------------------------------------------------

#: Attributes that hold a state machine's state; only states.StateMachine assigns them (and the
#: Producer mirrors its lifecycle into SendCore._state for the send() fast path, in one method; a
#: batch's door is its own, tests/producer/test_batch_states.py).
_STATE_ATTRS = {"_state", "state", "bump_needed", "has_pid"}
_DOORS = {("producer.py", "_lifecycle_changed"), ("batch.py", "transition_to")}
_ENUMS = {cls.__name__: cls for cls in (Lifecycle, PidState, TxnState)}


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_state_changes_beside_the_door() -> None:
    bad = []
    for path in sorted(PRODUCER.glob("*.py")):
        if path.name == "states.py" or path.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text())
        for fn in _functions(tree):
            for node in ast.walk(fn):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                for t in targets:
                    if isinstance(t, ast.Attribute) and t.attr in _STATE_ATTRS \
                            and (path.name, fn.name) not in _DOORS and fn.name != "__init__":
                        bad.append(f"{path.name}:{node.lineno} {fn.name}() assigns .{t.attr}")
    assert not bad, "a state changed beside its door (states.StateMachine.transition_to):\n" + "\n".join(bad)


def test_every_transition_in_the_code_names_a_state_of_its_table() -> None:
    """Each ``transition_to(X)`` / ``_to(X)`` in the producer targets a state some row of X's table leads
    to: a new target state needs a table row first."""
    tables = {Lifecycle: LIFECYCLE, PidState: PID, TxnState: TXN}
    found = 0
    for path in sorted(PRODUCER.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("transition_to", "_to") and node.args):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) \
                    and arg.value.id in _ENUMS:
                state_type: type[enum.Enum] = _ENUMS[arg.value.id]
                target = state_type[arg.attr]
                assert any(target in to for to in tables[state_type].values()), \
                    f"{path.name}:{node.lineno}: no row of the table leads to {target}"
                found += 1
    assert found >= 15, found  # the walk saw the producer's transitions


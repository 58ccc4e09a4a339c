"""Checks every state-machine table test runs (the producer's, tests/producer/test_transactions_states.py;
the group members', tests/consumer/test_member_states.py): the table is the expected one, the door
(aiokafka_lite._state.StateMachine) allows exactly its moves, every state is reachable, the docs draw it."""

from __future__ import annotations

import ast
import enum
from collections import deque
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from aiokafka_lite._state import IllegalTransitionError, StateMachine

Table = Mapping[Any, frozenset[Any]]


def _states(table: Table) -> list[Any]:
    state_type: type[enum.Enum] = type(next(iter(table)))
    return list(state_type)


def check_all(table: Table, expected: Mapping[Any, set[Any]], initial: Any, doc: Path, name: str) -> None:
    """Every check below, for one table."""
    check_is(table, expected, name)
    walk_door(table, name)
    check_reachable(table, initial)
    check_drawn(table, doc, name)


def check_is(table: Table, expected: Mapping[Any, set[Any]], name: str) -> None:
    assert {s: set(to) for s, to in table.items()} == expected
    assert set(table) == set(_states(table)), f"{name}: every state has a row"


def walk_door(table: Table, name: str) -> None:
    """Walk every pair of states: the door moves along the table's edges and refuses every other with
    IllegalTransitionError, leaving the state as it was."""
    changes: list[tuple[Any, Any]] = []
    for old in table:
        for new in type(old):
            machine = StateMachine(name, table, old, lambda a, b: changes.append((a, b)))
            if new in table[old]:
                machine.transition_to(new)
                assert machine.state is new and changes[-1] == (old, new)
            else:
                with pytest.raises(IllegalTransitionError, match=f"{old.name} -> {new.name}"):
                    machine.transition_to(new)
                assert machine.state is old


def check_reachable(table: Table, initial: Any) -> None:
    seen, todo = {initial}, deque([initial])
    while todo:
        for nxt in table[todo.popleft()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    assert seen == set(table)


def check_drawn(table: Table, doc: Path, name: str) -> None:
    """``doc`` has the table's markdown rows, states in the enum's order."""
    text = doc.read_text()
    order = _states(table)
    for s in order:
        row = f"| {s.name} | {', '.join(t.name for t in order if t in table[s]) or '-'} |"
        assert row in text, f"{doc.name} lacks the {name} table row {row!r}"


def attribute_assignments(path: Path) -> Iterator[tuple[str, int, str]]:
    """``(function, line, attribute)`` for every ``x.attribute = / += / : T =`` inside a function of
    ``path``: what the one-door checks look for."""
    for fn in ast.walk(ast.parse(path.read_text())):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                if isinstance(t, ast.Attribute):
                    yield fn.name, node.lineno, t.attr

"""The group members' state machines (aiokafka_lite/_state.py's StateMachine): the classic member
(coordinator.CLASSIC), the KIP-848 member (member848.MEMBER848) and the share member
(share_member.SHARE_MEMBER). Each door refuses every move its
table does not list; each table is the one spelled out here and in docs/consumer.md (so a row added to the
code's table alone fails here); and no consumer module changes a member's state except through its door,
whose every target a row leads to (so a transition added beside the table fails here too)."""

from __future__ import annotations

import ast
import enum
from pathlib import Path
from typing import Any

import pytest
from _state_tables import check_all

from aiokafka_lite._state import IllegalTransitionError
from aiokafka_lite.consumer.coordinator import CLASSIC, ClassicState
from aiokafka_lite.consumer.member848 import MEMBER848, ConsumerGroupMember, MemberState
from aiokafka_lite.consumer.share_member import SHARE_MEMBER, ShareGroupMember, ShareMemberState

ROOT = Path(__file__).resolve().parents[2]
CONSUMER = ROOT / "aiokafka_lite" / "consumer"

C, M, S = ClassicState, MemberState, ShareMemberState
#: The tables as they are meant to be: change one only together with the code's and docs/consumer.md's.
EXPECTED: dict[str, tuple[dict[Any, frozenset[Any]], dict[Any, set[Any]], Any]] = {
    "classic member": (CLASSIC, {
        C.UNJOINED: {C.JOINING},
        C.JOINING: {C.STABLE, C.UNJOINED},
        C.STABLE: {C.JOINING, C.UNJOINED},
    }, C.UNJOINED),
    "KIP-848 member": (MEMBER848, {
        M.UNSUBSCRIBED: {M.JOINING, M.LEAVING, M.FENCED},
        M.JOINING: {M.STABLE, M.RECONCILING, M.FENCED, M.FATAL, M.LEAVING},
        M.STABLE: {M.RECONCILING, M.FENCED, M.FATAL, M.LEAVING},
        M.RECONCILING: {M.ACKNOWLEDGING, M.FENCED, M.FATAL, M.LEAVING},
        M.ACKNOWLEDGING: {M.STABLE, M.RECONCILING, M.FENCED, M.FATAL, M.LEAVING},
        M.FENCED: {M.JOINING, M.UNSUBSCRIBED, M.LEAVING},
        M.LEAVING: {M.JOINING, M.UNSUBSCRIBED, M.FENCED},
        M.FATAL: {M.LEAVING},
    }, M.UNSUBSCRIBED),
    "share member": (SHARE_MEMBER, {
        S.JOINING: {S.STABLE, S.FATAL, S.LEFT},
        S.STABLE: {S.JOINING, S.FATAL, S.LEFT},
        S.FATAL: {S.LEFT},
        S.LEFT: set(),
    }, S.JOINING),
}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_the_table_is_walked_and_drawn(name: str) -> None:
    """The documented table; its door allows exactly its moves; every state is reachable; docs draw it."""
    table, expected, initial = EXPECTED[name]
    check_all(table, expected, initial, ROOT / "docs" / "consumer.md", name)


def test_members_start_where_the_tables_start() -> None:
    assert ConsumerGroupMember("g", rebalance_timeout_ms=1000).state is EXPECTED["KIP-848 member"][2]
    assert ShareGroupMember("g").state is EXPECTED["share member"][2]


def test_a_member_refuses_a_move_its_table_lacks() -> None:
    """The member's own door is the table's: a FATAL KIP-848 member cannot be told it is STABLE."""
    m = ConsumerGroupMember("g", rebalance_timeout_ms=1000)
    with pytest.raises(IllegalTransitionError, match="UNSUBSCRIBED -> STABLE"):
        m._to(MemberState.STABLE)
    assert m.state is MemberState.UNSUBSCRIBED
    s = ShareGroupMember("g")
    s.leave_request()
    with pytest.raises(IllegalTransitionError, match="LEFT -> JOINING"):
        s._to(ShareMemberState.JOINING)


# -- one door ---------------------------------------------------------------------------------------------

#: Attributes that hold a member's state; only the member's __init__ makes its machine.
_STATE_ATTRS = {"_sm", "_state", "state", "joined", "leaving"}
_ENUMS: dict[str, type[enum.Enum]] = {"MemberState": MemberState, "ShareMemberState": ShareMemberState,
                                      "ClassicState": ClassicState}
_TABLES: dict[type[enum.Enum], dict[Any, frozenset[Any]]] = {MemberState: MEMBER848,
                                                             ShareMemberState: SHARE_MEMBER,
                                                             ClassicState: CLASSIC}


def test_no_state_changes_beside_the_door() -> None:
    bad = []
    for path in sorted(CONSUMER.glob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            if fn.name == "__init__":
                continue
            for node in ast.walk(fn):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                bad += [f"{path.name}:{node.lineno} {fn.name}() assigns .{t.attr}" for t in targets
                        if isinstance(t, ast.Attribute) and t.attr in _STATE_ATTRS]
    assert not bad, "a member's state changed beside its door (_to / transition_to):\n" + "\n".join(bad)


def test_every_transition_in_the_code_names_a_state_of_its_table() -> None:
    """Each ``_to(X)`` / ``transition_to(X)`` in the consumer targets a state some row of X's table leads
    to (a conditional target counts both arms): a new target state needs a table row first."""
    found = 0
    for path in sorted(CONSUMER.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("transition_to", "_to") and node.args):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Name) and arg.id == "new":
                continue  # the door itself, passing its argument on
            arms = [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else [arg]
            for a in arms:
                assert isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) \
                    and a.value.id in _ENUMS, f"{path.name}:{node.lineno}: a transition to a computed state"
                state_type = _ENUMS[a.value.id]
                target = state_type[a.attr]
                assert any(target in to for to in _TABLES[state_type].values()), \
                    f"{path.name}:{node.lineno}: no row of the table leads to {target}"
                found += 1
    assert found >= 20, found  # the walk saw the members' transitions

"""One state and one door: the state machine every stateful part of the client uses (the producer's
lifecycle, producer id and transaction; the classic, KIP-848 and share group members).

A machine holds one enum value and a table of allowed moves; :meth:`StateMachine.transition_to` is the only
way to change it and refuses every move the table does not list with :class:`IllegalTransitionError` (as
Java's ``TransactionManager.transitionTo`` does). Tests walk each table (tests/producer/
test_transactions_states.py, tests/consumer/test_member_states.py).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

from .errors import IllegalStateError

__all__ = ["IllegalTransitionError", "StateMachine", "Stateful", "table"]

S = TypeVar("S", bound=enum.Enum)


class IllegalTransitionError(IllegalStateError):
    """A state machine was asked for a move its table does not allow: a bug in the client, never a
    broker's doing (a test walks every table)."""


class StateMachine(Generic[S]):
    """One state and the only place that changes it."""

    __slots__ = ("_on_change", "_state", "name", "table")

    def __init__(self, name: str, table: Mapping[S, frozenset[S]], initial: S,
                 on_change: Callable[[S, S], None] | None = None) -> None:
        self.name = name
        self.table = table
        self._state = initial
        self._on_change = on_change

    @property
    def state(self) -> S:
        return self._state

    def allows(self, new: S) -> bool:
        return new in self.table[self._state]

    def transition_to(self, new: S) -> None:
        old = self._state
        if new not in self.table[old]:
            raise IllegalTransitionError(f"{self.name}: {old.name} -> {new.name} is not a transition")
        self._state = new
        if self._on_change is not None:
            self._on_change(old, new)

    def __repr__(self) -> str:
        return f"<{self.name} {self._state.name}>"


class Stateful(Generic[S]):
    """A part whose state is one :class:`StateMachine` (made in its ``__init__`` as ``_sm``): ``state`` to
    read it, :meth:`_to` the only door that changes it."""

    _sm: StateMachine[S]

    @property
    def state(self) -> S:
        return self._sm.state

    def _to(self, new: S) -> None:
        """Move to ``new`` along the table (staying where it is is not a move)."""
        if new is not self._sm.state:
            self._sm.transition_to(new)


def table(moves: Mapping[S, tuple[S, ...]]) -> dict[S, frozenset[S]]:
    """A transition table from ``state: (states it may move to, ...)``."""
    return {state: frozenset(to) for state, to in moves.items()}

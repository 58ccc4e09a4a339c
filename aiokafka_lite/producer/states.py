"""The producer's three state machines: its lifecycle, its producer id/epoch, and its transaction.

Each is one enum, one table of allowed transitions and one door, :meth:`StateMachine.transition_to`,
which refuses every move the table does not list with :class:`IllegalTransitionError` (as Java's
``TransactionManager.transitionTo`` does). A state that records a failure (``FAILED``, ``FATAL_ERROR``,
``ABORTABLE_ERROR``) lets every later call answer from it at once. docs/producer.md draws the tables.
The machine itself lives in :mod:`aiokafka_lite._state`, shared with the consumer's group members.
"""

from __future__ import annotations

import enum

from .._state import IllegalTransitionError, StateMachine
from .._state import table as _table

__all__ = ["LIFECYCLE", "PID", "TXN", "IllegalTransitionError", "Lifecycle", "PidState", "StateMachine",
           "TxnState"]


class Lifecycle(enum.Enum):
    """The producer object: ``send()`` takes records only while RUNNING."""

    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    FAILED = "failed"      # the Sender died or the transaction is fatal: every call raises the cause
    CLOSING = "closing"    # stop() is delivering what is queued
    STOPPED = "stopped"


LIFECYCLE: dict[Lifecycle, frozenset[Lifecycle]] = _table({
    Lifecycle.NEW: (Lifecycle.STARTING, Lifecycle.STOPPED),
    Lifecycle.STARTING: (Lifecycle.NEW, Lifecycle.RUNNING, Lifecycle.FAILED, Lifecycle.STOPPED),
    Lifecycle.RUNNING: (Lifecycle.FAILED, Lifecycle.CLOSING),
    Lifecycle.FAILED: (Lifecycle.CLOSING, Lifecycle.STOPPED),
    Lifecycle.CLOSING: (Lifecycle.STOPPED,),
    Lifecycle.STOPPED: (),
})


class PidState(enum.Enum):
    """The producer id and epoch (idempotence.py); INITIALIZING and BUMPING have InitProducerId out."""

    NO_PID = "no producer id"
    INITIALIZING = "initializing"
    READY = "ready"
    BUMP_NEEDED = "bump needed"   # a sequence gap (I5, I6): new batches wait for the bump (I7)
    BUMPING = "bumping"


PID: dict[PidState, frozenset[PidState]] = _table({
    PidState.NO_PID: (PidState.INITIALIZING,),
    PidState.INITIALIZING: (PidState.READY, PidState.NO_PID),
    PidState.READY: (PidState.BUMP_NEEDED,),
    PidState.BUMP_NEEDED: (PidState.BUMPING,),
    PidState.BUMPING: (PidState.READY, PidState.BUMP_NEEDED),
})


class TxnState(enum.Enum):
    """The transaction (transaction.py), as Java's ``TransactionManager.State``."""

    UNINITIALIZED = "uninitialized"
    INITIALIZING = "initializing"
    READY = "ready"
    IN_TRANSACTION = "in transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "abortable error"   # only abort_transaction() is allowed
    FATAL_ERROR = "fatal error"           # fenced or not authorized: every call raises the cause


_F = TxnState.FATAL_ERROR
TXN: dict[TxnState, frozenset[TxnState]] = _table({
    TxnState.UNINITIALIZED: (TxnState.INITIALIZING, _F),
    TxnState.INITIALIZING: (TxnState.READY, TxnState.UNINITIALIZED, _F),
    TxnState.READY: (TxnState.IN_TRANSACTION, _F),
    TxnState.IN_TRANSACTION: (TxnState.COMMITTING, TxnState.ABORTING, TxnState.ABORTABLE_ERROR, _F),
    TxnState.COMMITTING: (TxnState.READY, TxnState.ABORTING, TxnState.ABORTABLE_ERROR, _F),
    TxnState.ABORTING: (TxnState.READY, _F),
    TxnState.ABORTABLE_ERROR: (TxnState.ABORTING, _F),
    TxnState.FATAL_ERROR: (),
})

"""A connection's state machine (aiokafka_lite/net/connection.py): one enum, the table this test and
docs/architecture.md spell out, one door. The walk checks the door allows exactly the table's moves; a
real connection (to the scripted fake broker) moves along it and is refused the others; and no module of
``net`` changes a connection's state except through the door."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _net_fakes import FakeBroker, FakeConn
from _state_tables import attribute_assignments, check_all

from aiokafka_lite._state import IllegalTransitionError
from aiokafka_lite.config import Config
from aiokafka_lite.errors import KafkaConnectionError
from aiokafka_lite.net import BrokerConnection, ConnectionSettings
from aiokafka_lite.net.connection import CONNECTION, ConnState

ROOT = Path(__file__).resolve().parents[2]
NET = ROOT / "aiokafka_lite" / "net"
C = ConnState


def test_the_table_is_walked_and_drawn() -> None:
    check_all(CONNECTION, {
        C.NEW: {C.CONNECTING, C.CLOSED},
        C.CONNECTING: {C.READY, C.CLOSED},
        C.READY: {C.CLOSED},
        C.CLOSED: set(),
    }, C.NEW, ROOT / "docs" / "architecture.md", "connection")


async def test_a_connection_moves_along_the_table(make_config: Callable[..., Config]) -> None:
    async def silent(conn: FakeConn, header: Any, request: Any, frame: bytes) -> None:
        pass

    seen: list[ConnState] = []
    async with FakeBroker(silent) as fake:
        conn = BrokerConnection("127.0.0.1", fake.port, ConnectionSettings(make_config(fake.bootstrap)))
        door = conn._sm.transition_to
        conn._sm._on_change = lambda old, new: (seen.append(new), conn._state_changed(old, new))
        assert (conn.state, conn.ready, conn.closed) == (C.NEW, False, False)
        await conn.connect()
        assert (conn.state, conn.ready, conn.closed) == (C.READY, True, False)
        with pytest.raises(IllegalTransitionError, match="READY -> CONNECTING"):
            door(C.CONNECTING)
        with pytest.raises(KafkaConnectionError, match=r"already used \(ready\)"):
            await conn.connect()
        conn.close()
        conn.close()  # idempotent: no second move
        assert (conn.state, conn.ready, conn.closed) == (C.CLOSED, False, True)
        with pytest.raises(IllegalTransitionError, match="CLOSED -> READY"):
            door(C.READY)
    assert seen == [C.CONNECTING, C.READY, C.CLOSED]


async def test_a_failed_connect_ends_closed(make_config: Callable[..., Config]) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conn = BrokerConnection("127.0.0.1", port, ConnectionSettings(make_config(f"127.0.0.1:{port}")))
    with pytest.raises(KafkaConnectionError):
        await conn.connect()
    assert (conn.state, conn.closed, conn.established) == (C.CLOSED, True, False)


#: Attributes that hold the connection's state; only the door's callback assigns them.
_STATE_ATTRS = {"state", "_closed"}


def test_no_state_changes_beside_the_door() -> None:
    bad = [f"connection.py:{line} {fn}() assigns .{attr}"
           for fn, line, attr in attribute_assignments(NET / "connection.py")
           if attr in _STATE_ATTRS and fn not in ("__init__", "_state_changed")]
    for path in sorted(NET.glob("*.py")):  # nobody else assigns a connection's state
        if path.name != "connection.py":
            bad += [f"{path.name}:{line} {fn}() assigns .state"
                    for fn, line, attr in attribute_assignments(path) if attr == "state"]
    assert not bad, "a connection's state changed beside its door:\n" + "\n".join(bad)

"""Connections keyed by node id (a :class:`~.lanes.Lane` for a request class of its own, or an address
for bootstrap servers), with reconnect backoff.

At most one connection per key exists, and concurrent callers asking for a missing one share a
single connect attempt. A failed attempt, or a connection that broke, puts the key in reconnect
backoff: the next attempt waits ``reconnect_backoff_ms``, doubling per consecutive failure up to
``reconnect_backoff_max_ms``, with +-20 % jitter so that many clients do not reconnect in lockstep
(the Java client's rule). A connection that completes its handshake resets the count.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from .._tasks import cancel_and_wait
from ..errors import ClientClosedError, KafkaConnectionError, KafkaError
from ..structs import BrokerInfo
from .connection import BrokerConnection, ConnState
from .lanes import Lane
from .retry import ExponentialBackoff
from .settings import ConnectionSettings

__all__ = ["ConnectionPool", "ExponentialBackoff", "PoolKey", "key_node"]

log = logging.getLogger("aiokafka_lite.net")
_READY = ConnState.READY  # read per lookup: a module global, not an enum attribute

#: A node id (its plain connection), a node's :class:`Lane`, or ``(host, port)`` for a bootstrap server.
PoolKey = int | Lane | tuple[str, int]


def key_node(key: PoolKey) -> int | None:
    """The broker a key reaches (None: a bootstrap server)."""
    if isinstance(key, int):
        return key
    if isinstance(key, Lane):
        return key.node
    return None


class _KeyState:
    __slots__ = ("api_versions", "api_versions_max", "failures", "last_error", "next_attempt")

    def __init__(self) -> None:
        self.failures = 0
        self.next_attempt = 0.0
        self.last_error: BaseException | None = None
        self.api_versions_max = 3
        #: The broker's API ranges from the last handshake (kept across reconnects).
        self.api_versions: dict[int, tuple[int, int]] = {}


def describe_key(key: PoolKey) -> str:
    if isinstance(key, int):
        return f"node {key}"
    if isinstance(key, Lane):
        return f"node {key.node} ({key.name} connection)"
    return f"bootstrap server {key[0]}:{key[1]}"


class ConnectionPool:
    """``resolve(node_id)`` gives a node's address (None if unknown); ``on_broken(key, reason)`` is
    told when a connection fails or breaks (the client marks metadata stale)."""

    def __init__(
        self,
        settings: ConnectionSettings,
        backoff: ExponentialBackoff,
        resolve: Callable[[int], BrokerInfo | None],
        on_broken: Callable[[PoolKey, BaseException], None] | None = None,
    ) -> None:
        self.settings = settings
        self.backoff = backoff
        self._resolve = resolve
        self._on_broken = on_broken
        self._conns: dict[PoolKey, BrokerConnection] = {}
        self._connecting: dict[PoolKey, asyncio.Task[BrokerConnection]] = {}
        self._states: dict[PoolKey, _KeyState] = {}
        #: Each broker's API ranges from its latest handshake on any of its connections.
        self._node_versions: dict[int, dict[int, tuple[int, int]]] = {}
        self._closed = False
        self._close_error: ClientClosedError | None = None
        #: Handshaken connections opened and closed so far (connection-creation/close-total).
        self.created_total = 0
        self.closed_total = 0

    # -- queries ----------------------------------------------------------------------------------

    def get(self, key: PoolKey) -> BrokerConnection | None:
        """The ready connection for ``key``, or None (never connects)."""
        conn = self._conns.get(key)
        if conn is not None and conn.state is _READY:
            return conn
        return None

    def is_ready(self, key: PoolKey) -> bool:
        return self.get(key) is not None

    def connection_delay(self, key: PoolKey) -> float:
        """Seconds before a connect attempt to ``key`` is allowed (0: now, or already connected)."""
        state = self._states.get(key)
        if state is None or self.get(key) is not None:
            return 0.0
        return max(0.0, state.next_attempt - asyncio.get_running_loop().time())

    def in_flight(self, key: PoolKey) -> int:
        conn = self._conns.get(key)
        return conn.in_flight if conn is not None else 0

    def ready_keys(self) -> list[PoolKey]:
        return [k for k, c in self._conns.items() if c.state is _READY]

    def last_error(self, key: PoolKey) -> BaseException | None:
        state = self._states.get(key)
        return state.last_error if state is not None else None

    def api_versions(self, key: PoolKey) -> dict[int, tuple[int, int]] | None:
        """The broker's API ranges from the latest handshake with ``key``, or with any connection to the
        same broker (None: never connected)."""
        state = self._states.get(key)
        if state is not None and state.api_versions:
            return state.api_versions
        node = key_node(key)
        return self._node_versions.get(node) if node is not None else None

    # -- connecting -------------------------------------------------------------------------------

    async def connect(self, key: PoolKey, *, wait_backoff: bool = True) -> BrokerConnection:
        """The ready connection for ``key``, opening one if needed.

        A key in reconnect backoff is waited out (``wait_backoff=False`` raises
        :class:`NodeNotReadyError` instead). Raises KafkaConnectionError (and subclasses),
        AuthenticationFailedError or UnsupportedVersionError when the attempt fails.
        """
        conn = self._conns.get(key)
        if conn is not None and conn.state is _READY:
            return conn
        if self._closed:
            raise self._closed_error("the client is closed")
        task = self._connecting.get(key)
        if task is None:
            if not wait_backoff:
                delay = self.connection_delay(key)
                if delay > 0:
                    from ..errors import NodeNotReadyError

                    raise NodeNotReadyError(
                        f"{describe_key(key)} is in reconnect backoff for {delay * 1000:.0f} ms more"
                        + self._last_error_note(key)
                    )
            task = asyncio.ensure_future(self._open(key))
            task.add_done_callback(self._connect_done)
            self._connecting[key] = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if self._closed and task.cancelled():  # close() stopped the attempt, not our caller
                raise self._closed_error(
                    f"the client was closed while connecting to {describe_key(key)}"
                ) from None
            raise

    def _connect_done(self, task: asyncio.Task[BrokerConnection]) -> None:
        # The attempt's outcome reaches every caller through shield(); mark it retrieved so that
        # an attempt all callers stopped waiting for does not log "exception never retrieved".
        if not task.cancelled():
            task.exception()

    def _last_error_note(self, key: PoolKey) -> str:
        error = self.last_error(key)
        return f" (last error: {error})" if error is not None else ""

    async def _open(self, key: PoolKey) -> BrokerConnection:
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = _KeyState()
        loop = asyncio.get_running_loop()
        try:
            delay = state.next_attempt - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            node_id: int | None = None
            if isinstance(key, (int, Lane)):
                node_id = key_node(key)
                info = self._resolve(node_id) if node_id is not None else None
                if info is None:
                    raise KafkaConnectionError(f"node {node_id} is not in the cluster metadata")
                host, port = info.host, info.port
            else:
                host, port = key
            old = self._conns.pop(key, None)
            if old is not None:
                old.close()
            conn = BrokerConnection(
                host,
                port,
                self.settings,
                node_id=node_id,
                on_close=lambda c, reason: self._connection_closed(key, c, reason),
                api_versions_max=state.api_versions_max,
            )
            try:
                await conn.connect()
            except BaseException as exc:
                state.api_versions_max = conn.api_versions_max
                raise exc
            state.api_versions_max = conn.api_versions_max
            if self._closed:
                conn.close()
                raise KafkaConnectionError("the client is closed")
            state.failures = 0
            state.last_error = None
            state.api_versions = conn.api_versions
            if node_id is not None:
                self._node_versions[node_id] = conn.api_versions
            self._conns[key] = conn
            self.created_total += 1
            return conn
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._record_failure(key, state, exc)
            raise
        finally:
            self._connecting.pop(key, None)

    def _record_failure(self, key: PoolKey, state: _KeyState, exc: BaseException) -> None:
        state.failures += 1
        state.last_error = exc
        delay = self.backoff.delay(state.failures)
        state.next_attempt = asyncio.get_running_loop().time() + delay
        log.debug("%s failed (%s); next attempt in %.0f ms", describe_key(key), exc, delay * 1000)
        if self._on_broken is not None and isinstance(exc, KafkaError):
            self._on_broken(key, exc)

    def _connection_closed(self, key: PoolKey, conn: BrokerConnection, reason: BaseException | None) -> None:
        if conn.established:
            self.closed_total += 1
        if self._conns.get(key) is conn:
            del self._conns[key]
        if reason is not None and conn.established and not self._closed:
            # An established connection broke (failed handshakes are counted by _open).
            state = self._states.setdefault(key, _KeyState())
            self._record_failure(key, state, reason)

    # -- closing ----------------------------------------------------------------------------------

    def close_key(self, key: PoolKey, reason: BaseException | None = None) -> None:
        conn = self._conns.pop(key, None)
        if conn is not None:
            conn.close(reason)

    def close_node(self, node: int, reason: BaseException | None = None) -> None:
        """Close every connection to ``node`` (the broker left or moved)."""
        for key in [k for k in self._conns if key_node(k) == node]:
            self.close_key(key, reason)

    def _closed_error(self, what: str) -> KafkaError:
        if self._close_error is None:
            return KafkaConnectionError(what)
        return type(self._close_error)(what)

    async def close(self, error: ClientClosedError | None = None) -> None:
        """Close every connection; connect attempts in progress are cancelled. Requests in flight, and
        connects after this, fail with ``error`` (the client's "stopped" error) when given."""
        self._closed = True
        self._close_error = error
        await cancel_and_wait(*self._connecting.values(), quiet=True)
        conns, self._conns = self._conns, {}
        for conn in conns.values():
            conn.close(error)

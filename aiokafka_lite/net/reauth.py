"""SASL re-authentication on a live connection (KIP-368).

A broker with ``connections.max.reauth.ms`` set (or, for OAUTHBEARER, always: the session ends with
the token) returns ``session_lifetime_ms`` in SaslAuthenticate v1+, and closes the connection when it
receives any request other than SaslHandshake after that time (Kafka's ``SocketServer`` checks
``serverAuthenticationSessionExpired`` per request; a SaslHandshake still starts re-authentication).
So before the session ends the client authenticates again on the same connection: SaslHandshake and
SaslAuthenticate, sent as ordinary requests. As Java's ``SaslClientAuthenticator`` does, it starts at
a random point between 85 % and 95 % of the lifetime, so that many connections do not re-authenticate at
once; counted from when the last SaslAuthenticate was written (Java counts from its answer, which a
loaded machine may read late: by then the broker's session has already run that long).

Requests must not be interleaved with the exchange: the broker reads the frames after a
SaslHandshake as SASL tokens. Java's client stops sending on the channel and keeps the responses
to earlier requests that arrive meanwhile. Here the connection's gate is closed (new ``send()`` calls
wait at it, in order), the requests already written are left to complete (responses stay in
correlation order, nothing fails), then the exchange runs and the gate opens. A failed
re-authentication closes the connection with the broker's reason, so the requests that waited fail
with it and the next connection authenticates afresh.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from typing import TYPE_CHECKING

from ..errors import AuthenticationFailedError, KafkaConnectionError, KafkaError, KafkaTimeoutError
from ._timeout import run_with_timeout

if TYPE_CHECKING:
    from .connection import BrokerConnection

__all__ = ["REAUTH_WINDOW", "Reauthenticator"]

log = logging.getLogger("aiokafka_lite.net")

#: The share of the session lifetime after which re-authentication starts: uniform in this range.
REAUTH_WINDOW = (0.85, 0.95)
_DRAIN_POLL = 0.002


class Reauthenticator:
    """Re-authenticates ``conn`` before each session it got ends; ``count`` says how often it did."""

    def __init__(self, conn: BrokerConnection) -> None:
        self.conn = conn
        self.count = 0
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._lifetime = 0.0
        #: Loop time at which re-authentication is due (inf: none is). send() checks it, because a loop
        #: that ran late wakes its I/O callbacks before its timers: a request could go out first.
        self.due = math.inf

    def schedule(self, session_lifetime_ms: int, since: float) -> None:
        """Arm re-authentication for a session of ``session_lifetime_ms`` (0: the session never ends)
        that began no earlier than loop time ``since`` (when the request that opened it was written).

        Counting from ``since`` rather than from now keeps the window inside the broker's session when
        the answer was read late: the broker counts from when it authenticated, before it answered."""
        if session_lifetime_ms <= 0 or self.conn.closed:
            return
        self._lifetime = session_lifetime_ms / 1000
        share = random.uniform(*REAUTH_WINDOW)
        loop = asyncio.get_running_loop()
        self.due = since + session_lifetime_ms / 1000 * share
        self._timer = loop.call_at(self.due, self.start)

    def cancel(self) -> None:
        """Called when the connection closes. A running re-authentication is not cancelled: it ends
        by itself once its requests fail with the close, and first records why the broker refused."""
        self.due = math.inf
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def start(self) -> None:
        """Begin now (the timer, or send() finding it due): the gate closes at once, so no request
        goes out between this call and the exchange."""
        self.cancel()
        if not self.conn.closed:
            gate = self.conn.close_gate()
            self._task = asyncio.get_running_loop().create_task(self._run(gate))

    async def _run(self, gate: asyncio.Future[None]) -> None:
        from .handshake import authenticate  # handshake imports connection, which imports this

        conn = self.conn
        try:
            while conn.in_flight or conn.busy_slots:  # let the requests already sent complete
                if conn.closed:
                    return
                await asyncio.sleep(_DRAIN_POLL)
            if conn.closed:
                return
            timeout = conn.settings.connect_timeout
            try:
                # For OAUTHBEARER, a token good for another whole session: when the token bounds the
                # session (the broker ends it at the token's expiry), that means the next token.
                session = authenticate(conn, reauth=True, token_life=self._lifetime)
                lifetime, since = await run_with_timeout(session, timeout)
            except asyncio.TimeoutError:
                raise KafkaTimeoutError(
                    f"re-authentication with {conn} took longer than {round(timeout * 1000)} ms "
                    "(socket_connection_setup_timeout_ms)"
                ) from None
            self.count += 1
            log.debug("re-authenticated with %s; next session lasts %d ms", conn, lifetime)
        except asyncio.CancelledError:
            raise
        except AuthenticationFailedError as exc:  # the broker refused: fatal, like a refused login
            log.warning("%s", exc)
            if conn.closed:  # it hung up right after its answer: waiting requests should say why
                conn.close_reason = exc
            conn.close(exc)
            return
        except Exception as exc:  # timeout, broken connection: the next connection starts afresh
            detail = exc.args[0] if isinstance(exc, KafkaError) and exc.args else repr(exc)
            conn.close(KafkaConnectionError(f"re-authentication with {conn} failed: {detail}"))
            return
        finally:
            conn.open_gate(gate)
        self.schedule(lifetime, since)

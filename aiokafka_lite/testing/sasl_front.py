"""A test-only SASL front for a broker that has no working SASL of its own (Tansu, see brokers.md).

:class:`SaslFront` is an asyncio server that plays the broker's part of KIP-152 and then gets out of
the way: it forwards ApiVersions to the broker, answers SaslHandshake, runs SaslAuthenticate rounds
for PLAIN, SCRAM-SHA-256/512 with an *independent* SCRAM server (PyPI ``scramp``, not our client
code) and OAUTHBEARER with JWTs checked by ``joserfc`` against an authorization server's JWKS; once
the client is authenticated it relays frames both ways, handling re-authentication (KIP-368) and
closing connections whose session ended. Wrong credentials
get SASL_AUTHENTICATION_FAILED (58) with Kafka's message, then the connection is closed; any other
request before authentication closes the connection, as a Kafka broker does.

:class:`SaslBroker` runs a front in the current event loop before a Tansu process that advertises
the front's address (or a TLS terminator's, for SASL_SSL), so reconnects go through the front too.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from scramp import ScramException, ScramMechanism

from .._lifecycle import Lifecycle
from ..embedded import free_port
from ..errors import ProtocolError
from ..protocol import decode_request, encode_response
from ..protocol.messages.sasl_authenticate import SaslAuthenticateResponse
from ..protocol.messages.sasl_handshake import SaslHandshakeResponse
from ._jwt_validator import JwtValidator, TokenRefused, parse_client_first
from .tls import TansuProcess, TlsBroker

__all__ = ["SaslBroker", "SaslFront"]

LOOPBACK = "127.0.0.1"
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
_API_VERSIONS, _SASL_HANDSHAKE, _SASL_AUTHENTICATE = 18, 17, 36
_UNSUPPORTED_SASL_MECHANISM, _ILLEGAL_SASL_STATE, _SASL_AUTHENTICATION_FAILED = 33, 34, 58
_MAX_FRAME = 1 << 20  # nothing before authentication is anywhere near this
_MAX_RELAYED = 200 << 20  # requests and answers once authenticated
_MIN_REAUTH_INTERVAL = 1.0  # Kafka's KafkaChannel refuses re-authentication more often than this


async def _read_frame(reader: asyncio.StreamReader, limit: int = _MAX_FRAME) -> bytes:
    (size,) = struct.unpack(">i", await reader.readexactly(4))
    if not 0 < size <= limit:
        raise ProtocolError(f"frame of {size} bytes (limit {limit})")
    return await reader.readexactly(size)


class _AuthFailed(Exception):
    pass


class _Session:
    """What the front knows of one client connection's SASL session."""

    def __init__(self) -> None:
        self.mechanism: str | None = None
        self.principal: str | None = None
        self.expires: float | None = None  # loop time at which the session ends (None: never)
        self.last_auth = 0.0
        self.opened = asyncio.get_running_loop().time()
        self.closed: float | None = None
        self.reauths = 0


class _Link(NamedTuple):
    """One client's connection, its connection upstream, and its session: what relaying it needs."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    up_reader: asyncio.StreamReader
    up_writer: asyncio.StreamWriter
    session: _Session


class SaslFront:
    """SASL in front of ``upstream``; ``users`` maps user names to passwords.

    ``port`` None picks a free one at :meth:`start`. ``upstream`` may be set after start (the
    broker must be told the front's port before it starts). ``authenticated`` counts successful
    logins, ``reauthenticated`` successful re-authentications (KIP-368), ``failures`` refused ones,
    and ``expired`` the connections closed because a request came after their session ended.

    ``session_lifetime_ms`` > 0 plays a broker's ``connections.max.reauth.ms``: SaslAuthenticate
    v1+ answers carry it (for OAUTHBEARER, no later than the token's expiry, as Kafka does), and a
    request other than SaslHandshake after the session ended closes the connection, as Kafka's
    ``SocketServer`` does. ``oauth`` (a :class:`JwtValidator`) enables OAUTHBEARER.
    """

    def __init__(
        self,
        users: Mapping[str, str],
        *,
        upstream: tuple[str, int] | None = None,
        mechanisms: Iterable[str] = MECHANISMS,
        port: int | None = None,
        session_lifetime_ms: int = 0,
        oauth: JwtValidator | None = None,
        mechanism_servers: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        self.users = dict(users)
        #: More mechanisms: name -> a factory of servers with ``step(bytes) -> (answer, done)`` that
        #: raise ValueError (its message goes to the client) to refuse (e.g. kdc.GssapiServer).
        self.mechanism_servers = dict(mechanism_servers or {})
        self.mechanisms = tuple(mechanisms) + tuple(self.mechanism_servers)
        self.upstream = upstream
        self.host = LOOPBACK
        self.port = port or 0
        self.session_lifetime_ms = session_lifetime_ms
        #: Seconds the answer that grants a session waits before it goes out (a loaded broker or link).
        self.answer_delay = 0.0
        self.oauth = oauth
        self.authenticated = 0
        self.reauthenticated = 0
        self.failures = 0
        self.expired = 0
        self.principals: list[str] = []
        #: Every connection's session, for per-connection counts (``opened``/``closed``/``reauths``).
        self.sessions: list[_Session] = []
        #: Why each refused OAUTHBEARER token was refused.
        self.refusals: list[str] = []
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._auth_info: dict[str, dict[str, Any]] = {}
        for mech in self.mechanisms:
            if mech.startswith("SCRAM-"):
                scram = ScramMechanism(mech)
                self._auth_info[mech] = {
                    u: scram.make_auth_info(p, iteration_count=4096) for u, p in users.items()
                }

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_client, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening, end every relayed connection, then wait for the server: since CPython
        3.12.1 ``wait_closed()`` waits for every open connection, so the tasks holding them go first."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        up_writer: asyncio.StreamWriter | None = None
        session: _Session | None = None
        try:
            if self.upstream is None:
                return
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            session = _Session()
            self.sessions.append(session)
            link = _Link(reader, writer, up_reader, up_writer, session)
            if await self._initial(link):
                await self._relay(link)
        except (OSError, asyncio.IncompleteReadError, ProtocolError, _AuthFailed):
            pass
        finally:
            if session is not None:
                session.closed = asyncio.get_running_loop().time()
            self._tasks.discard(task)
            for w in (writer, up_writer):
                if w is not None:
                    w.close()

    async def _initial(self, link: _Link) -> bool:
        """ApiVersions (forwarded) until a SaslHandshake, then the exchange; True once authenticated."""
        reader, writer, up_reader, up_writer, session = link
        while True:
            frame = await _read_frame(reader)
            header, request = decode_request(frame)
            h: Any = header
            if h.request_api_key == _API_VERSIONS:
                up_writer.write(struct.pack(">i", len(frame)) + frame)
                writer.write(struct.pack(">i", len(answer := await _read_frame(up_reader))) + answer)
                await writer.drain()
            elif h.request_api_key == _SASL_HANDSHAKE:
                return await self._exchange(reader, writer, h, request, session)
            else:
                return False  # ILLEGAL_SASL_STATE: a broker disconnects here

    async def _relay(self, link: _Link) -> None:
        """Forward requests frame by frame, watching for re-authentication and session expiry.

        A SaslHandshake on the authenticated connection starts re-authentication once every
        request forwarded before it has been answered (a broker handles one request of a connection
        at a time, so its answers come before the handshake's); the exchange then reads the
        following frames itself. Every forwarded request is counted as owed an answer: true of
        Tansu, which answers even acks=0 Produce requests (a Kafka broker does not; this front is
        not meant for one).
        """
        reader, writer, up_reader, up_writer, session = link
        loop = asyncio.get_running_loop()
        pending = 0
        drained = asyncio.Event()
        drained.set()

        async def answers() -> None:
            nonlocal pending
            while True:
                frame = await _read_frame(up_reader, _MAX_RELAYED)
                writer.write(struct.pack(">i", len(frame)) + frame)
                await writer.drain()
                pending -= 1
                if pending <= 0:
                    drained.set()

        pump = loop.create_task(answers())
        pump.add_done_callback(lambda _t: writer.close())
        try:
            while True:
                frame = await _read_frame(reader, _MAX_RELAYED)
                (api_key,) = struct.unpack_from(">h", frame, 0)
                if api_key == _SASL_HANDSHAKE:
                    await drained.wait()
                    if session.expires is None or loop.time() - session.last_auth < _MIN_REAUTH_INTERVAL:
                        return  # Kafka: re-authentication is off, or too soon; the handshake fails
                    header, request = decode_request(frame)
                    if not await self._exchange(reader, writer, header, request, session):
                        return
                    continue
                if session.expires is not None and loop.time() >= session.expires:
                    self.expired += 1
                    return
                pending += 1
                drained.clear()
                up_writer.write(struct.pack(">i", len(frame)) + frame)
                await up_writer.drain()
        finally:
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)

    async def _exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, h: Any, request: Any,
        session: _Session,
    ) -> bool:
        """Answer a SaslHandshake and run the SaslAuthenticate rounds after it."""
        reauth = session.mechanism is not None
        mechanism = request.mechanism
        ok = mechanism in self.mechanisms and (not reauth or mechanism == session.mechanism)
        handshake = SaslHandshakeResponse(
            error_code=0 if ok else _UNSUPPORTED_SASL_MECHANISM, mechanisms=list(self.mechanisms)
        )
        writer.write(encode_response(handshake, h.request_api_version, h.correlation_id))
        await writer.drain()
        if not ok:
            return False
        state: dict[str, Any] = {"mechanism": mechanism, "round": 0}
        if mechanism in self.mechanism_servers:
            state["server"] = self.mechanism_servers[mechanism]()
        elif mechanism.startswith("SCRAM-"):
            state["scram"] = ScramMechanism(mechanism).make_server(self._auth_info[mechanism].__getitem__)
        while True:
            header, auth_request = decode_request(await _read_frame(reader))
            ah: Any = header
            ar: Any = auth_request
            if ah.request_api_key != _SASL_AUTHENTICATE:
                return False
            version, corr = ah.request_api_version, ah.correlation_id
            try:
                out, done = self._step(state, bytes(ar.auth_bytes or b""))
                if done and reauth and state["principal"] != session.principal:
                    raise _AuthFailed("Cannot change principals during re-authentication")
            except _AuthFailed as exc:
                self.failures += 1
                reply = SaslAuthenticateResponse(
                    error_code=_SASL_AUTHENTICATION_FAILED, error_message=str(exc)
                )
                writer.write(encode_response(reply, version, corr))
                await writer.drain()
                return False
            lifetime = self._lifetime_ms(state.get("expires")) if done else 0
            # As Kafka, the session starts when it is granted, before the answer goes out.
            now = asyncio.get_running_loop().time()
            answer = SaslAuthenticateResponse(auth_bytes=out, session_lifetime_ms=lifetime)
            if done and self.answer_delay:
                await asyncio.sleep(self.answer_delay)
            writer.write(encode_response(answer, version, corr))
            await writer.drain()
            if done:
                session.mechanism, session.principal, session.last_auth = mechanism, state["principal"], now
                session.expires = now + lifetime / 1000 if lifetime > 0 else None
                if reauth:
                    self.reauthenticated += 1
                    session.reauths += 1
                else:
                    self.authenticated += 1
                self.principals.append(state["principal"])
                return True
            state["round"] += 1

    def _lifetime_ms(self, credential_expires: float | None) -> int:
        """Kafka's SaslServerAuthenticator: min(credential expiry - now, connections.max.reauth.ms)."""
        if credential_expires is None:
            return self.session_lifetime_ms
        left = max(0, int((credential_expires - time.time()) * 1000))
        return min(left, self.session_lifetime_ms) if self.session_lifetime_ms > 0 else left

    def _step(self, state: dict[str, Any], message: bytes) -> tuple[bytes, bool]:
        mechanism = state["mechanism"]
        failed = (
            "Authentication failed during authentication due to invalid credentials "
            f"with SASL mechanism {mechanism}"
        )
        if mechanism == "OAUTHBEARER":
            return self._oauth_step(state, message)
        if mechanism in self.mechanism_servers:
            server = state["server"]
            try:
                out, done = server.step(message)
            except ValueError as exc:
                raise _AuthFailed(str(exc)) from None
            if done:
                state["principal"] = getattr(server, "principal", None) or mechanism
            return bytes(out), bool(done)
        if mechanism == "PLAIN":
            parts = message.split(b"\x00")
            if len(parts) != 3:
                raise _AuthFailed("malformed PLAIN message")
            user, password = parts[1].decode(errors="replace"), parts[2].decode(errors="replace")
            if self.users.get(user) != password:
                raise _AuthFailed(failed)
            state["principal"] = user
            return b"", True
        scram_server = state["scram"]
        try:
            if state["round"] == 0:
                text = message.decode()
                scram_server.set_client_first(text)
                state["principal"] = text.split("n=", 1)[1].split(",", 1)[0]
                return scram_server.get_server_first().encode(), False
            scram_server.set_client_final(message.decode())
            return scram_server.get_server_final().encode(), True
        except (ScramException, KeyError, UnicodeDecodeError, IndexError):
            raise _AuthFailed(failed) from None

    def _oauth_step(self, state: dict[str, Any], message: bytes) -> tuple[bytes, bool]:
        """RFC 7628: a refused token gets a JSON status; the client's \\x01 then ends the exchange."""
        if "error" in state:
            if message == b"\x01":
                raise _AuthFailed(state["error"])
            raise _AuthFailed("Invalid OAUTHBEARER message after an error")
        if self.oauth is None:
            raise _AuthFailed("OAUTHBEARER is not configured")
        try:
            token, _extensions = parse_client_first(message)
            state["principal"], state["expires"] = self.oauth.validate(token)
        except TokenRefused as exc:
            self.refusals.append(str(exc.args[0]))
            state["error"] = '{"status":"invalid_token"}'
            return state["error"].encode(), False
        return b"", True


class SaslBroker(Lifecycle):
    """Tansu behind a :class:`SaslFront` (``tls=True``: behind a TLS terminator too, for SASL_SSL).

    The front runs on an event loop of its own in a daemon thread, so the broker can outlive any
    one test's loop; use it as a context manager (sync or async) or call ``start()`` / ``stop()``.
    ``bootstrap`` is the address clients use; with TLS, ``client_context()`` trusts its certificate.
    """

    def __init__(
        self,
        users: Mapping[str, str],
        *,
        tls: bool = False,
        mechanisms: Iterable[str] = MECHANISMS,
        session_lifetime_ms: int = 0,
        oauth: JwtValidator | None = None,
        mechanism_servers: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        self.front = SaslFront(users, mechanisms=mechanisms, port=free_port(),
                               session_lifetime_ms=session_lifetime_ms, oauth=oauth,
                               mechanism_servers=mechanism_servers)
        self.tls: TlsBroker | None = None
        if tls:
            self.tls = TlsBroker(upstream=(self.front.host, self.front.port))
            advertised = (self.tls.host, self.tls.port)
        else:
            advertised = (self.front.host, self.front.port)
        self.tansu = TansuProcess(advertised)
        self.front.upstream = (self.tansu.host, self.tansu.port)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def bootstrap(self) -> str:
        return self.tls.bootstrap if self.tls is not None else self.front.bootstrap

    def client_context(self) -> ssl.SSLContext:
        if self.tls is None:
            raise ValueError("this SaslBroker has no TLS")
        return self.tls.client_context()

    def start(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, name="sasl-front", daemon=True)
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self.front.start(), loop).result(10)
            self.tansu.start()
            if self.tls is not None:
                self.tls.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is not None and thread is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.front.stop(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()
        if self.tls is not None:
            self.tls.stop()
        self.tansu.stop()

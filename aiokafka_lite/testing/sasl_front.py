"""A test-only SASL front for a broker that has no working SASL of its own (Tansu, see brokers.md).

:class:`SaslFront` is an asyncio server that plays the broker's part of KIP-152 and then gets out of
the way: it forwards ApiVersions to the broker, answers SaslHandshake, runs SaslAuthenticate rounds
for PLAIN or SCRAM-SHA-256/512 with an *independent* SCRAM server (PyPI ``scramp``, not our client
code), and once the client is authenticated pipes every further byte both ways. Wrong credentials
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
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

from scramp import ScramException, ScramMechanism

from ..embedded import free_port
from ..errors import ProtocolError
from ..protocol import decode_request, encode_response
from ..protocol.messages.sasl_authenticate import SaslAuthenticateResponse
from ..protocol.messages.sasl_handshake import SaslHandshakeResponse
from .tls import TansuProcess, TlsBroker

__all__ = ["SaslBroker", "SaslFront"]

LOOPBACK = "127.0.0.1"
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_API_VERSIONS, _SASL_HANDSHAKE, _SASL_AUTHENTICATE = 18, 17, 36
_UNSUPPORTED_SASL_MECHANISM, _ILLEGAL_SASL_STATE, _SASL_AUTHENTICATION_FAILED = 33, 34, 58
_MAX_FRAME = 1 << 20  # nothing before authentication is anywhere near this


async def _read_frame(reader: asyncio.StreamReader) -> bytes:
    (size,) = struct.unpack(">i", await reader.readexactly(4))
    if not 0 < size <= _MAX_FRAME:
        raise ProtocolError(f"request frame of {size} bytes before authentication")
    return await reader.readexactly(size)


class _AuthFailed(Exception):
    pass


class SaslFront:
    """SASL in front of ``upstream``; ``users`` maps user names to passwords.

    ``port`` None picks a free one at :meth:`start`. ``upstream`` may be set after start (the
    broker must be told the front's port before it starts). ``authenticated`` counts successful
    logins and ``failures`` refused ones.
    """

    def __init__(
        self,
        users: Mapping[str, str],
        *,
        upstream: tuple[str, int] | None = None,
        mechanisms: Iterable[str] = MECHANISMS,
        port: int | None = None,
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
        self.authenticated = 0
        self.failures = 0
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
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        up_writer: asyncio.StreamWriter | None = None
        try:
            if self.upstream is None:
                return
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            if await self._authenticate(reader, writer, up_reader, up_writer):
                await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError, ProtocolError, _AuthFailed):
            pass
        finally:
            self._tasks.discard(task)
            for w in (writer, up_writer):
                if w is not None:
                    w.close()

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            with contextlib.suppress(Exception):
                writer.write_eof()

    async def _authenticate(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
    ) -> bool:
        mechanism: str | None = None
        scram_server: Any = None
        plain_done = False
        while True:
            frame = await _read_frame(reader)
            header, request_msg = decode_request(frame)
            request: Any = request_msg
            h: Any = header
            api_key, version, corr = h.request_api_key, h.request_api_version, h.correlation_id
            if api_key == _API_VERSIONS:
                up_writer.write(struct.pack(">i", len(frame)) + frame)
                writer.write(struct.pack(">i", len(answer := await _read_frame(up_reader))) + answer)
            elif api_key == _SASL_HANDSHAKE and mechanism is None:
                ok = request.mechanism in self.mechanisms
                code = 0 if ok else _UNSUPPORTED_SASL_MECHANISM
                handshake = SaslHandshakeResponse(error_code=code, mechanisms=list(self.mechanisms))
                writer.write(encode_response(handshake, version, corr))
                if not ok:
                    await writer.drain()
                    return False
                mechanism = request.mechanism
                if mechanism in self.mechanism_servers:
                    scram_server = self.mechanism_servers[mechanism]()
                elif mechanism.startswith("SCRAM-"):
                    scram_server = ScramMechanism(mechanism).make_server(
                        self._auth_info[mechanism].__getitem__
                    )
            elif api_key == _SASL_AUTHENTICATE and mechanism is not None:
                try:
                    out, done = self._step(
                        mechanism, scram_server, bytes(request.auth_bytes or b""), plain_done
                    )
                except _AuthFailed as exc:
                    self.failures += 1
                    reply = SaslAuthenticateResponse(
                        error_code=_SASL_AUTHENTICATION_FAILED, error_message=str(exc)
                    )
                    writer.write(encode_response(reply, version, corr))
                    await writer.drain()
                    return False
                writer.write(encode_response(SaslAuthenticateResponse(auth_bytes=out), version, corr))
                if done:
                    self.authenticated += 1
                    await writer.drain()
                    return True
                plain_done = True
            else:
                return False  # ILLEGAL_SASL_STATE: a broker disconnects here
            await writer.drain()

    def _step(self, mechanism: str, scram_server: Any, message: bytes, second: bool) -> tuple[bytes, bool]:
        failed = (
            "Authentication failed during authentication due to invalid credentials "
            f"with SASL mechanism {mechanism}"
        )
        if mechanism in self.mechanism_servers:
            try:
                out, done = scram_server.step(message)
            except ValueError as exc:
                raise _AuthFailed(str(exc)) from None
            return bytes(out), bool(done)
        if mechanism == "PLAIN":
            parts = message.split(b"\x00")
            if len(parts) != 3:
                raise _AuthFailed("malformed PLAIN message")
            user, password = parts[1].decode(errors="replace"), parts[2].decode(errors="replace")
            if self.users.get(user) != password:
                raise _AuthFailed(failed)
            return b"", True
        try:
            if not second:
                scram_server.set_client_first(message.decode())
                return scram_server.get_server_first().encode(), False
            scram_server.set_client_final(message.decode())
            return scram_server.get_server_final().encode(), True
        except (ScramException, KeyError, UnicodeDecodeError):
            raise _AuthFailed(failed) from None


class SaslBroker:
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
        mechanism_servers: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        self.front = SaslFront(
            users, mechanisms=mechanisms, port=free_port(), mechanism_servers=mechanism_servers
        )
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

    def __enter__(self) -> SaslBroker:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> SaslBroker:
        await asyncio.to_thread(self.start)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

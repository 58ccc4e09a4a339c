"""Tiny asyncio servers that speak just enough Kafka to misbehave on purpose (bad-input tests).

A :class:`FakeBroker` answers ApiVersions like a broker (so a connection's handshake completes),
answers Metadata by listing the brokers it was told to advertise, and hands every other request, or
every request when ``on_request`` wants them all, to the test's ``on_request`` coroutine.
"""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiokafka_lite.protocol import decode_request, encode_response
from aiokafka_lite.protocol.messages.api_versions import ApiVersion, ApiVersionsResponse
from aiokafka_lite.protocol.messages.metadata import MetadataResponse, MetadataResponseBroker

#: SASL users of the test brokers (one password with the characters SCRAM must escape).
USERS = {"alice": "alice-secret", "bob": "p=w,rd"}

DEFAULT_VERSIONS = {18: (0, 3), 3: (0, 12), 0: (0, 9), 10: (0, 4), 17: (0, 1), 36: (0, 2)}

Handler = Callable[["FakeConn", Any, Any, bytes], Awaitable[None]]


class FakeConn:
    """One accepted connection: the request header/body of the frame being handled, and ways to answer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def reply(self, header: Any, response: Any, version: int | None = None) -> None:
        v = header.request_api_version if version is None else version
        self.writer.write(encode_response(response, v, header.correlation_id))
        await self.writer.drain()

    async def raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def read_frame(self) -> bytes:
        (size,) = struct.unpack(">i", await self.reader.readexactly(4))
        return await self.reader.readexactly(size)

    def abort(self) -> None:
        transport = self.writer.transport
        assert isinstance(transport, asyncio.Transport)
        transport.abort()


class FakeBroker:
    """``async with FakeBroker(on_request) as fake:`` listens on ``fake.port``.

    ``refuse``: close every new connection at once (a broker that is down but the port open).
    ``api_versions_reply``: replaces the ApiVersions answer (``(conn, header) -> None`` coroutine).
    ``advertise``: brokers listed in Metadata answers (default: this one as node 1).
    """

    def __init__(
        self,
        on_request: Handler | None = None,
        *,
        versions: dict[int, tuple[int, int]] | None = None,
        api_versions_reply: Callable[[FakeConn, Any], Awaitable[None]] | None = None,
        throttle_ms: int = 0,
    ) -> None:
        self.on_request = on_request
        self.versions = versions or DEFAULT_VERSIONS
        self.api_versions_reply = api_versions_reply
        self.throttle_ms = throttle_ms
        self.refuse = False
        self.port = 0
        self.advertise: list[tuple[int, str, int]] | None = None
        self.accepted: list[float] = []  # time.monotonic() of every accepted connection
        self.requests: list[tuple[int, int, int]] = []  # (api_key, version, correlation id)
        self._server: asyncio.AbstractServer | None = None
        self._conns: list[FakeConn] = []

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def __aenter__(self) -> FakeBroker:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for conn in self._conns:
            conn.writer.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted.append(time.monotonic())
        conn = FakeConn(reader, writer)
        if self.refuse:
            conn.abort()
            return
        self._conns.append(conn)
        try:
            while True:
                frame = await conn.read_frame()
                decoded = decode_request(frame)
                header: Any = decoded[0]
                request: Any = decoded[1]
                self.requests.append(
                    (header.request_api_key, header.request_api_version, header.correlation_id)
                )
                if header.request_api_key == 18:
                    if self.api_versions_reply is not None:
                        await self.api_versions_reply(conn, header)
                    else:
                        await conn.reply(header, self.api_versions_response())
                elif header.request_api_key == 3 and self.on_request is None:
                    await conn.reply(header, self.metadata_response())
                elif self.on_request is not None:
                    await self.on_request(conn, header, request, frame)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def api_versions_response(self) -> ApiVersionsResponse:
        keys = [
            ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in self.versions.items()
        ]
        return ApiVersionsResponse(error_code=0, api_keys=keys)

    def metadata_response(self) -> MetadataResponse:
        brokers = self.advertise or [(1, "127.0.0.1", self.port)]
        return MetadataResponse(
            throttle_time_ms=self.throttle_ms,
            brokers=[MetadataResponseBroker(node_id=n, host=h, port=p) for n, h, p in brokers],
            cluster_id="fake",
            controller_id=brokers[0][0],
            topics=[],
        )

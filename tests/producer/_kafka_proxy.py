"""A fault-injecting TCP proxy in front of one real broker (a test tool, not a mock: the broker still
does all the work).

Metadata and FindCoordinator answers are rewritten so clients keep talking through the proxy. Requests
whose API key is in ``capture`` are decoded and kept in ``captured`` (what the client really sent).
Produce requests can be
given faults, in order of arrival:

* ``("error", code)``: not forwarded; the proxy answers every partition of it with ``code`` itself;
* ``"drop"``: forwarded (the broker writes it), but its answer is swallowed and the client's connection
  closed -- the outcome the client cannot know, which idempotence must resolve;
* ``("delay", seconds)``: forwarded after ``seconds``; the connection's later requests wait behind it,
  as on a slow link;
* ``"close"``: not forwarded; both connections are closed at once, so the requests still in flight on
  this connection (written by the broker or not) are never answered.

Answers go back in request order, as Kafka clients require.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections import deque
from typing import Any

from aiokafka_lite.protocol import decode_request, decode_response, encode_response
from aiokafka_lite.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)

METADATA, PRODUCE, FIND_COORDINATOR = 3, 0, 10
Fault = Any  # ("error", code) | "drop" | ("delay", seconds) | "close"


class KafkaProxy:
    def __init__(self, upstream: str) -> None:
        host, _, port = upstream.rpartition(":")
        self.upstream = (host, int(port))
        self.faults: deque[Fault] = deque()
        self.produce_requests = 0
        self.injected = 0
        #: API keys whose requests are decoded into ``captured`` as ``(api_key, version, request)``.
        self.capture: set[int] = set()
        self.captured: list[tuple[int, int, Any]] = []
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def __aenter__(self) -> KafkaProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _client(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        ureader, uwriter = await asyncio.open_connection(*self.upstream)
        # Per request, in order: ("up", api_key, version, corr) or ("synthetic", frame) or ("drop", ...).
        pending: deque[tuple[Any, ...]] = deque()

        async def flush_synthetic() -> None:
            while pending and pending[0][0] == "synthetic":
                cwriter.write(pending.popleft()[1])
            await cwriter.drain()

        async def from_upstream() -> None:
            while True:
                frame = await _read_frame(ureader)
                if frame is None:
                    cwriter.close()
                    return
                await flush_synthetic()
                kind, api_key, version, _ = pending.popleft()
                if kind == "drop":
                    cwriter.close()  # the broker wrote it; the client never learns
                    uwriter.close()
                    return
                if api_key == METADATA:
                    corr_id, response = decode_response(api_key, version, frame)
                    for b in response.brokers:
                        b.host, b.port = "127.0.0.1", self.port
                    cwriter.write(encode_response(response, version, corr_id))
                elif api_key == FIND_COORDINATOR:
                    corr_id, response = decode_response(api_key, version, frame)
                    if version < 4:
                        response.host, response.port = "127.0.0.1", self.port
                    for c in response.coordinators:
                        c.host, c.port = "127.0.0.1", self.port
                    cwriter.write(encode_response(response, version, corr_id))
                else:
                    cwriter.write(struct.pack(">i", len(frame)) + frame)
                await cwriter.drain()
                await flush_synthetic()

        up = asyncio.ensure_future(from_upstream())
        try:
            while True:
                frame = await _read_frame(creader)
                if frame is None or up.done():
                    break
                api_key, version, corr = struct.unpack_from(">hhi", frame)
                if api_key in self.capture:
                    self.captured.append((api_key, version, decode_request(frame)[1]))
                fault = None
                if api_key == PRODUCE:
                    self.produce_requests += 1
                    if self.faults:
                        fault = self.faults.popleft()
                if fault == "close":
                    self.injected += 1
                    break  # the finally below closes both sides
                if isinstance(fault, tuple) and fault[0] == "delay":
                    self.injected += 1
                    await asyncio.sleep(fault[1])
                    fault = None
                if fault is not None and fault != "drop":
                    self.injected += 1
                    _, request = decode_request(frame)
                    answer = ProduceResponse(responses=[
                        TopicProduceResponse(name=t.name, partition_responses=[
                            PartitionProduceResponse(index=p.index, error_code=fault[1], base_offset=-1)
                            for p in t.partition_data])
                        for t in request.topic_data])
                    pending.append(("synthetic", encode_response(answer, version, corr)))
                    await flush_synthetic()
                    continue
                if fault == "drop":
                    self.injected += 1
                pending.append(("drop" if fault == "drop" else "up", api_key, version, corr))
                uwriter.write(struct.pack(">i", len(frame)) + frame)
                await uwriter.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # stop() cancels us; asyncio's stream callback must see a normal end
        finally:
            up.cancel()
            with contextlib.suppress(BaseException):
                await up
            for w in (cwriter, uwriter):
                w.close()
            self._tasks.discard(task)


async def _read_frame(reader: asyncio.StreamReader) -> bytes | None:
    try:
        head = await reader.readexactly(4)
        (size,) = struct.unpack(">i", head)
        return await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None

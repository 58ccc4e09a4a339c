"""A hand-built ApiVersions v0 probe: is a Kafka-protocol broker answering at ``host:port``?

Built from bytes rather than the generated protocol package, so that readiness checks (embedded brokers,
the mock cluster, the TLS front) work even when the codecs are broken, and cost nothing to import.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct

from .errors import KafkaConnectionError, ProtocolError

__all__ = ["aprobe_api_versions", "probe_api_versions"]

_API_VERSIONS_KEY = 18
_PROBE_CLIENT_ID = b"aiokafka-lite-probe"
_MAX_PROBE_FRAME = 1 << 20  # an ApiVersions v0 answer is a few hundred bytes; more means "not Kafka"


def _api_versions_request(correlation_id: int) -> bytes:
    header = struct.pack(">hhih", _API_VERSIONS_KEY, 0, correlation_id, len(_PROBE_CLIENT_ID))
    body = header + _PROBE_CLIENT_ID
    return struct.pack(">i", len(body)) + body


def _frame_size(prefix: bytes, where: str) -> int:
    (size,) = struct.unpack(">i", prefix)
    if not 10 <= size <= _MAX_PROBE_FRAME:
        raise ProtocolError(
            f"{where}: ApiVersions answer has impossible size {size}; is this a Kafka broker?"
        )
    return size


def _parse_api_versions(payload: bytes, correlation_id: int, where: str) -> dict[int, tuple[int, int]]:
    corr, error_code, count = struct.unpack_from(">ihi", payload)
    if corr != correlation_id:
        raise ProtocolError(f"{where}: correlation id {corr} answers request {correlation_id}")
    if count < 0 or len(payload) != 10 + 6 * count:
        raise ProtocolError(f"{where}: ApiVersions v0 answer of {len(payload)} bytes lists {count} APIs")
    if error_code != 0:
        raise ProtocolError(f"{where}: ApiVersions v0 answered error code {error_code}")
    versions: dict[int, tuple[int, int]] = {}
    for i in range(count):
        key, lo, hi = struct.unpack_from(">hhh", payload, 10 + 6 * i)
        versions[key] = (lo, hi)
    return versions


def probe_api_versions(host: str, port: int, timeout: float = 2.0) -> dict[int, tuple[int, int]]:
    """Send ApiVersions v0 to ``host:port`` and return ``{api_key: (min_version, max_version)}``.

    Raises :class:`KafkaConnectionError` if nothing answers and :class:`ProtocolError` if the answer is
    not a well-formed, error-free ApiVersions v0 response.
    """
    where = f"{host}:{port}"
    correlation_id = 0x4B4C  # arbitrary; checked in the answer
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(_api_versions_request(correlation_id))
            size = _frame_size(_recv_exact(sock, 4, where), where)
            payload = _recv_exact(sock, size, where)
    except OSError as exc:  # refused, reset, timeout (socket.timeout is an OSError)
        raise KafkaConnectionError(f"{where}: {exc.__class__.__name__}: {exc}") from exc
    return _parse_api_versions(payload, correlation_id, where)


def _recv_exact(sock: socket.socket, n: int, where: str) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(n - len(chunks))
        if not chunk:
            raise KafkaConnectionError(f"{where}: connection closed after {len(chunks)} of {n} bytes")
        chunks += chunk
    return bytes(chunks)


async def aprobe_api_versions(host: str, port: int, timeout: float = 2.0) -> dict[int, tuple[int, int]]:
    """Async twin of :func:`probe_api_versions`. One ``asyncio.timeout`` bounds the whole probe: on
    Python 3.11, ``wait_for`` around a step that failed just as the caller was cancelled returned the
    step's error and dropped the cancellation, so a cancelled ``astart()`` kept probing to its deadline."""
    where = f"{host}:{port}"
    correlation_id = 0x4B4C
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout):
            reader, stream = await asyncio.open_connection(host, port)
            writer = stream
            stream.write(_api_versions_request(correlation_id))
            await stream.drain()
            size = _frame_size(await reader.readexactly(4), where)
            payload = await reader.readexactly(size)
    except asyncio.IncompleteReadError as exc:
        raise KafkaConnectionError(f"{where}: connection closed mid-answer") from exc
    except (OSError, asyncio.TimeoutError) as exc:
        raise KafkaConnectionError(f"{where}: {exc.__class__.__name__}: {exc}") from exc
    finally:
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
    return _parse_api_versions(payload, correlation_id, where)

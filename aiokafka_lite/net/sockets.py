"""Opening a broker's TCP socket: every address the name resolves to, buffers sized before connecting."""

from __future__ import annotations

import asyncio
import socket

from ..errors import KafkaConnectionError

__all__ = ["open_socket"]


async def open_socket(loop: asyncio.AbstractEventLoop, host: str, port: int, sndbuf: int, rcvbuf: int,
                      where: str) -> socket.socket:
    """A connected non-blocking socket to the first address of ``host`` that accepts (names are resolved
    again on every call, so a broker that moved is found). Buffers are sized before connect, so window
    scaling fits them; Nagle is off. Raises KafkaConnectionError naming ``where`` and every address tried.
    """
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise KafkaConnectionError(f"cannot resolve {where}: {exc}") from exc
    errors: list[str] = []
    for family, type_, proto, _name, address in infos:
        sock = socket.socket(family, type_, proto)
        try:
            sock.setblocking(False)
            if sndbuf > 0:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
            if rcvbuf > 0:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            if family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await loop.sock_connect(sock, address)
        except OSError as exc:
            sock.close()
            errors.append(str(address[0]) + ":" + str(address[1]) + f": {exc.strerror or str(exc)}")
            continue
        except BaseException:
            sock.close()
            raise
        return sock
    raise KafkaConnectionError(f"cannot connect to {where}: {'; '.join(errors) or 'no address'}")

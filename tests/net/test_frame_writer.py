"""FrameWriter (net/framing.py), the send half of a connection: the transport is handed a part only
while it holds nothing unsent, so asyncio's selector transport never copies a queue of record batches
into its bytearray. On a fake transport (the rules), then on a real loopback socket whose reader stalls."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from aiokafka_lite.net.framing import FrameWriter
from aiokafka_lite.protocol.scatter import SCATTER_MIN


class _Transport:
    """Takes ``room`` bytes at once, holds the rest and then says pause_writing, as asyncio's does."""

    def __init__(self, writer: FrameWriter, room: int) -> None:
        self.writer = writer
        self.room = room
        self.held = 0
        self.writes: list[Any] = []
        self.limits: tuple[int, int] | None = None

    def set_write_buffer_limits(self, high: int, low: int) -> None:
        self.limits = (high, low)

    def get_write_buffer_size(self) -> int:
        return self.held

    def write(self, data: Any) -> None:
        assert self.held == 0, "written while it still held bytes"
        self.writes.append(data)
        taken = min(self.room, len(data))
        self.room -= taken
        self.held = len(data) - taken
        if self.held:
            self.writer.pause()

    def drain(self, room: int) -> None:
        """The socket took what was held and has ``room`` more."""
        self.held = 0
        self.room = room
        self.writer.resume()


def test_parts_wait_while_the_transport_holds_bytes_and_go_one_by_one_after() -> None:
    w = FrameWriter()
    t = _Transport(w, room=100_000)
    w.attach(t)
    assert t.limits == (1, 0)
    big = [bytes([i]) * 60_000 for i in range(5)]
    w.write([[b"head0", big[0]], [b"head1", big[1]], [b"head2", big[2]]])
    # 100,000 bytes fit: head0, big0, head1 and part of big1; the rest waits here, not in the transport
    assert [bytes(p) for p in t.writes] == [b"head0", big[0], b"head1", big[1]]
    assert t.held == 60_000 - (100_000 - 60_010) and w.unsent == t.held + 5 + 60_000
    assert w.over
    w.write([[b"head3", big[3]]])  # a later frame queues behind, in order
    assert len(t.writes) == 4
    t.drain(room=0)  # the socket is full again at once: one part handed over, the rest waits
    assert [bytes(p) for p in t.writes[4:]] == [b"head2"]
    t.drain(room=1 << 20)
    assert [bytes(p) for p in t.writes[5:]] == [big[2], b"head3", big[3]]
    assert w.unsent == 0 and not w.over


def test_large_parts_go_as_views_of_the_same_bytes_small_ones_joined() -> None:
    w = FrameWriter()
    t = _Transport(w, room=1 << 30)
    w.attach(t)
    batch = b"b" * SCATTER_MIN
    w.write([[b"a", b"bc", batch, b"d"], b"ef"])
    assert [bytes(p) for p in t.writes] == [b"abc", batch, b"def"]
    assert isinstance(t.writes[1], memoryview) and t.writes[1].obj is batch


def test_resume_says_whether_little_enough_is_left_for_waiters() -> None:
    w = FrameWriter()
    t = _Transport(w, room=0)
    w.attach(t)
    parts = [b"x" * 40_000 for _ in range(4)]
    w.write(parts)
    assert w.over and w.unsent == 160_000
    t.held, t.room = 0, 0
    assert w.resume() is False  # one more part handed over and held at once: 120,000 unsent
    assert w.unsent == 120_000 and w.over
    t.held, t.room = 0, 70_000
    # the next part is taken whole, the last one but 10,000 bytes: at most LOW (16 KiB) left
    assert w.resume() is True
    assert w.unsent == 10_000 and not w.over and len(t.writes) == 4


def test_detach_drops_what_waits() -> None:
    w = FrameWriter()
    t = _Transport(w, room=0)
    w.attach(t)
    w.write([b"x" * 50_000, b"y" * 50_000])
    w.detach()
    assert w.unsent == 0
    w.resume()
    assert len(t.writes) == 1


async def test_a_stalled_reader_never_makes_the_transport_hold_more_than_one_part() -> None:
    """On a real loopback socket: while the peer does not read, the transport holds at most one part
    (before FrameWriter it held every record batch written since the socket filled, as a copy)."""
    loop = asyncio.get_running_loop()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    peak = 0

    class _Proto(asyncio.Protocol):
        def __init__(self) -> None:
            self.writer = FrameWriter()

        def connection_made(self, transport: Any) -> None:
            self.writer.attach(transport)

        def pause_writing(self) -> None:
            self.writer.pause()

        def resume_writing(self) -> None:
            self.writer.resume()

    transport, proto = await loop.create_connection(_Proto, *server.getsockname())
    peer, _ = server.accept()
    try:
        part = 256 * 1024
        parts = [bytes([i % 251]) * part for i in range(64)]  # 16 MiB: far more than the socket buffers
        for p in parts:
            proto.writer.write([p])
            peak = max(peak, transport.get_write_buffer_size())
        assert proto.writer.unsent > 4 * part  # the reader stalled: most of it waits
        assert peak <= part, f"the transport held {peak} bytes"
        peer.setblocking(False)
        got = bytearray()
        while len(got) < len(parts) * part:
            try:
                chunk = peer.recv(1 << 20)
            except BlockingIOError:
                await asyncio.sleep(0.001)
                continue
            got += chunk
            peak = max(peak, transport.get_write_buffer_size())
        assert bytes(got) == b"".join(parts)
        assert peak <= part and proto.writer.unsent == 0
    finally:
        transport.close()
        peer.close()
        server.close()

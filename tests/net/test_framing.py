"""FrameReader (net/framing.py), the receive half of a connection, on bytes alone: frames split at every
possible point, many frames in one chunk, impossible sizes, and stop() from inside the callback."""

from __future__ import annotations

import struct
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aiokafka_lite.net import framing
from aiokafka_lite.net.framing import FrameReader, FrameSizeError


def _frames(payloads: list[bytes]) -> bytes:
    return b"".join(struct.pack(">i", len(p)) + p for p in payloads)


@given(st.lists(st.binary(min_size=4, max_size=300), min_size=1, max_size=8), st.data())
def test_every_split_of_the_stream_gives_the_same_frames(payloads: list[bytes], data: st.DataObject) -> None:
    stream = _frames(payloads)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(stream) - 1), max_size=12)))
    got: list[bytes] = []
    reader = FrameReader(1 << 20)
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        reader.feed(stream[start:end], lambda f: got.append(bytes(f)))
    assert got == payloads and reader.pending == 0


def test_a_byte_at_a_time_and_what_is_pending() -> None:
    stream = _frames([b"abcdefgh", b"wxyz"])
    got: list[bytes] = []
    reader = FrameReader(64)
    for i in range(len(stream) - 1):
        reader.feed(stream[i:i + 1], lambda f: got.append(bytes(f)))
    assert got == [b"abcdefgh"] and reader.pending == 7  # 4 size bytes and 3 of "wxyz"
    reader.feed(stream[-1:], lambda f: got.append(bytes(f)))
    assert got == [b"abcdefgh", b"wxyz"] and reader.pending == 0


@pytest.mark.parametrize("size", [-1, 0, 3, 65])
def test_an_impossible_size_stops_the_reader(size: int) -> None:
    reader = FrameReader(64)
    got: list[bytes] = []
    with pytest.raises(FrameSizeError) as info:
        reader.feed(_frames([b"good"]) + struct.pack(">i", size) + b"x" * 8, lambda f: got.append(bytes(f)))
    assert got == [b"good"] and info.value.size == size
    reader.feed(_frames([b"more"]), lambda f: got.append(bytes(f)))
    assert got == [b"good"]  # nothing after a broken stream


def test_stop_inside_the_callback_drops_the_rest() -> None:
    reader = FrameReader(64)
    got: list[bytes] = []

    def on_frame(frame: memoryview) -> None:
        got.append(bytes(frame))
        reader.stop()

    reader.feed(_frames([b"one!", b"two!", b"three"]), on_frame)
    assert got == [b"one!"] and reader.pending == 0


@given(st.lists(st.binary(min_size=4, max_size=300), min_size=1, max_size=8), st.data(),
       st.integers(1, 64))
def test_small_buffers_renewed_mid_frame_give_the_same_frames(payloads: list[bytes], data: st.DataObject,
                                                              chunk: int) -> None:
    """Buffers far smaller than a frame: the frame's first bytes move to each fresh buffer."""
    stream = _frames(payloads)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(stream) - 1), max_size=12)))
    kept: list[memoryview] = []
    reader = FrameReader(1 << 20, chunk=chunk)
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        reader.feed(stream[start:end], kept.append)
    assert [bytes(f) for f in kept] == payloads and reader.pending == 0


def test_frames_handed_out_are_read_only_and_never_overwritten() -> None:
    """Decoders keep views of a frame (a Fetch answer's records): later reads must not touch it."""
    reader = FrameReader(1 << 20, chunk=64)
    kept: list[memoryview] = []
    first = [b"A" * 20, b"B" * 30]
    reader.feed(_frames(first), kept.append)
    for i in range(50):  # enough to fill and renew the buffer many times
        reader.feed(_frames([bytes([i]) * 40]), kept.append)
    assert [bytes(f) for f in kept[:2]] == first
    assert all(f.readonly for f in kept)
    assert [bytes(f) for f in kept[2:]] == [bytes([i]) * 40 for i in range(50)]


def test_socket_writes_in_place() -> None:
    """The BufferedProtocol path: the socket writes into get_buffer(); a large frame gets a buffer of
    its own size, holding the bytes that came before it."""
    reader = FrameReader(1 << 20, chunk=1024)
    got: list[bytes] = []
    big = b"z" * 5000
    stream = _frames([b"tiny", big])
    pos = 0
    while pos < len(stream):
        buf = reader.get_buffer()
        assert len(buf) > 0
        n = min(len(buf), 700, len(stream) - pos)
        buf[:n] = stream[pos:pos + n]
        pos += n
        reader.buffer_updated(n, lambda f: got.append(bytes(f)))
    assert got == [b"tiny", big] and reader.pending == 0


def _dirty_buffer(size: int) -> bytearray:
    """What a receive buffer that is not zeroed may hold: anything (here 0xEE throughout)."""
    return bytearray(b"\xee" * size)


@given(st.lists(st.binary(min_size=4, max_size=300), min_size=1, max_size=8),
       st.lists(st.integers(1, 97), min_size=1, max_size=20), st.integers(1, 64))
def test_buffers_not_zeroed_never_leak_into_frames(payloads: list[bytes], reads: list[int],
                                                   chunk: int) -> None:
    """Receive buffers come uninitialised (records.recv_buffer): the socket writes part of what
    get_buffer() offers, and every frame holds only bytes that were received, also across renewals."""
    stream = _frames(payloads)
    got: list[bytes] = []
    with mock.patch.object(framing, "recv_buffer", _dirty_buffer):
        reader = FrameReader(1 << 20, chunk=chunk)
        pos = i = 0
        while pos < len(stream):
            buf = reader.get_buffer()
            n = min(len(buf), reads[i % len(reads)], len(stream) - pos)
            buf[:n] = stream[pos:pos + n]
            pos, i = pos + n, i + 1
            reader.buffer_updated(n, lambda f: got.append(bytes(f)))
    assert got == payloads and reader.pending == 0

"""FrameReader (net/framing.py), the receive half of a connection, on bytes alone: frames split at every
possible point, many frames in one chunk, impossible sizes, and stop() from inside the callback."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

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

"""A Produce frame in parts (protocol/scatter.py) is byte for byte the frame encode_request builds, with
each large record batch passed through as the caller's own object (not copied); and net/framing.py writes
such frames in order, joining small parts and handing record batches to the transport whole."""

from __future__ import annotations

import random

import pytest

from aiokafka_lite.net.framing import frame_size, write_frames
from aiokafka_lite.protocol import encode_request, encode_request_scattered
from aiokafka_lite.protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from aiokafka_lite.protocol.scatter import SCATTER_MIN


def _request(sizes: list[int], rng: random.Random) -> tuple[ProduceRequest, list[bytes]]:
    records = [rng.randbytes(n) for n in sizes]
    topics = [TopicProduceData(name=f"t{t}", partition_data=[
        PartitionProduceData(index=i, records=r) for i, r in enumerate(records) if i % 2 == t])
        for t in range(2)]
    return ProduceRequest(transactional_id="tx", acks=-1, timeout_ms=1000, topic_data=topics), records


@pytest.mark.parametrize("version", [3, 7, 8, 9, 10, 11])
def test_parts_are_the_frame_and_batches_are_not_copied(version: int) -> None:
    rng = random.Random(version)
    sizes = [0, 10, SCATTER_MIN - 1, SCATTER_MIN, 70000, 5, 200000]
    req, records = _request(sizes, rng)
    whole = bytes(encode_request(req, version, 42, "client"))
    parts = encode_request_scattered(req, version, 42, "client")
    assert b"".join(bytes(p) for p in parts) == whole
    assert frame_size(parts) == len(whole)
    in_order = [pd.records for td in req.topic_data for pd in td.partition_data]
    large = [r for r in in_order if r is not None and len(r) >= SCATTER_MIN]
    assert len(large) == 3 and len(records) == len(sizes)
    assert [p for p in parts if any(p is r for r in large)] == large  # the same objects, in order
    assert len(parts) == 2 * len(large) + 1  # the request's own bytes around each batch


class _Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.objects: list[object] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.objects.append(data)
        self.writes.append(bytes(data))


def test_frames_written_in_order_small_parts_joined() -> None:
    rng = random.Random(1)
    req, records = _request([100, 30000, 50], rng)
    big = encode_request_scattered(req, 9, 1, "c")
    empty = ProduceRequest(transactional_id=None, acks=1, timeout_ms=5, topic_data=[])
    small1 = encode_request(empty, 9, 2, "c")
    small2 = bytearray(b"\x00\x00\x00\x01x")
    t = _Transport()
    write_frames(t, [small1, big, small2, small2])
    expected = bytes(small1) + b"".join(bytes(p) for p in big) + bytes(small2) * 2
    assert b"".join(t.writes) == expected
    # one write before the batch (the first frame and the big frame's head), the batch itself, one after
    assert len(t.writes) == 3 and t.objects[1] is records[1]

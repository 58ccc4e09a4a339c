"""Record data in decoded answers is a view of the frame, not a copy, where the frame cannot change
(a Fetch answer of 1 MiB would otherwise be copied once more before its batches are read)."""

from __future__ import annotations

import pytest

from aiokafka_lite.errors import ProtocolError
from aiokafka_lite.protocol._codec import (
    read_compact_nullable_records,
    read_compact_records,
    read_nullable_records,
    read_records,
)


def _sized(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big", signed=True) + body


def test_bytes_and_read_only_views_are_not_copied() -> None:
    frame = b"xx" + _sized(b"batches")
    got, end = read_records(frame, 2)
    assert isinstance(got, memoryview) and got.obj is frame and bytes(got) == b"batches"
    assert end == len(frame)
    view = memoryview(frame)[2:]
    got, _ = read_nullable_records(view, 0)
    assert isinstance(got, memoryview) and got.obj is frame and bytes(got) == b"batches"


def test_writable_buffers_are_copied() -> None:
    """A bytearray's owner may reuse or resize it after decoding (a fake broker's receive buffer)."""
    buf = bytearray(_sized(b"batches"))
    got, _ = read_records(buf, 0)
    assert type(got) is bytes and got == b"batches"
    del buf[:4]  # would raise BufferError if a view were still exported
    got, _ = read_nullable_records(memoryview(bytearray(_sized(b"abc"))), 0)
    assert type(got) is bytes and got == b"abc"


def test_compact_and_null_forms() -> None:
    frame = bytes([4]) + b"abc"
    got, end = read_compact_records(frame, 0)
    assert bytes(got) == b"abc" and end == 4
    assert read_compact_nullable_records(b"\x00", 0) == (None, 1)
    assert read_nullable_records(b"\xff\xff\xff\xff", 0) == (None, 4)
    with pytest.raises(ProtocolError):
        read_records(b"\xff\xff\xff\xff", 0)
    with pytest.raises(ProtocolError):
        read_compact_records(b"\x00", 0)
    with pytest.raises(ProtocolError, match="records"):
        read_records(_sized(b"abc")[:5], 0)


def test_fetch_answer_records_view_the_frame() -> None:
    from aiokafka_lite.protocol.messages.fetch import (
        FetchableTopicResponse,
        FetchResponse,
        PartitionData,
    )

    resp = FetchResponse(responses=[FetchableTopicResponse(
        topic="t", partitions=[PartitionData(partition_index=0, records=b"batch-bytes")])])
    frame = bytes(resp.encode(4))
    decoded = FetchResponse.decode(memoryview(frame), 4)
    records = decoded.responses[0].partitions[0].records
    assert isinstance(records, memoryview) and records.obj is frame
    assert records == b"batch-bytes"

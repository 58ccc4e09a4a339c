"""Responses: bytes after a complete body are ignored (as Kafka's Java client does); requests stay strict."""

from __future__ import annotations

from aiokafka_lite.protocol import API_KEYS, decode_response
from aiokafka_lite.protocol.messages.metadata import MetadataResponse


def test_response_with_a_spare_trailing_byte_decodes() -> None:
    body = MetadataResponse(throttle_time_ms=7, cluster_id="c").encode(9)
    frame = (1234).to_bytes(4, "big") + b"\x00" + body + b"\x00"  # header v1 = cid + empty tag section
    cid, resp = decode_response(API_KEYS["Metadata"], 9, frame)
    assert cid == 1234
    assert isinstance(resp, MetadataResponse)
    assert resp.throttle_time_ms == 7
    assert resp.cluster_id == "c"

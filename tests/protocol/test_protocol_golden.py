"""Golden bytes written by hand from the spec (not from our encoder): the codec must produce and read them."""

from __future__ import annotations

import struct
import uuid

from aiokafka_lite.protocol import decode_request, decode_response, encode_request, encode_response
from aiokafka_lite.protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    FinalizedFeatureKey,
)
from aiokafka_lite.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchResponse,
    LeaderIdAndEpoch,
    PartitionData,
)
from aiokafka_lite.protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from aiokafka_lite.protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from aiokafka_lite.protocol.messages.request_header import RequestHeader
from aiokafka_lite.protocol.messages.response_header import ResponseHeader


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def s(text: str) -> bytes:  # STRING: int16 length + UTF-8
    raw = text.encode()
    return i16(len(raw)) + raw


def cs(text: str | None) -> bytes:  # COMPACT_(NULLABLE_)STRING: uvarint(len + 1), 0 = null
    if text is None:
        return b"\x00"
    raw = text.encode()
    return bytes([len(raw) + 1]) + raw


def frame(body: bytes) -> bytes:
    return i32(len(body)) + body


TOPIC_ID = uuid.UUID("0123456789abcdef0123456789abcdef")


def test_api_versions_request_v0_frame() -> None:
    # RequestHeader v1: api_key 18, version 0, correlation 1, client_id "c" (STRING); empty body.
    want = frame(i16(18) + i16(0) + i32(1) + s("c"))
    assert want == bytes.fromhex("0000000b00120000000000010001" + "63")
    assert encode_request(ApiVersionsRequest(), 0, 1, "c") == want
    assert ApiVersionsRequest().encode(0) == b""


def test_api_versions_request_v3_frame() -> None:
    # RequestHeader v2 (client_id stays a non-compact STRING, then an empty tag section), then the flexible
    # body: two COMPACT_STRINGs and an empty tag section.
    header = i16(18) + i16(3) + i32(7) + s("cli") + b"\x00"
    body = cs("aiokafka-lite") + cs("0.1.0") + b"\x00"
    req = ApiVersionsRequest(client_software_name="aiokafka-lite", client_software_version="0.1.0")
    assert encode_request(req, 3, 7, "cli") == frame(header + body)
    assert body == bytes.fromhex("0e61696f6b61666b612d6c69746506302e312e3000")
    hdr, back = decode_request(frame(header + body)[4:])
    assert back == req
    assert (hdr.request_api_key, hdr.request_api_version) == (18, 3)
    assert (hdr.correlation_id, hdr.client_id) == (7, "cli")


def test_request_header_v1_and_v2() -> None:
    v1 = i16(3) + i16(1) + i32(0x01020304) + s("client")
    v2 = i16(3) + i16(12) + i32(-5) + s("client") + b"\x00"
    null_client = i16(3) + i16(1) + i32(9) + b"\xff\xff"
    assert RequestHeader(request_api_key=3, request_api_version=1, correlation_id=0x01020304,
                         client_id="client").encode(1) == v1  # fmt: skip
    assert RequestHeader(request_api_key=3, request_api_version=12, correlation_id=-5,
                         client_id="client").encode(2) == v2  # fmt: skip
    assert RequestHeader.decode(null_client, 1).client_id is None
    assert encode_request(MetadataRequest(topics=[]), 1, 9, None) == frame(null_client + i32(0))
    # v0 (ControlledShutdown v0 only) has no client id at all
    assert RequestHeader(request_api_key=7, correlation_id=3).encode(0) == i16(7) + i16(0) + i32(3)


def test_metadata_request_v1() -> None:
    body = i32(2) + s("a") + s("bc")
    req = MetadataRequest(topics=[MetadataRequestTopic(name="a"), MetadataRequestTopic(name="bc")])
    assert req.encode(1) == body
    assert MetadataRequest.decode(body, 1) == req
    # v1: a null array asks for every topic
    assert MetadataRequest(topics=None).encode(1) == i32(-1)
    assert MetadataRequest.decode(i32(-1), 1).topics is None


def test_metadata_request_v12() -> None:
    # COMPACT_ARRAY: uvarint(n + 1); each topic: uuid, COMPACT_NULLABLE_STRING name, tags; then
    # allow_auto_topic_creation, include_topic_authorized_operations, tags.
    body = (
        b"\x03"
        + TOPIC_ID.bytes + cs("orders") + b"\x00"
        + bytes(16) + cs(None) + b"\x00"
        + b"\x00"  # allow_auto_topic_creation = false
        + b"\x01"  # include_topic_authorized_operations = true
        + b"\x00"
    )  # fmt: skip
    req = MetadataRequest(
        topics=[MetadataRequestTopic(topic_id=TOPIC_ID, name="orders"), MetadataRequestTopic(name=None)],
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=True,
    )
    assert req.encode(12) == body
    assert MetadataRequest.decode(body, 12) == req
    assert MetadataRequest(topics=None).encode(12) == b"\x00\x01\x00\x00"
    header = i16(3) + i16(12) + i32(42) + s("x") + b"\x00"
    assert encode_request(req, 12, 42, "x") == frame(header + body)


def test_flexible_response_with_tagged_fields() -> None:
    # ApiVersionsResponse v3: error_code, COMPACT_ARRAY api_keys (each with its own empty tags), throttle,
    # then the tag section: tag 1 FinalizedFeaturesEpoch (int64), tag 2 FinalizedFeatures, tag 3
    # ZkMigrationReady, plus an unknown tag 9 that must be kept verbatim.
    finalized = b"\x02" + cs("metadata.version") + i16(20) + i16(1) + b"\x00"
    tags = (
        b"\x04"
        + b"\x01" + b"\x08" + i64(77)
        + b"\x02" + bytes([len(finalized)]) + finalized
        + b"\x03" + b"\x01" + b"\x01"
        + b"\x09" + b"\x02" + b"hi"
    )  # fmt: skip
    body = i16(0) + b"\x02" + i16(3) + i16(0) + i16(13) + b"\x00" + i32(0) + tags
    resp = ApiVersionsResponse.decode(body, 3)
    assert resp.api_keys == [ApiVersion(api_key=3, min_version=0, max_version=13)]
    assert resp.finalized_features_epoch == 77
    assert resp.finalized_features == [
        FinalizedFeatureKey(name="metadata.version", max_version_level=20, min_version_level=1)
    ]
    assert resp.zk_migration_ready is True
    assert resp.supported_features == []
    assert resp._unknown_tagged == [(9, b"hi")]
    assert resp.encode(3) == body
    # ApiVersions responses always use header v0, even when the body is flexible
    cid, again = decode_response(18, 3, encode_response(resp, 3, 5)[4:])
    assert cid == 5 and again == resp
    assert encode_response(resp, 3, 5) == frame(i32(5) + body)


def test_fetch_response_v12_tagged_struct_and_header_tags() -> None:
    records = b"\x00" * 10
    partition = (
        i32(0) + i16(0) + i64(100) + i64(90) + i64(0)
        + b"\x01"  # aborted_transactions: empty compact array
        + i32(-1)  # preferred_read_replica
        + bytes([len(records) + 1]) + records
        + b"\x01" + b"\x01" + b"\x09" + i32(7) + i32(3) + b"\x00"  # tag 1 CurrentLeader {7, 3, tags}
    )  # fmt: skip
    body = i32(0) + i16(0) + i32(99) + b"\x02" + cs("t") + b"\x02" + partition + b"\x00" + b"\x00"
    resp = FetchResponse.decode(body, 12)
    want = FetchResponse(
        session_id=99,
        responses=[
            FetchableTopicResponse(
                topic="t",
                partitions=[
                    PartitionData(
                        high_watermark=100,
                        last_stable_offset=90,
                        log_start_offset=0,
                        aborted_transactions=[],
                        preferred_read_replica=-1,
                        records=records,
                        current_leader=LeaderIdAndEpoch(leader_id=7, leader_epoch=3),
                    )
                ],
            )
        ],
    )
    assert resp == want
    assert want.encode(12) == body
    # response header v1 with a tagged field we do not know: skipped
    header = i32(1234) + b"\x01" + b"\x05" + b"\x01" + b"z"
    cid, got = decode_response(1, 12, header + body)
    assert cid == 1234 and got == want
    assert ResponseHeader.decode(header, 1)._unknown_tagged == [(5, b"z")]


def test_produce_request_v3_and_v9_records() -> None:
    batch = bytes(range(61))
    v3 = s("txn") + i16(-1) + i32(30000) + i32(1) + s("t") + i32(1) + i32(2) + i32(len(batch)) + batch
    req = ProduceRequest(
        transactional_id="txn",
        acks=-1,
        timeout_ms=30000,
        topic_data=[
            TopicProduceData(name="t", partition_data=[PartitionProduceData(index=2, records=batch)])
        ],
    )
    assert req.encode(3) == v3
    assert ProduceRequest.decode(v3, 3) == req
    v9 = cs("txn") + i16(-1) + i32(30000) + b"\x02" + cs("t") + b"\x02" + i32(2) + bytes([62]) + batch
    v9 += b"\x00" + b"\x00" + b"\x00"
    assert req.encode(9) == v9
    assert ProduceRequest.decode(v9, 9) == req
    # null transactional id and null records
    req.transactional_id = None
    req.topic_data[0].partition_data[0].records = None
    assert req.encode(3) == i16(-1) + i16(-1) + i32(30000) + i32(1) + s("t") + i32(1) + i32(2) + i32(-1)
    assert ProduceRequest.decode(req.encode(9), 9) == req

"""The framing helpers of aiokafka_lite.protocol and the encode-side rules of the contract."""

from __future__ import annotations

import struct

import pytest

from aiokafka_lite.errors import IllegalArgumentError, ProtocolError, UnsupportedVersionError
from aiokafka_lite.protocol import (
    API_KEYS,
    REQUEST_CLASSES,
    RESPONSE_CLASSES,
    decode_assignment,
    decode_request,
    decode_response,
    decode_subscription,
    encode_assignment,
    encode_request,
    encode_response,
    encode_subscription,
    peek_correlation_id,
    request_header_version,
    response_header_version,
)
from aiokafka_lite.protocol.messages.api_versions import ApiVersion, ApiVersionsRequest, ApiVersionsResponse
from aiokafka_lite.protocol.messages.consumer_protocol_assignment import (
    ConsumerProtocolAssignment,
    TopicPartition,
)
from aiokafka_lite.protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from aiokafka_lite.protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from aiokafka_lite.protocol.messages.metadata import MetadataRequest, MetadataResponse
from aiokafka_lite.protocol.messages.produce import ProduceRequest


def test_api_tables() -> None:
    assert API_KEYS["Metadata"] == 3 and API_KEYS["Produce"] == 0 and API_KEYS["ApiVersions"] == 18
    assert REQUEST_CLASSES[3] is MetadataRequest and RESPONSE_CLASSES[3] is MetadataResponse
    assert 3 in REQUEST_CLASSES and 9999 not in REQUEST_CLASSES
    assert REQUEST_CLASSES.get(9999) is None
    assert set(REQUEST_CLASSES) == set(API_KEYS.values()) == set(RESPONSE_CLASSES)
    for key in REQUEST_CLASSES:
        assert REQUEST_CLASSES[key].API_KEY == key == RESPONSE_CLASSES[key].API_KEY
    assert MetadataRequest.NAME == "Metadata" and MetadataRequest.FLEXIBLE_MIN == 9
    assert ProduceRequest.FLEXIBLE_MIN == 9 and ProduceRequest.MIN_VERSION == 3


def test_header_versions() -> None:
    assert [request_header_version(3, v) for v in (0, 8, 9, 13)] == [1, 1, 2, 2]
    assert [response_header_version(3, v) for v in (0, 8, 9, 13)] == [0, 0, 1, 1]
    assert [request_header_version(18, v) for v in (2, 3)] == [1, 2]
    assert [response_header_version(18, v) for v in (0, 3, 4)] == [0, 0, 0]
    assert request_header_version(7, 0) == 0
    with pytest.raises(UnsupportedVersionError):
        request_header_version(9999, 0)


def test_encode_request_frame_layout() -> None:
    frame = encode_request(MetadataRequest(topics=None), 12, 0x7FFFFFFF, "me")
    (size,) = struct.unpack_from(">i", frame)
    assert size == len(frame) - 4
    assert frame[4:12] == struct.pack(">hhi", 3, 12, 0x7FFFFFFF)
    header, req = decode_request(frame[4:])
    assert header.client_id == "me" and header.correlation_id == 0x7FFFFFFF
    assert req == MetadataRequest(topics=None)


def test_decode_response_round_trip_and_peek() -> None:
    resp = MetadataResponse(cluster_id="c", controller_id=1)
    for version in range(1, MetadataResponse.MAX_VERSION + 1):  # controller_id exists from v1
        frame = encode_response(resp, version, 77)
        assert peek_correlation_id(frame[4:]) == 77
        cid, got = decode_response(3, version, memoryview(frame)[4:])
        assert cid == 77
        assert isinstance(got, MetadataResponse) and got.controller_id == 1
    with pytest.raises(ProtocolError):
        peek_correlation_id(b"\x00\x01")
    with pytest.raises(ProtocolError):
        decode_response(3, 12, b"\x00\x00\x00\x01")  # header tags missing


def test_api_versions_fallback_to_v0() -> None:
    """A broker that does not know our ApiVersions version answers with a v0 body and error 35."""
    v0 = ApiVersionsResponse(error_code=35, api_keys=[ApiVersion(api_key=18, min_version=0, max_version=2)])
    frame = struct.pack(">i", 5) + v0.encode(0)
    cid, got = decode_response(18, 3, frame)
    assert cid == 5 and got == v0


def test_absent_fields_follow_the_ignorable_rule() -> None:
    # IncludeClusterAuthorizedOperations is v8-10 and not ignorable: refused at v12
    with pytest.raises(UnsupportedVersionError, match="include_cluster_authorized_operations"):
        MetadataRequest(include_cluster_authorized_operations=True).encode(12)
    # AllowAutoTopicCreation (v4+, default true, not ignorable): false cannot be sent at v3
    with pytest.raises(UnsupportedVersionError):
        MetadataRequest(allow_auto_topic_creation=False).encode(3)
    assert MetadataRequest().encode(3) == MetadataRequest().encode(3)
    # ApiVersionsRequest.ClientSoftwareName is ignorable: silently dropped before v3
    assert ApiVersionsRequest(client_software_name="x").encode(2) == b""
    # ValidateOnly (CreateTopics v1+) must not be dropped at v0... but v0 is gone in Kafka 4; at v2 it goes
    req = CreateTopicsRequest(topics=[CreatableTopic(name="t", num_partitions=1, replication_factor=1)])
    req.validate_only = True
    assert CreateTopicsRequest.decode(req.encode(2), 2).validate_only is True


def test_null_where_the_version_forbids_it() -> None:
    # Topics is nullable only from v1: v0 cannot say "all topics" with null
    with pytest.raises(UnsupportedVersionError, match="cannot be null in version 0"):
        MetadataRequest(topics=None).encode(0)
    with pytest.raises(IllegalArgumentError):
        ProduceRequest(acks=1 << 20).encode(9)  # int16 overflow
    with pytest.raises(IllegalArgumentError):
        MetadataResponse(brokers=[object()]).encode(1)  # type: ignore[list-item]


def test_unknown_tags_merge_in_tag_order() -> None:
    resp = ApiVersionsResponse(finalized_features_epoch=3)
    resp._unknown_tagged = [(9, b"\x01")]
    data = resp.encode(3)
    assert data.endswith(b"\x02" + b"\x01\x08" + struct.pack(">q", 3) + b"\x09\x01\x01")
    assert ApiVersionsResponse.decode(data, 3) == resp


def test_equality_repr_and_defaults() -> None:
    a, b = MetadataRequest(), MetadataRequest()
    assert a == b and a.topics is not b.topics  # no shared mutable default
    b.topics = None
    assert a != b
    assert "MetadataRequest(topics=[]" in repr(a)
    with pytest.raises(TypeError):
        hash(a)
    with pytest.raises(TypeError):
        MetadataRequest(no_such_field=1)  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        a.no_such_field = 1  # type: ignore[attr-defined]


def test_consumer_protocol_helpers() -> None:
    sub = ConsumerProtocolSubscription(topics=["a"], user_data=None, generation_id=4, rack_id="r1")
    data = encode_subscription(sub)
    assert data[:2] == b"\x00\x03"
    assert decode_subscription(data) == (3, sub)
    # a newer member (v7 with extra fields) is read with our newest schema, the rest ignored
    newer = b"\x00\x07" + data[2:] + b"future-bytes"
    assert decode_subscription(newer) == (7, sub)
    # an older version fills defaults
    assert decode_subscription(encode_subscription(sub, 0))[1].generation_id == -1
    asg = ConsumerProtocolAssignment(assigned_partitions=[TopicPartition(topic="a", partitions=[1, 2])])
    assert decode_assignment(encode_assignment(asg, 0)) == (0, asg)
    assert decode_assignment(b"") == (0, ConsumerProtocolAssignment())
    with pytest.raises(ProtocolError):
        decode_assignment(b"\xff\xff\x00")
    with pytest.raises(ProtocolError):
        decode_subscription(b"\x00")

"""Embedded consumer protocol bytes: a peer's at v0, round trips at v1-v3, clean errors on junk."""

from __future__ import annotations

import pytest
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata
from hypothesis import given, settings
from hypothesis import strategies as st

from aiokafka_lite.consumer.group_protocol import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from aiokafka_lite.errors import ProtocolError
from aiokafka_lite.structs import TopicPartition as TP


def test_v0_bytes_match_aiokafka() -> None:
    ours = encode_subscription(Subscription(["a", "b"], b"ud"), version=0)
    assert ours == ConsumerProtocolMemberMetadata(0, ["a", "b"], b"ud").encode()
    theirs = ConsumerProtocolMemberAssignment(0, [("t", [0, 2])], b"x").encode()
    assert decode_assignment(theirs) == Assignment([TP("t", 0), TP("t", 2)], b"x", 0)
    assert encode_assignment(Assignment([TP("t", 2), TP("t", 0)], b"x"), version=0) == theirs


topics = st.lists(st.text(min_size=1, max_size=5), max_size=4, unique=True)
tps = st.lists(st.builds(TP, st.text(min_size=1, max_size=5), st.integers(0, 2**31 - 1)),
               max_size=6, unique=True)


@settings(max_examples=200, deadline=None)
@given(topics, st.one_of(st.none(), st.binary(max_size=20)), tps, st.integers(-1, 10**6),
       st.one_of(st.none(), st.text(max_size=5)), st.integers(0, 3))
def test_subscription_round_trip(t, ud, owned, gen, rack, version) -> None:
    sub = Subscription(sorted(t), ud, sorted(owned), gen, rack, version)
    got = decode_subscription(encode_subscription(sub, version))
    assert got.topics == sorted(t) and got.user_data == ud and got.version == version
    if version >= 1:
        assert sorted(got.owned_partitions) == sorted(owned)
    if version >= 2:
        assert got.generation_id == gen
    if version >= 3:
        assert got.rack_id == rack


def test_newer_version_with_trailing_fields_is_read() -> None:
    data = bytearray(encode_subscription(Subscription(["t"], None, [TP("t", 1)], 4, "r1"), 3))
    data[0:2] = (9).to_bytes(2, "big")
    data += b"\x00\x00\x00\x07future"
    got = decode_subscription(bytes(data))
    assert got.owned_partitions == [TP("t", 1)] and got.generation_id == 4 and got.rack_id == "r1"


def test_empty_assignment_from_broker() -> None:
    assert decode_assignment(b"").partitions == []


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60))
def test_junk_raises_protocol_error_only(data: bytes) -> None:
    for fn in (decode_subscription, decode_assignment):
        try:
            fn(data)
        except ProtocolError:
            pass


def test_huge_array_length_is_refused_before_allocating() -> None:
    with pytest.raises(ProtocolError, match="array of 2147483647 elements"):
        decode_assignment(b"\x00\x00\x7f\xff\xff\xff")

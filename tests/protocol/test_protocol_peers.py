"""Bytes agree with two independent codecs: kafka-python 3 (from Kafka's JSON) and aiokafka (hand-written).

Method: our encoding of a spec-built message is decoded by the peer and re-encoded by the peer; the peer's
bytes must equal ours, so both sides agree on every offset, length form and default.
"""

from __future__ import annotations

import importlib
import io
import pkgutil
import warnings
from typing import Any

import pytest
from _protocol_builders import BY_NAME, ENTRIES, Entry, build

from aiokafka_lite.protocol import (
    REQUEST_CLASSES,
    RESPONSE_CLASSES,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_request,
    encode_subscription,
)
from aiokafka_lite.protocol.messages.consumer_protocol_assignment import (
    ConsumerProtocolAssignment,
    TopicPartition,
)
from aiokafka_lite.protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from aiokafka_lite.protocol.messages.metadata import MetadataRequest, MetadataRequestTopic

SEEDS = range(3)

# Peer bugs found by this test (our bytes follow Kafka's spec; each was checked against the JSON):
AIOKAFKA_KNOWN_WRONG = {
    ("ListOffsetsRequest", 4): "aiokafka encodes current_leader_epoch as int64; the spec says int32",
    ("ListOffsetsRequest", 5): "aiokafka encodes current_leader_epoch as int64; the spec says int32",
    ("DescribeAclsRequest", 2): "aiokafka's v2 is not flexible; the spec's flexibleVersions is 2+",
    ("DescribeAclsResponse", 2): "aiokafka's v2 is not flexible; the spec's flexibleVersions is 2+",
}


def _kafka_python_classes() -> dict[str, Any]:
    with warnings.catch_warnings():  # kafka-python loads its JSON with a deprecated importlib API
        warnings.simplefilter("ignore", DeprecationWarning)
        import kafka.protocol as kp
        from kafka.protocol.api_message import ApiMessage

        for mod in pkgutil.walk_packages(kp.__path__, "kafka.protocol."):
            if ".old" not in mod.name and "generate_stubs" not in mod.name:
                importlib.import_module(mod.name)
    found: dict[str, Any] = {}

    def walk(cls: Any) -> None:
        for sub in cls.__subclasses__():
            if getattr(sub, "_class_version", 1) is None:
                found[sub.name] = sub
            walk(sub)

    walk(ApiMessage)
    return found


def _aiokafka_classes() -> list[tuple[Any, str]]:
    import aiokafka.protocol as ap
    from aiokafka.protocol.api import RequestStruct, Response
    from aiokafka.protocol.struct import Struct

    for mod in pkgutil.iter_modules(ap.__path__):
        importlib.import_module(f"aiokafka.protocol.{mod.name}")
    out: list[tuple[Any, str]] = []
    seen: set[Any] = set()

    def walk(cls: Any) -> None:
        for sub in cls.__subclasses__():
            walk(sub)
            if sub in seen or not isinstance(getattr(sub, "API_VERSION", None), int):
                continue
            seen.add(sub)
            if issubclass(sub, Response) and sub.API_KEY in RESPONSE_CLASSES:
                out.append((sub, RESPONSE_CLASSES[sub.API_KEY].__name__))
            elif issubclass(sub, RequestStruct) and sub.API_KEY in REQUEST_CLASSES:
                out.append((sub, REQUEST_CLASSES[sub.API_KEY].__name__))

    walk(Struct)
    return out


def _sample(entry: Entry, version: int, seed: int) -> Any:
    obj = build(entry, version, seed, unknown_tags=False)
    if entry.name == "ApiVersionsResponse":
        obj.error_code = 0  # peers read any error response as v0, as Kafka's fallback allows
    return obj


KP = _kafka_python_classes() if ENTRIES else {}
KP_CASES = [
    (e.name, v)
    for e in ENTRIES
    if e.name in KP
    for v in e.versions
    if KP[e.name]._valid_versions[0] <= v <= KP[e.name]._valid_versions[1]
]


def test_kafka_python_covers_the_client_apis() -> None:
    names = {n for n, _ in KP_CASES}
    for api in ("Metadata", "Produce", "Fetch", "JoinGroup", "OffsetCommit", "ApiVersions", "CreateTopics"):
        assert f"{api}Request" in names and f"{api}Response" in names
    assert len(KP_CASES) > 400


@pytest.mark.parametrize("name", sorted({n for n, _ in KP_CASES}))
def test_bytes_equal_kafka_python(name: str) -> None:
    entry, peer = BY_NAME[name], KP[name]
    versions = [v for n, v in KP_CASES if n == name]
    for version in versions:
        for seed in SEEDS:
            ours = entry.cls.encode(_sample(entry, version, seed), version)  # type: ignore[attr-defined]
            theirs = peer.decode(ours, version=version)
            for attr in ("_header", "_min_version", "_max_version"):  # their fast decoder skips __init__
                try:
                    getattr(theirs, attr)
                except AttributeError:
                    setattr(theirs, attr, None)
            assert bytes(theirs.encode(version=version)) == ours, f"{name} v{version} seed {seed}"


AIO = _aiokafka_classes() if ENTRIES else []


def test_aiokafka_cases_exist() -> None:
    assert len(AIO) > 60


@pytest.mark.parametrize("peer_name", sorted({p.__name__ for p, _ in AIO}))
def test_bytes_equal_aiokafka(peer_name: str) -> None:
    for peer, name in AIO:
        if peer.__name__ != peer_name:
            continue
        entry, version = BY_NAME[name], peer.API_VERSION
        if version not in entry.versions:
            continue  # Kafka 4 dropped it (e.g. Produce v0-2)
        if (name, version) in AIOKAFKA_KNOWN_WRONG:
            with pytest.raises(Exception):  # noqa: B017 - the peer is wrong, any failure shows it
                ours = entry.cls.encode(_sample(entry, version, 0), version)  # type: ignore[attr-defined]
                assert bytes(peer.decode(io.BytesIO(ours)).encode()) == ours
            continue
        for seed in SEEDS:
            ours = entry.cls.encode(_sample(entry, version, seed), version)  # type: ignore[attr-defined]
            assert bytes(peer.decode(io.BytesIO(ours)).encode()) == ours, f"{peer_name} seed {seed}"


def test_request_frames_equal_aiokafka_and_kafka_python() -> None:
    from aiokafka.protocol.metadata import MetadataRequest_v1
    from kafka.protocol.metadata import MetadataRequest as KPMetadataRequest

    ours = encode_request(MetadataRequest(topics=[MetadataRequestTopic(name="t1")]), 1, 17, "cid")
    req = MetadataRequest_v1(["t1"])
    from aiokafka.protocol.api import RequestHeader_v1

    aio = RequestHeader_v1(req, correlation_id=17, client_id="cid").encode() + req.encode()
    assert ours[4:] == aio
    topic = KPMetadataRequest.MetadataRequestTopic(name="t1")
    kp = KPMetadataRequest(version=12, topics=[topic], allow_auto_topic_creation=True)
    kp.with_header(correlation_id=17, client_id="cid")
    ours12 = encode_request(MetadataRequest(topics=[MetadataRequestTopic(name="t1")]), 12, 17, "cid")
    assert ours12 == bytes(kp.encode(header=True, framed=True))


def test_consumer_protocol_equals_kafka_python() -> None:
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as KPAssignment
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KPSubscription
    from kafka.protocol.old.consumer_protocol import ConsumerProtocolMemberMetadata_v0

    sub = ConsumerProtocolSubscription(topics=["a", "b"], user_data=b"ud")
    v0 = encode_subscription(sub, 0)
    assert v0 == ConsumerProtocolMemberMetadata_v0(0, ["a", "b"], b"ud").encode()
    for version in range(4):
        ours = encode_subscription(sub, version)
        assert bytes(KPSubscription.decode(ours).encode(version=version)) == ours
        assert decode_subscription(ours) == (version, sub)
    asg = ConsumerProtocolAssignment(assigned_partitions=[TopicPartition(topic="a", partitions=[0, 2])])
    for version in range(4):
        ours = encode_assignment(asg, version)
        assert bytes(KPAssignment.decode(ours).encode(version=version)) == ours
        assert decode_assignment(ours) == (version, asg)

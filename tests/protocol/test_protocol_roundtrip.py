"""Every version of every generated message survives encode -> decode -> encode unchanged."""

from __future__ import annotations

import pytest
from _protocol_builders import BY_NAME, ENTRIES, REQUIRED_APIS, REQUIRED_DATA, Entry, build
from hypothesis import given, settings
from hypothesis import strategies as st

from aiokafka_lite.protocol import API_KEYS, REQUEST_CLASSES, RESPONSE_CLASSES

SEEDS = range(4)


def _roundtrip(entry: Entry, version: int, obj: object) -> bytes:
    data = entry.cls.encode(obj, version)  # type: ignore[attr-defined]
    back = entry.cls.decode(data, version)  # type: ignore[attr-defined]
    assert back == obj, f"{entry.name} v{version}: decoded object differs\n{obj!r}\n{back!r}"
    again = back.encode(version)
    assert again == data, f"{entry.name} v{version}: re-encoding differs"
    view = entry.cls.decode(memoryview(bytearray(data)), version)  # type: ignore[attr-defined]
    assert view == obj
    return data


@pytest.mark.parametrize("name", [e.name for e in ENTRIES])
def test_every_version_round_trips(name: str) -> None:
    entry = BY_NAME[name]
    sizes = []
    for version in entry.versions:
        for seed in SEEDS:
            data = _roundtrip(entry, version, build(entry, version, seed))
            sizes.append(len(data))
        # the all-defaults instance too (nullable defaults, "null" strings, -1 ints ...)
        _roundtrip(entry, version, entry.cls())
    assert max(sizes) > 0


def test_required_apis_are_generated() -> None:
    for api in REQUIRED_APIS:
        key = API_KEYS[api]
        assert REQUEST_CLASSES[key].__name__ == f"{api}Request"
        assert RESPONSE_CLASSES[key].__name__ == f"{api}Response"
    for name in REQUIRED_DATA:
        assert name in BY_NAME


def test_values_are_non_trivial() -> None:
    """The builder really fills nested structures (guards against a round trip of empty messages)."""
    entry = BY_NAME["MetadataResponse"]
    obj = next(
        o for o in (build(entry, 12, seed) for seed in range(50)) if o.topics and o.topics[0].partitions
    )
    assert obj.brokers or obj.topics
    assert len(entry.cls.encode(obj, 12)) > 40


def test_version_ranges_follow_the_spec() -> None:
    """Kafka 4 raised some minimum versions; we keep exactly the spec's validVersions."""
    for entry in ENTRIES:
        assert (entry.cls.MIN_VERSION, entry.cls.MAX_VERSION) == (  # type: ignore[attr-defined]
            entry.msg.valid.lo,
            entry.msg.valid.hi,
        ), entry.name
    produce, fetch = BY_NAME["ProduceRequest"].cls, BY_NAME["FetchRequest"].cls
    assert (produce.MIN_VERSION, produce.MAX_VERSION) == (3, 13)  # type: ignore[attr-defined]
    assert (fetch.MIN_VERSION, fetch.MAX_VERSION) == (4, 18)  # type: ignore[attr-defined]


_REQUIRED = [e for e in ENTRIES if e.name.removesuffix("Request").removesuffix("Response") in REQUIRED_APIS]


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_hypothesis_round_trip_required(data: st.DataObject) -> None:
    entry = data.draw(st.sampled_from(_REQUIRED), label="message")
    version = data.draw(st.sampled_from(list(entry.versions)), label="version")
    seed = data.draw(st.integers(0, 2**32), label="seed")
    _roundtrip(entry, version, build(entry, version, seed))


def test_absent_tagged_struct_default_is_a_fresh_object_per_record() -> None:
    """The decoders build an absent tagged struct's default inline: equal to ``Cls()``, never shared."""
    from aiokafka_lite.protocol.messages.produce import (
        LeaderIdAndEpoch,
        PartitionProduceResponse,
        ProduceResponse,
        TopicProduceResponse,
    )

    sent = ProduceResponse(responses=[TopicProduceResponse(name="t", partition_responses=[
        PartitionProduceResponse(index=i) for i in range(2)])])
    for version in (9, 10, 11):
        got = ProduceResponse.decode(sent.encode(version), version)
        a, b = got.responses[0].partition_responses
        assert a.current_leader == b.current_leader == LeaderIdAndEpoch()
        assert a.current_leader is not b.current_leader
        assert a.record_errors == [] and a.record_errors is not b.record_errors
        assert a.error_message is None and a._unknown_tagged is None
        assert got == sent

"""Hostile input: decoders raise ProtocolError (or UnsupportedVersionError) and nothing else, quickly.

No IndexError, struct.error, MemoryError, UnicodeDecodeError, RecursionError or hang; a 2 GB length prefix is
rejected before anything is allocated.
"""

from __future__ import annotations

import random
import struct
import time

import pytest
from _protocol_builders import ENTRIES, Entry, build
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiokafka_lite.errors import ProtocolError, UnsupportedVersionError
from aiokafka_lite.protocol import (
    decode_assignment,
    decode_request,
    decode_response,
    decode_subscription,
    peek_correlation_id,
)
from aiokafka_lite.protocol._reader import Reader
from aiokafka_lite.protocol.messages.api_versions import ApiVersionsResponse
from aiokafka_lite.protocol.messages.fetch import FetchResponse
from aiokafka_lite.protocol.messages.metadata import MetadataResponse

ALLOWED = (ProtocolError, UnsupportedVersionError)
RESPONSES = [e for e in ENTRIES if e.msg.kind in ("response", "header", "data")]
REQUESTS = [e for e in ENTRIES if e.msg.kind == "request"]


def _decode(entry: Entry, data: bytes, version: int) -> None:
    try:
        entry.cls.decode(data, version)  # type: ignore[attr-defined]
    except ALLOWED:
        pass


def _valid(entry: Entry, version: int, seed: int) -> bytes:
    return entry.cls.encode(build(entry, version, seed), version)  # type: ignore[no-any-return,attr-defined]


@pytest.mark.parametrize("name", [e.name for e in RESPONSES + REQUESTS])
def test_truncations_and_byte_mutations(name: str) -> None:
    """Every proper prefix of a valid encoding is an error (encodings are self-delimiting); mutated bytes
    either decode or raise ProtocolError."""
    entry = next(e for e in ENTRIES if e.name == name)
    rng = random.Random(name)
    for version in entry.versions:
        data = _valid(entry, version, 1)
        cuts = range(len(data)) if len(data) <= 96 else sorted(rng.sample(range(len(data)), 96))
        for cut in cuts:
            with pytest.raises(ProtocolError):
                entry.cls.decode(data[:cut], version)  # type: ignore[attr-defined]
        with pytest.raises(ProtocolError, match="trailing"):
            entry.cls.decode(data + b"\x00", version)  # type: ignore[attr-defined]
        if entry in REQUESTS:
            continue
        for pos in rng.sample(range(len(data)), min(len(data), 24)):
            for byte in (0x00, 0x7F, 0x80, 0xFF):
                mutated = bytearray(data)
                mutated[pos] = byte
                _decode(entry, bytes(mutated), version)


@pytest.mark.parametrize("name", [e.name for e in RESPONSES])
@settings(max_examples=40, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_bytes_and_mutated_encodings(name: str, data: st.DataObject) -> None:
    entry = next(e for e in ENTRIES if e.name == name)
    version = data.draw(st.sampled_from(list(entry.versions)), label="version")
    if data.draw(st.booleans(), label="mutate"):
        raw = bytearray(_valid(entry, version, data.draw(st.integers(0, 1000), label="seed")))
        for _ in range(data.draw(st.integers(1, 4), label="n")):
            pos = data.draw(st.integers(0, max(len(raw) - 1, 0)), label="pos")
            op = data.draw(st.sampled_from(["set", "big", "insert", "delete"]), label="op")
            if op == "set" and raw:
                raw[pos] = data.draw(st.integers(0, 255))
            elif op == "big":
                raw[pos : pos + 4] = b"\x7f\xff\xff\xff"
            elif op == "insert":
                raw[pos:pos] = data.draw(st.binary(min_size=1, max_size=5))
            elif raw:
                del raw[pos]
        blob = bytes(raw)
    else:
        blob = data.draw(st.binary(max_size=300), label="bytes")
    _decode(entry, blob, version)


@settings(max_examples=300, deadline=2000)
@given(api_key=st.sampled_from([0, 1, 3, 18, 11, 14, 8, 9]), version=st.integers(0, 20), frame=st.binary())
def test_decode_response_frames(api_key: int, version: int, frame: bytes) -> None:
    try:
        decode_response(api_key, version, frame)
    except ALLOWED:
        pass
    try:
        peek_correlation_id(frame)
    except ProtocolError:
        pass


@settings(max_examples=200, deadline=2000)
@given(frame=st.binary(max_size=200))
def test_decode_request_and_consumer_protocol_frames(frame: bytes) -> None:
    for fn in (decode_request, decode_subscription, decode_assignment):
        try:
            fn(frame)
        except ALLOWED:
            pass


HUGE_INT32 = struct.pack(">i", 0x7FFFFFF0)


@pytest.mark.parametrize(
    ("cls", "version", "data", "what"),
    [
        # v0: error_code, then an int32 array count of ~2**31
        (ApiVersionsResponse, 0, b"\x00\x00" + HUGE_INT32, "array"),
        # v3: compact array count as a 5-byte uvarint near 2**32
        (ApiVersionsResponse, 3, b"\x00\x00" + b"\xff\xff\xff\xff\x0f", "array"),
        # uvarint longer than 5 bytes
        (ApiVersionsResponse, 3, b"\x00\x00" + b"\xff" * 12, "varint"),
        # Metadata v1: brokers[1] with a host string of length 32767 but 3 bytes left
        (MetadataResponse, 1, b"\x00\x00\x00\x01" + b"\x00\x00\x00\x01" + b"\x7f\xffabc", "string"),
        # Fetch v4: records byte length 2 GB
        (
            FetchResponse,
            4,
            b"\x00\x00\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\x00\x00\x00\x01"
            + b"\x00" * 4 + b"\x00\x00" + b"\x00" * 16 + b"\x00\x00\x00\x00" + HUGE_INT32,
            "bytes",
        ),
    ],
)  # fmt: skip
def test_huge_length_prefix_is_rejected_without_allocating(
    cls: type, version: int, data: bytes, what: str
) -> None:
    start = time.perf_counter()
    with pytest.raises(ProtocolError) as info:
        cls.decode(data, version)  # type: ignore[attr-defined]
    assert time.perf_counter() - start < 0.1
    assert what in str(info.value)


def test_reader_errors_are_protocol_errors() -> None:
    r = Reader(b"\x00\x05ab")
    with pytest.raises(ProtocolError, match="truncated string"):
        r.string()
    r = Reader(b"\xff\xff\xff\xff\xff\x01")
    with pytest.raises(ProtocolError):
        r.uvarint()
    r = Reader(b"\x7f\xff\xff\xff")
    with pytest.raises(ProtocolError, match="bytes remain"):
        r.array_len()
    with pytest.raises(ProtocolError):
        Reader(b"\x01").int32()
    with pytest.raises(ProtocolError):
        Reader(b"\x00\x02\xff\xfe").string()  # invalid UTF-8


def test_unsupported_versions() -> None:
    with pytest.raises(UnsupportedVersionError):
        MetadataResponse.decode(b"", 99)
    with pytest.raises(UnsupportedVersionError):
        MetadataResponse().encode(-1)
    with pytest.raises(UnsupportedVersionError):
        decode_response(9999, 0, b"\x00\x00\x00\x01")

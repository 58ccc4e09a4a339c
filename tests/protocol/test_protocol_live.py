"""The codecs against real brokers (Tansu and noida-db) over a plain blocking socket: every version both
sides support of a few read-only APIs must round-trip through the broker and decode cleanly."""

from __future__ import annotations

import socket
import struct
from typing import Any

from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.protocol import API_KEYS, REQUEST_CLASSES, decode_response, encode_request
from aiokafka_lite.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from aiokafka_lite.protocol.messages.find_coordinator import FindCoordinatorRequest
from aiokafka_lite.protocol.messages.list_groups import ListGroupsRequest
from aiokafka_lite.protocol.messages.metadata import MetadataRequest, MetadataRequestTopic


class Conn:
    def __init__(self, broker: EmbeddedBroker) -> None:
        self.sock = socket.create_connection((broker.host, broker.port), timeout=10)
        self.cid = 0

    def call(self, request: Any, version: int) -> Any:
        self.cid += 1
        self.sock.sendall(encode_request(request, version, self.cid, "aiokafka-lite-protocol-test"))
        (size,) = struct.unpack(">i", self._recv(4))
        cid, response = decode_response(request.API_KEY, version, self._recv(size))
        assert cid == self.cid
        return response

    def _recv(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            assert chunk, "broker closed the connection"
            buf += chunk
        return bytes(buf)

    def close(self) -> None:
        self.sock.close()


def _common(ranges: dict[int, tuple[int, int]], api_key: int) -> range:
    lo, hi = ranges[api_key]
    cls = REQUEST_CLASSES[api_key]
    return range(max(lo, cls.MIN_VERSION), min(hi, cls.MAX_VERSION) + 1)


def test_api_versions_and_metadata_every_version(broker: EmbeddedBroker, new_topic: Any) -> None:
    conn = Conn(broker)
    try:
        first = conn.call(
            ApiVersionsRequest(client_software_name="aiokafka-lite", client_software_version="0.1.0"), 3
        )
        assert isinstance(first, ApiVersionsResponse) and first.error_code == 0
        ranges = {k.api_key: (k.min_version, k.max_version) for k in first.api_keys}
        assert API_KEYS["Metadata"] in ranges
        for version in _common(ranges, API_KEYS["ApiVersions"]):
            # v3+ brokers validate the software name/version (empty is INVALID_REQUEST, as in Kafka)
            named = ApiVersionsRequest(client_software_name="t", client_software_version="1")
            resp = conn.call(named, version)
            assert resp.error_code == 0 and len(resp.api_keys) == len(first.api_keys)

        topic = new_topic()
        for version in _common(ranges, API_KEYS["Metadata"]):
            req = MetadataRequest(topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=True)
            if version < 4:
                req.allow_auto_topic_creation = True  # the only value those versions can carry
            md = conn.call(req, version)
            assert md.brokers and md.brokers[0].port == broker.port
            assert [t.name for t in md.topics] == [topic]
        every = conn.call(MetadataRequest(topics=None), max(_common(ranges, API_KEYS["Metadata"])))
        assert topic in {t.name for t in every.topics}

        for version in _common(ranges, API_KEYS["ListGroups"]):
            assert conn.call(ListGroupsRequest(), version).error_code == 0
        for version in _common(ranges, API_KEYS["FindCoordinator"]):
            # Key is v0-3 and CoordinatorKeys v4+, neither ignorable: send exactly one of them
            if version < 4:
                req = FindCoordinatorRequest(key="g")
            else:
                req = FindCoordinatorRequest(coordinator_keys=["g"])
            resp = conn.call(req, version)
            port = resp.port if version < 4 else resp.coordinators[0].port
            assert port == broker.port
    finally:
        conn.close()

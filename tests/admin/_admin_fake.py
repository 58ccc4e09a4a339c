"""An Admin on the scripted fake client of tests/producer/_fake_broker.py, for the APIs no broker here
implements (ACLs, WriteTxnMarkers): each request becomes a Call the test inspects and answers.

``spec_bytes`` helpers write a request body by hand from Kafka's JSON spec (compact strings and arrays of
the flexible versions), so a test compares our encoder's bytes with the spec's, not with itself.
"""

from __future__ import annotations

import asyncio
import struct
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "producer"))

from _fake_broker import Call, FakeClient

from aiokafka_lite import Admin, TopicPartition


class _Cluster:
    def __init__(self, leaders: dict[TopicPartition, int]) -> None:
        self.leaders = leaders
        self.need_update = False
        self.controller_id = min(leaders.values())

    def leader_for(self, tp: TopicPartition) -> int | None:
        return self.leaders.get(tp)

    def brokers(self) -> list[Any]:
        from aiokafka_lite.structs import BrokerInfo

        return [BrokerInfo(n, "127.0.0.1", 9000 + n, None) for n in sorted(set(self.leaders.values()))]

    def broker(self, node: int) -> Any:
        return next((b for b in self.brokers() if b.node_id == node), None)

    def topic_error(self, topic: str) -> int:
        return 0

    def partitions_for(self, topic: str) -> set[int]:
        return {tp.partition for tp in self.leaders if tp.topic == topic}


class AdminFakeClient(FakeClient):
    """FakeClient plus the metadata the Admin's routing reads."""

    def __init__(self, leaders: dict[TopicPartition, int]) -> None:
        super().__init__(leaders)
        self.cluster = _Cluster(dict(leaders))

    async def refresh_metadata(self, topics: Iterable[str] | None = None) -> Any:
        self.metadata_requests += 1
        return self.cluster

    async def close(self) -> None:
        pass


def fake_admin(leaders: dict[TopicPartition, int], **settings: Any) -> tuple[Admin, AdminFakeClient]:
    admin = Admin(bootstrap_servers="127.0.0.1:1", **settings)
    client = AdminFakeClient(leaders)
    admin._client = client
    return admin, client


async def next_call(client: AdminFakeClient, kind: type, spins: int = 200) -> Call:
    for _ in range(spins):
        call = client.take(kind)
        if call is not None:
            return call
        await asyncio.sleep(0)
    raise AssertionError(f"no {kind.__name__} was sent; calls: {client.calls}")


# -- the spec's encodings, by hand ---------------------------------------------------------------------


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def uvarint(v: int) -> bytes:
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        if v:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def cstr(s: str | None) -> bytes:
    """COMPACT_(NULLABLE_)STRING: length + 1 as an unsigned varint (0 for null), then UTF-8."""
    if s is None:
        return uvarint(0)
    raw = s.encode()
    return uvarint(len(raw) + 1) + raw


def carray(items: list[bytes]) -> bytes:
    """COMPACT_ARRAY: count + 1 as an unsigned varint, then the items."""
    return uvarint(len(items) + 1) + b"".join(items)


NO_TAGS = uvarint(0)

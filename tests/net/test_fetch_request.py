"""The one Fetch builder (net/fetch_request.py), sans-I/O with the real codec: topic ids from v13 only when
every topic's id is known, sessionless defaults, forgotten partitions, and what goes on the wire."""

from __future__ import annotations

import uuid

from aiokafka_lite.net.fetch_request import FetchAt, build_fetch, fetch_version
from aiokafka_lite.protocol.messages.fetch import FetchRequest
from aiokafka_lite.structs import TopicPartition as TP

IDS = {"a": uuid.uuid4(), "b": uuid.uuid4()}


def test_version_falls_back_to_names_when_an_id_is_unknown() -> None:
    assert fetch_version(16, [IDS["a"], IDS["b"]]) == 16
    assert fetch_version(16, [IDS["a"], None]) == 12
    assert fetch_version(16, [uuid.UUID(int=0)]) == 12
    assert fetch_version(11, [None]) == 11


def test_request_round_trips_at_both_kinds_of_version() -> None:
    parts = {TP("a", 0): FetchAt(5, 100, current_leader_epoch=3, last_fetched_epoch=2),
             TP("a", 1): FetchAt(7, 50), TP("b", 0): FetchAt(0, 10)}
    for version in (12, 16):
        req = build_fetch(version, parts, IDS.get, max_wait_ms=10, min_bytes=1, max_bytes=1000, isolation=1,
                          forgotten=[TP("b", 3)])
        back = FetchRequest.decode(bytes(req.encode(version)), version)
        assert (back.session_id, back.session_epoch, back.isolation_level) == (0, -1, 1)
        got = {(t.topic if version < 13 else t.topic_id, p.partition): (p.fetch_offset, p.partition_max_bytes)
               for t in back.topics for p in t.partitions}
        key = (lambda n: n) if version < 13 else IDS.__getitem__
        assert got == {(key("a"), 0): (5, 100), (key("a"), 1): (7, 50), (key("b"), 0): (0, 10)}
        forgotten = [(f.topic if version < 13 else f.topic_id, f.partitions)
                     for f in back.forgotten_topics_data]
        assert forgotten == [(key("b"), [3])]

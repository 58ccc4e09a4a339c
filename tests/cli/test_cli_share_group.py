"""``aiokafka-lite consume --share-group NAME``: a share group member (KIP-932) on librdkafka's mock cluster
(the only broker here with ShareGroupHeartbeat and ShareFetch), run in-process through main(argv)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _cli_support import Result
from confluent_kafka import Producer

SHARE_GROUP_HEARTBEAT, SHARE_FETCH, SHARE_ACKNOWLEDGE = 76, 78, 79


def test_consume_as_a_share_group_member(cli: Callable[..., Result], mock_cluster: Any,
                                         new_topic: Callable[..., str]) -> None:
    mc = mock_cluster(1)
    mc.set_share_groups(heartbeat_interval_ms=300, auto_offset_reset="earliest")
    topic, group = new_topic(), new_topic("sg")
    mc.create_topic(topic, 3, 1)
    p = Producer({"bootstrap.servers": mc.bootstrap})
    for i in range(30):
        p.produce(topic, b"v%d" % i, partition=i % 3)
    assert p.flush(10) == 0
    mc.start_request_tracking()
    r = cli("consume", topic, "-b", mc.bootstrap, "--share-group", group, "-n", "30", "-q")
    assert r.code == 0, r.err
    assert sorted(r.out.splitlines()) == sorted(f"v{i}" for i in range(30))
    keys = {req.api_key for req in mc.requests()}
    assert {SHARE_GROUP_HEARTBEAT, SHARE_FETCH, SHARE_ACKNOWLEDGE} <= keys
    # What was printed was accepted: the group hands out only what came after.
    for i in range(30, 33):
        p.produce(topic, b"v%d" % i, partition=i % 3)
    assert p.flush(10) == 0
    p.close()  # before the mock cluster stops, so it logs nothing into a later test's stderr
    again = cli("consume", topic, "-b", mc.bootstrap, "--share-group", group, "-n", "3", "-q")
    assert again.code == 0, again.err
    assert sorted(again.out.splitlines()) == ["v30", "v31", "v32"]


def test_share_group_refuses_group_options(cli: Callable[..., Result]) -> None:
    r = cli("consume", "t", "-b", "127.0.0.1:1", "--share-group", "q", "-g", "g")
    assert r.code == 2 and "--group does not apply to --share-group" in r.err
    r = cli("consume", "t", "-b", "127.0.0.1:1", "--share-group", "q", "-X", "auto.offset.reset=earliest")
    assert r.code != 0 and "auto_offset_reset" in r.err

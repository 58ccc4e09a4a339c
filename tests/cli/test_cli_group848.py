"""``aiokafka-lite consume --group-protocol consumer``: a KIP-848 group member on librdkafka's mock cluster
(the only broker here with ConsumerGroupHeartbeat), run in-process through main(argv)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _cli_support import Result
from confluent_kafka import Producer

JOIN_GROUP, CONSUMER_GROUP_HEARTBEAT = 11, 68


def test_consume_joins_a_consumer_protocol_group(cli: Callable[..., Result], mock_cluster: Any,
                                                 new_topic: Callable[..., str]) -> None:
    mc = mock_cluster(1)
    mc.set_consumer_group_timing(heartbeat_interval_ms=300)
    topic, group = new_topic(), new_topic("g")
    mc.create_topic(topic, 3, 1)
    p = Producer({"bootstrap.servers": mc.bootstrap})
    for i in range(30):
        p.produce(topic, b"v%d" % i, partition=i % 3)
    assert p.flush(10) == 0
    mc.start_request_tracking()
    r = cli("consume", topic, "-b", mc.bootstrap, "-g", group, "--group-protocol", "consumer",
            "--from-beginning", "-n", "30", "-q")
    assert r.code == 0, r.err
    assert sorted(r.out.splitlines()) == sorted(f"v{i}" for i in range(30))
    keys = {req.api_key for req in mc.requests()}
    assert CONSUMER_GROUP_HEARTBEAT in keys and JOIN_GROUP not in keys
    # What was printed was committed with the member's epoch: the same group reads nothing again.
    for i in range(30, 33):
        p.produce(topic, b"v%d" % i, partition=i % 3)
    assert p.flush(10) == 0
    p.close()  # before the mock cluster stops, so it logs nothing into a later test's stderr
    again = cli("consume", topic, "-b", mc.bootstrap, "-g", group, "--group-protocol", "consumer",
                "-n", "3", "-q")
    assert again.code == 0, again.err
    assert sorted(again.out.splitlines()) == ["v30", "v31", "v32"]


def test_group_protocol_needs_a_group(cli: Callable[..., Result]) -> None:
    r = cli("consume", "t", "-b", "127.0.0.1:1", "--group-protocol", "consumer")
    assert r.code == 2 and "--group-protocol needs --group" in r.err

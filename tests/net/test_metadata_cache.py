"""ClusterMetadata built from Metadata responses made by hand: errors, leaderless partitions, ids."""

from __future__ import annotations

import uuid

import pytest

from aiokafka_lite.net import ClusterMetadata, ExponentialBackoff
from aiokafka_lite.protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from aiokafka_lite.structs import BrokerInfo, TopicPartition

TID = uuid.uuid4()


def _response(**changes: object) -> MetadataResponse:
    parts = [
        MetadataResponsePartition(
            partition_index=0, leader_id=1, leader_epoch=7, replica_nodes=[1, 2], isr_nodes=[1]
        ),
        MetadataResponsePartition(
            error_code=5, partition_index=1, leader_id=-1, replica_nodes=[2], isr_nodes=[]
        ),
    ]
    values: dict[str, object] = {
        "brokers": [
            MetadataResponseBroker(node_id=1, host="127.0.0.1", port=9001, rack="r1"),
            MetadataResponseBroker(node_id=2, host="127.0.0.1", port=9002),
        ],
        "cluster_id": "c1",
        "controller_id": 2,
        "topics": [
            MetadataResponseTopic(name="t", topic_id=TID, partitions=parts),
            MetadataResponseTopic(name="__consumer_offsets", is_internal=True, partitions=parts[:1]),
            MetadataResponseTopic(error_code=3, name="missing"),
            MetadataResponseTopic(error_code=29, name="secret"),
        ],
    }
    values.update(changes)
    return MetadataResponse(**values)  # type: ignore[arg-type]


def test_update_and_queries() -> None:
    cluster = ClusterMetadata()
    assert cluster.version == 0 and cluster.partitions_for("t") is None
    cluster.update(_response())
    assert cluster.version == 1 and cluster.cluster_id == "c1" and cluster.controller_id == 2
    assert cluster.broker(1) == BrokerInfo(1, "127.0.0.1", 9001, "r1")
    assert {b.node_id for b in cluster.brokers()} == {1, 2}
    assert cluster.partitions_for("t") == {0, 1}
    assert cluster.available_partitions_for("t") == {0}
    assert cluster.leader_for(TopicPartition("t", 0)) == 1
    assert cluster.leader_for(TopicPartition("t", 1)) == -1  # known, leaderless
    assert cluster.leader_for(TopicPartition("t", 9)) is None  # unknown
    assert cluster.leader_epoch(TopicPartition("t", 0)) == 7
    info = cluster.partition_info(TopicPartition("t", 0))
    assert info is not None and info.replicas == (1, 2) and info.isr == (1,)
    assert cluster.partitions_for_broker(1) == {
        TopicPartition("t", 0),
        TopicPartition("__consumer_offsets", 0),
    }
    assert cluster.topic_id("t") == TID and cluster.topic_name(TID) == "t"
    assert cluster.topics() == {"t", "__consumer_offsets"}
    assert cluster.topics(exclude_internal=True) == {"t"}
    assert cluster.topic_error("missing") == 3 and cluster.partitions_for("missing") is None
    assert cluster.unauthorized_topics == {"secret"}


def test_update_replaces_everything() -> None:
    cluster = ClusterMetadata()
    cluster.update(_response())
    cluster.add_broker(BrokerInfo(7, "127.0.0.1", 9007))
    assert cluster.broker(7) is not None
    cluster.mark_stale()
    assert cluster.need_update
    cluster.update(
        _response(topics=[], controller_id=-1, brokers=[MetadataResponseBroker(node_id=1, host="h", port=1)])
    )
    assert not cluster.need_update
    assert cluster.topics() == set() and cluster.leader_for(TopicPartition("t", 0)) is None
    assert cluster.controller_id is None and cluster.broker(2) is None
    assert cluster.broker(7) is not None  # a coordinator learned elsewhere survives until metadata lists it


@pytest.mark.parametrize(
    ("failures", "low", "high"),
    [(0, 0, 0), (1, 40, 60), (2, 80, 120), (3, 160, 240), (4, 320, 480), (5, 320, 480), (100, 320, 480)],
)
def test_backoff_doubles_with_jitter(failures: int, low: float, high: float) -> None:
    backoff = ExponentialBackoff(50, 400)
    for _ in range(50):
        assert low / 1000 <= backoff.delay(failures) <= high / 1000

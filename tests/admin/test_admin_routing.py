"""Routing on a 3-broker cluster (librdkafka's mock cluster, which tracks which broker got each request):
ListOffsets goes to each partition's leader, OffsetFetch to the group's coordinator, and a broker
that says it is no longer the leader sends the request round again with fresh metadata.
(The mock has no CreateTopics/DescribeGroups, so controller routing is exercised on Tansu and noida-db.)
"""

from __future__ import annotations

from collections.abc import Callable

from aiokafka_lite import Admin, TopicPartition, errors

LIST_OFFSETS, OFFSET_FETCH = 2, 9
#: librdkafka's mock mis-encodes flexible Metadata (v9+: one trailing byte); v8 carries all we read.
CAPS = {"Metadata": 8}


async def test_list_offsets_goes_to_each_leader(mock_cluster: Callable[..., object],
                                                new_topic: Callable[..., str]) -> None:
    mc = mock_cluster(3)
    topic = new_topic()
    mc.create_topic(topic, partitions=3)  # type: ignore[attr-defined]
    for partition, leader in ((0, 3), (1, 1), (2, 2)):
        mc.set_leader(topic, partition, leader)  # type: ignore[attr-defined]
    tps = [TopicPartition(topic, p) for p in range(3)]
    async with Admin(bootstrap_servers=mc.bootstrap, api_version_caps=CAPS) as admin:  # type: ignore[attr-defined]
        mc.start_request_tracking()  # type: ignore[attr-defined]
        result = await admin.list_offsets({tp: "latest" for tp in tps})
        assert {tp: r.offset for tp, r in result.items()} == {tp: 0 for tp in tps}
        sent_to = sorted(r.broker_id for r in mc.requests() if r.api_key == LIST_OFFSETS)  # type: ignore[attr-defined]
        assert sent_to == [1, 2, 3]  # one request per leader, each naming only its own partitions


async def test_not_leader_reroutes_with_fresh_metadata(mock_cluster: Callable[..., object],
                                                       new_topic: Callable[..., str]) -> None:
    mc = mock_cluster(3)
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    mc.set_leader(topic, 0, 1)  # type: ignore[attr-defined]
    async with Admin(bootstrap_servers=mc.bootstrap, retry_backoff_ms=20,
                     api_version_caps=CAPS) as admin:  # type: ignore[attr-defined]
        await admin.list_offsets({tp: "earliest"})
        mc.set_leader(topic, 0, 2)  # type: ignore[attr-defined]
        mc.push_request_errors(LIST_OFFSETS, [errors.NotLeaderOrFollowerError])  # type: ignore[attr-defined]
        mc.start_request_tracking()  # type: ignore[attr-defined]
        result = await admin.list_offsets({tp: "latest"})
        assert result[tp].offset == 0
        sent_to = [r.broker_id for r in mc.requests() if r.api_key == LIST_OFFSETS]  # type: ignore[attr-defined]
        assert sent_to == [1, 2]  # the stale leader said no; the new one answered


async def test_offset_fetch_goes_to_the_coordinator(mock_cluster: Callable[..., object],
                                                    new_topic: Callable[..., str]) -> None:
    mc = mock_cluster(3)
    group, topic = new_topic("group"), new_topic()
    mc.create_topic(topic, partitions=1)  # type: ignore[attr-defined]
    mc.set_coordinator("group", group, 3)  # type: ignore[attr-defined]
    async with Admin(bootstrap_servers=mc.bootstrap, api_version_caps=CAPS) as admin:  # type: ignore[attr-defined]
        mc.start_request_tracking()  # type: ignore[attr-defined]
        # Named partitions: asked for "all", the mock answers a null topic array (not valid Kafka).
        assert await admin.list_consumer_group_offsets(group, [TopicPartition(topic, 0)]) == {}
        sent_to = [r.broker_id for r in mc.requests() if r.api_key == OFFSET_FETCH]  # type: ignore[attr-defined]
        assert sent_to == [3]

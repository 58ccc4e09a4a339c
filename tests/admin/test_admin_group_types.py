"""Group types in the admin client: ListGroups v5's GroupType, and describe_groups for both protocols.

No broker here both runs KIP-848 groups and answers ConsumerGroupDescribe: librdkafka's mock has neither
ListGroups, DescribeGroups nor ConsumerGroupDescribe (rdkafka_mock_handlers.c), and Tansu 0.6 offers
ConsumerGroupDescribe v0 without KIP-848 groups. So the KIP-848 description is checked from a decoded
answer, and the brokers prove that classic groups stay classic and Tansu's answer is not taken for one."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from aiokafka_lite.admin import Admin, NewTopic
from aiokafka_lite.admin._groups import _is_consumer_group, consumer_group_description
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.protocol.messages.consumer_group_describe import (
    Assignment,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribedGroup,
    Member,
    TopicPartitions,
)
from aiokafka_lite.structs import TopicPartition as TP


async def test_classic_groups_are_listed_and_described_as_classic(broker: EmbeddedBroker,
                                                                  new_topic: Callable[..., str]) -> None:
    topic, group = new_topic(), new_topic("g")
    async with Admin(bootstrap_servers=broker.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 1, 1)])
        c = Consumer(bootstrap_servers=broker.bootstrap, group_id=group)
        await c.start()
        c.assign([TP(topic, 0)])
        await c.commit({TP(topic, 0): 0})  # a group made by a commit alone
        await c.stop()
        (listing,) = [g for g in await admin.list_groups() if g.group_id == group]
        # Tansu answers ListGroups v5 with GroupType; noida-db 0.2.3 offers v4, which has none.
        assert listing.group_type == ("classic" if broker.kind == "tansu" else "")
        described = await admin.describe_groups([group, new_topic("unknown")])
        assert [d.group_type for d in described] == ["classic", "classic"]
        assert all(d.group_epoch == -1 for d in described)


async def test_tansu_consumer_group_describe_answers_are_not_taken_for_kip848_groups(
        tansu: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    async with Admin(bootstrap_servers=tansu.bootstrap) as admin:
        node = await admin.client.find_coordinator("any", 0)
        version = await admin._version(node, ConsumerGroupDescribeRequest)
        answer = await admin._send(node, ConsumerGroupDescribeRequest(group_ids=[new_topic("none")]),
                                   version=version)
        (g,) = answer.groups
        assert g.error_code == 0 and g.group_epoch <= 0 and not g.members  # no error, but no such group
        assert not _is_consumer_group(g)


def test_a_consumer_group_describe_answer_becomes_a_group_description() -> None:
    tid = uuid.uuid4()
    body = ConsumerGroupDescribeResponse(groups=[DescribedGroup(
        group_id="g", group_state="Stable", group_epoch=7, assignment_epoch=7, assignor_name="uniform",
        members=[Member(member_id="m1", instance_id="i1", member_epoch=7, client_id="c", client_host="/h",
                        subscribed_topic_names=["t"], assignment=Assignment(topic_partitions=[
                            TopicPartitions(topic_id=tid, topic_name="t", partitions=[1, 0])])),
                 Member(member_id="m2", member_epoch=6, subscribed_topic_regex="^t.*")])])
    data = body.encode(0)
    (g,) = ConsumerGroupDescribeResponse.decode(data, 0).groups
    assert _is_consumer_group(g)
    d = consumer_group_description(g)
    assert (d.group_id, d.state, d.protocol_type, d.protocol, d.group_type, d.group_epoch) == (
        "g", "Stable", "consumer", "uniform", "consumer", 7)
    m1, m2 = d.members
    assert (m1.member_id, m1.group_instance_id, m1.member_epoch, m1.client_id) == ("m1", "i1", 7, "c")
    assert m1.assignment == [TP("t", 0), TP("t", 1)] and m1.subscription == ["t"]
    assert m2.subscription == ["^t.*"] and m2.assignment == []
    assert d.as_dict()["members"][0]["assignment"] == [["t", 0], ["t", 1]]

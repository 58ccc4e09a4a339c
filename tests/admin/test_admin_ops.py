"""Admin II on real brokers: what each broker really does with the APIs it advertises (probed
2026-11-27 with Tansu 0.6.0 and noida-db 0.2.3; docs/admin.md has the table).

- Group offsets altered, read back, deleted (OffsetDelete: noida-db only; Tansu does not offer it, and
  drops commit metadata).
- An open transaction listed, described and ended by fencing its producer (noida-db; Tansu offers no
  ListTransactions/DescribeTransactions). noida-db offers DescribeProducers but reports no active
  producers even during a transaction, and offers no WriteTxnMarkers, so abort_transaction is proven
  on the fake client (test_admin_wire.py).
- Legacy AlterConfigs replaces the whole set (noida-db; Tansu does not offer it).
- ACLs on noida-db: no authorizer, so every ACL call fails with SecurityDisabledError naming the ACL.
  Tansu keeps no ACL and lets a denied principal produce. No broker here enforces ACLs, so a denied
  produce cannot be shown.
- DescribeLogDirs (noida-db; Tansu does not offer it).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from aiokafka_lite import Admin, NewTopic, Producer, TopicPartition, errors
from aiokafka_lite.admin import AclBinding, AclBindingFilter, ConfigResource
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.structs import OffsetAndMetadata


async def test_group_offsets_altered_then_read_back(broker: EmbeddedBroker,
                                                    new_topic: Callable[..., str]) -> None:
    topic, group = new_topic(), new_topic("group")
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with Admin(bootstrap_servers=broker.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 2, 1)])
        await admin.alter_consumer_group_offsets(group, {tp0: 5, tp1: OffsetAndMetadata(7, "note")})
        read = await admin.list_consumer_group_offsets(group)
        assert {tp: om.offset for tp, om in read.items()} == {tp0: 5, tp1: 7}
        await admin.alter_consumer_group_offsets(group, {tp0: 2})  # a reset: only tp0 moves
        read = await admin.list_consumer_group_offsets(group)
        assert {tp: om.offset for tp, om in read.items()} == {tp0: 2, tp1: 7}
        with pytest.raises(errors.IllegalArgumentError, match=rf"{topic}\[0\]"):
            await admin.alter_consumer_group_offsets(group, {tp0: -3})


async def test_delete_consumer_group_offsets(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic, group = new_topic(), new_topic("group")
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 2, 1)])
        await admin.alter_consumer_group_offsets(group, {tp0: 3, tp1: OffsetAndMetadata(4, "note")})
        await admin.delete_consumer_group_offsets(group, [tp0])
        # (Tansu drops commit metadata; noida-db keeps it.)
        assert await admin.list_consumer_group_offsets(group) == {tp1: OffsetAndMetadata(4, "note")}


async def test_remove_members_of_an_unknown_static_member(broker: EmbeddedBroker,
                                                          new_topic: Callable[..., str]) -> None:
    group = new_topic("group")
    async with Admin(bootstrap_servers=broker.bootstrap) as admin:
        assert await admin.remove_members_from_consumer_group(group) == []  # no members: nothing to do
        with pytest.raises(errors.UnknownMemberIdError, match=group):
            await admin.remove_members_from_consumer_group(group, ["nobody"])


async def test_open_transaction_listed_described_and_fenced(noida: EmbeddedBroker,
                                                            new_topic: Callable[..., str]) -> None:
    topic, tid = new_topic(), new_topic("txn")
    tp = TopicPartition(topic, 0)
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 1, 1)])
        producer = Producer(bootstrap_servers=noida.bootstrap, transactional_id=tid)
        await producer.start()
        try:
            await producer.begin_transaction()
            await (await producer.send(topic, b"never committed", partition=0))
            ongoing = await admin.list_transactions(states=["ongoing"])
            listed = [t for t in ongoing if t.transactional_id == tid]
            assert [t.state for t in listed] == ["ongoing"]
            described = (await admin.describe_transactions([tid]))[tid]
            assert (described.state, described.partitions) == ("ongoing", (tp,))
            assert described.producer_id == listed[0].producer_id and described.transaction_start_time_ms > 0
            stable = await admin.list_offsets({tp: "latest"}, isolation_level="read_committed")
            assert stable[tp].offset == 0  # the open transaction holds the last stable offset back
            # noida-db's DescribeProducers knows no producers, even this one (aiokafka's neither).
            assert await admin.describe_producers([tp]) == {tp: []}

            fenced = (await admin.fence_producers([tid]))[tid]
            assert (fenced.producer_id, fenced.producer_epoch) == (described.producer_id,
                                                                   described.producer_epoch + 1)
            after = (await admin.describe_transactions([tid]))[tid]
            assert after.state != "ongoing" and after.partitions == ()
            stable = await admin.list_offsets({tp: "latest"}, isolation_level="read_committed")
            assert stable[tp].offset == 2  # the record and its abort marker
            with pytest.raises(errors.ProducerFenced):
                await producer.commit_transaction()
        finally:
            await producer.stop()
        assert tid not in {t.transactional_id for t in await admin.list_transactions(states=["ongoing"])}
        with pytest.raises(errors.TransactionalIdNotFoundError, match="never-used"):
            await admin.describe_transactions([new_topic("never-used")])
        with pytest.raises(errors.IllegalArgumentError, match="unknown transaction state 'open'"):
            await admin.list_transactions(states=["open"])


async def test_legacy_alter_configs_replaces_the_whole_set(noida: EmbeddedBroker,
                                                           new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    resource = ConfigResource("topic", topic)
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"segment.ms": "7200000"})])
        await admin.alter_configs({resource: {"retention.ms": "3600000"}})
        configs = (await admin.describe_configs([resource]))[resource]
        assert configs["retention.ms"].value == "3600000" and not configs["retention.ms"].is_default
        assert configs["segment.ms"].is_default  # left out, so back to its default
        await admin.incremental_alter_configs({resource: {"segment.ms": "7200000"}})
        configs = (await admin.describe_configs([resource]))[resource]
        assert configs["retention.ms"].value == "3600000" and configs["segment.ms"].value == "7200000"
        with pytest.raises(errors.UnknownTopicOrPartitionError, match="missing"):
            await admin.alter_configs({ConfigResource("topic", new_topic("missing")): {"retention.ms": "1"}})


async def test_acls_without_an_authorizer_name_the_acl(noida: EmbeddedBroker) -> None:
    binding = AclBinding("topic", "events", "User:alice", "read")
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        with pytest.raises(errors.SecurityDisabledError, match=r"User:alice allow read on topic events"):
            await admin.create_acls([binding])
        with pytest.raises(errors.SecurityDisabledError):
            await admin.describe_acls()
        with pytest.raises(errors.SecurityDisabledError, match="User:alice"):
            await admin.delete_acls([AclBindingFilter(principal="User:alice")])


async def test_describe_log_dirs(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 2, 1)])
        async with Producer(bootstrap_servers=noida.bootstrap) as producer:
            await (await producer.send(topic, b"x" * 1000, partition=1))
        dirs = await admin.describe_log_dirs()
        (node,) = dirs
        (where,) = dirs[node].values()
        assert where.error is None
        assert where.replicas[TopicPartition(topic, 1)].size > where.replicas[TopicPartition(topic, 0)].size


async def test_static_member_removed_on_its_behalf(noida: EmbeddedBroker,
                                                   new_topic: Callable[..., str]) -> None:
    from aiokafka_lite import Consumer

    topic, group = new_topic(), new_topic("group")
    tp = TopicPartition(topic, 0)
    async with Admin(bootstrap_servers=noida.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 1, 1)])
        async with Consumer(topic, bootstrap_servers=noida.bootstrap, group_id=group,
                            group_instance_id="worker-1", session_timeout_ms=30_000,
                            enable_auto_commit=False) as consumer:
            for _ in range(100):
                await consumer.poll(timeout_ms=100)
                if consumer.assignment():
                    break
            assert consumer.assignment() == {tp}
            (before,) = await admin.describe_consumer_groups([group])
            (member,) = before.members
            assert member.group_instance_id == "worker-1"
            with pytest.raises(errors.KafkaError, match=group):
                await admin.alter_consumer_group_offsets(group, {tp: 0})  # an active member owns it
            assert await admin.remove_members_from_consumer_group(group, ["worker-1"]) == [member.member_id]
            (after,) = await admin.describe_consumer_groups([group])
            assert member.member_id not in {m.member_id for m in after.members}


async def test_tansu_neither_keeps_nor_enforces_acls(tansu: EmbeddedBroker,
                                                      new_topic: Callable[..., str]) -> None:
    """Why no test shows a produce denied by an ACL: Tansu answers CreateAcls with a null result array
    (which the spec does not allow), lists no ACL afterwards and lets the denied principal produce."""
    topic = new_topic()
    deny = AclBinding("topic", topic, "User:ANONYMOUS", "write", permission="deny")
    async with Admin(bootstrap_servers=tansu.bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 1, 1)])
        with pytest.raises(errors.ProtocolError, match=r"CreateAclsResponse\.results is null"):
            await admin.create_acls([deny])
        assert await admin.describe_acls() == []
    async with Producer(bootstrap_servers=tansu.bootstrap) as producer:
        written = await (await producer.send(topic, b"not denied", partition=0))
    assert written.offset == 0

"""The operators' admin commands (issue 29) end to end: acls, users, transactions, producers, configs
set/delete, groups delete-offsets and reset-offsets --json, log-dirs. Each runs against the broker that
implements its API (noida-db: transactions, OffsetDelete, AlterConfigs, DescribeLogDirs; Tansu:
AlterUserScramCredentials) or shows the broker's refusal as one clear line (ACLs: noida-db has no
authorizer; WriteTxnMarkers: no broker here offers it)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest
from _cli_support import Result

from aiokafka_lite import Admin, Producer, TopicPartition
from aiokafka_lite.embedded import EmbeddedBroker

COMMANDS = [("acls", "list"), ("acls", "add"), ("acls", "remove"), ("users", "list"), ("users", "add"),
            ("users", "remove"), ("transactions", "list"), ("transactions", "describe"),
            ("transactions", "abort"), ("transactions", "fence"), ("producers", "describe"),
            ("configs", "set"), ("configs", "delete"), ("groups", "delete-offsets"),
            ("groups", "reset-offsets"), ("log-dirs",)]


def _ok(result: Result) -> Result:
    assert result.code == 0, f"exit {result.code}: {result.err}"
    return result


def _fails(result: Result, code: int, *needles: str) -> None:
    assert result.code == code, f"exit {result.code}: {result.out} {result.err}"
    assert len(result.err_lines) == 1 and result.err_lines[0].startswith("aiokafka-lite: error: "), result.err
    for n in needles:
        assert n in result.err, result.err


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_and_json_for_each(cli: Callable[..., Result], command: tuple[str, ...]) -> None:
    helped = _ok(cli(*command, "--help")).out
    assert helped.startswith(f"usage: aiokafka-lite {' '.join(command)}") and "--json" in helped


def test_acls_on_a_broker_without_an_authorizer(cli: Callable[..., Result], noida: EmbeddedBroker) -> None:
    b = noida.bootstrap
    _fails(cli("acls", "add", "--topic", "events", "--principal", "User:alice", "--operation", "read",
               "-b", b), 1, "SECURITY_DISABLED", "User:alice allow read on topic events")
    _fails(cli("acls", "list", "--json", "-b", b), 1, "SECURITY_DISABLED")
    _fails(cli("acls", "remove", "-b", b), 2, "refusing to remove every ACL")
    _fails(cli("acls", "add", "--topic", "events", "--operation", "read", "-b", b), 2, "--principal")
    _fails(cli("acls", "add", "--principal", "User:a", "--operation", "read", "-b", b), 2, "which resource")
    _fails(cli("acls", "add", "--topic", "t", "--principal", "User:a", "--operation", "fly", "-b", b), 2,
           "invalid choice: 'fly'")


def test_users_on_tansu(cli: Callable[..., Result], tansu: EmbeddedBroker,
                        new_topic: Callable[..., str]) -> None:
    b, user = tansu.bootstrap, new_topic("user")
    assert _ok(cli("users", "add", user, "--password-stdin", "-b", b, stdin=b"s3cret\n")).out == (
        f"set SCRAM-SHA-256 credential of user {user}\n")
    doc = json.loads(_ok(cli("users", "remove", user, "--json", "-b", b)).out)
    assert doc == {"user": user, "mechanism": "SCRAM-SHA-256", "action": "deleted"}
    _fails(cli("users", "list", "-b", b), 1, "DescribeUserScramCredentials", "null")  # Tansu's answer
    _fails(cli("users", "add", user, "--password", "x", "--iterations", "10", "-b", b), 2, "4096..16384")
    _fails(cli("users", "add", user, "--password-stdin", "-b", b, stdin=b"\n"), 2, "empty")


async def _open_transaction(b: str, topic: str, tid: str) -> Producer:
    async with Admin(bootstrap_servers=b) as admin:
        from aiokafka_lite import NewTopic

        await admin.create_topics([NewTopic(topic, 1, 1)])
    producer = Producer(bootstrap_servers=b, transactional_id=tid)
    await producer.start()
    await producer.begin_transaction()
    await (await producer.send(topic, b"open", partition=0))
    return producer


def test_transactions_listed_described_and_fenced(cli: Callable[..., Result], noida: EmbeddedBroker,
                                                 new_topic: Callable[..., str]) -> None:
    b, topic, tid = noida.bootstrap, new_topic(), new_topic("txn")
    loop = asyncio.new_event_loop()
    producer = loop.run_until_complete(_open_transaction(b, topic, tid))
    try:
        listed = [json.loads(line) for line in
                  _ok(cli("transactions", "list", "--state", "ongoing", "--json", "-b", b)).out.splitlines()]
        assert [t["state"] for t in listed if t["transactional_id"] == tid] == ["ongoing"]
        table = _ok(cli("transactions", "describe", tid, "-b", b)).out.splitlines()
        assert table[0].split()[:3] == ["TRANSACTIONAL-ID", "COORDINATOR", "STATE"]
        assert table[1].split()[2] == "ongoing" and table[1].endswith(f"{topic}-0")
        fenced = json.loads(_ok(cli("transactions", "fence", tid, "--json", "-b", b)).out)
        assert fenced["transactional_id"] == tid and fenced["producer_epoch"] == 1
        after = json.loads(_ok(cli("transactions", "describe", tid, "--json", "-b", b)).out)
        assert after["state"] != "ongoing" and after["partitions"] == []
    finally:
        loop.run_until_complete(producer.stop())
        loop.close()
    _fails(cli("transactions", "abort", "--topic", topic, "-p", "0", "-b", b), 2, "--start-offset")
    _fails(cli("transactions", "abort", "--topic", topic, "-p", "0", "--producer-id", "1", "--producer-epoch",
               "0", "--coordinator-epoch", "0", "-b", b), 1, "does not offer WriteTxnMarkers")
    _fails(cli("transactions", "abort", "--topic", topic, "-p", "0", "--start-offset", "0", "-b", b), 1,
           "no producer of")  # noida-db reports no active producers
    assert _ok(cli("producers", "describe", topic, "--json", "-b", b)).out == ""
    _fails(cli("transactions", "list", "--state", "open", "-b", b), 2, "invalid choice")


def test_configs_set_and_delete(cli: Callable[..., Result], noida: EmbeddedBroker,
                                new_topic: Callable[..., str]) -> None:
    b, topic = noida.bootstrap, new_topic()
    _ok(cli("topics", "create", topic, "-p", "1", "-b", b))

    def configs() -> dict[str, str]:
        doc = json.loads(_ok(cli("configs", "describe", "topic", topic, "--json", "-b", b)).out)
        return {k: v["value"] for k, v in doc["configs"].items()}

    doc = json.loads(_ok(cli("configs", "set", "topic", topic, "retention.ms=5000", "segment.ms=7200000",
                             "--json", "-b", b)).out)
    assert doc["set"] == {"retention.ms": "5000", "segment.ms": "7200000"} and doc["deleted"] == []
    assert configs() == {"retention.ms": "5000", "segment.ms": "7200000"}
    assert _ok(cli("configs", "delete", "topic", topic, "retention.ms", "-b", b)).out == (
        f"changed retention.ms of topic {topic}\n")
    assert configs() == {"segment.ms": "7200000"}
    _ok(cli("configs", "set", "topic", topic, "retention.ms=6000", "--replace-all", "-b", b))
    assert configs() == {"retention.ms": "6000"}  # segment.ms was reset by the whole-set replacement
    _fails(cli("configs", "set", "topic", topic, "retention.ms", "-b", b), 2, "KEY=VALUE")


def test_group_offsets_reset_then_deleted(cli: Callable[..., Result], noida: EmbeddedBroker,
                                          new_topic: Callable[..., str]) -> None:
    b, topic, group = noida.bootstrap, new_topic(), new_topic("group")
    _ok(cli("topics", "create", topic, "-p", "2", "-b", b))
    _ok(cli("produce", topic, "-p", "0", "-b", b, stdin=b"a\nb\nc\n"))
    rows = [json.loads(line) for line in _ok(cli(
        "groups", "reset-offsets", group, "--topic", topic, "--to-latest", "--execute", "--json", "-b", b,
    )).out.splitlines()]
    assert rows == [{"topic": topic, "partition": 0, "current": None, "new": 3, "executed": True},
                    {"topic": topic, "partition": 1, "current": None, "new": 0, "executed": True}]
    assert _ok(cli("groups", "delete-offsets", group, "--topic", topic, "-p", "0", "-b", b)).out == (
        f"deleted committed offset of {topic}-0 for group {group}\n")

    async def committed() -> dict[TopicPartition, int]:
        async with Admin(bootstrap_servers=b) as admin:
            return {tp: om.offset for tp, om in (await admin.list_consumer_group_offsets(group)).items()}

    assert asyncio.run(committed()) == {TopicPartition(topic, 1): 0}
    _fails(cli("groups", "delete-offsets", group, "--topic", topic, "-p", "7", "-b", b), 1, "no partition 7")


def test_log_dirs_from_the_shell(cli_process: Callable[..., Result], noida: EmbeddedBroker,
                                 new_topic: Callable[..., str], cli: Callable[..., Result]) -> None:
    b, topic = noida.bootstrap, new_topic()
    _ok(cli("topics", "create", topic, "-p", "2", "-b", b))
    _ok(cli("produce", topic, "-p", "1", "-b", b, stdin=b"x" * 500 + b"\n"))
    docs = [json.loads(line) for line in _ok(cli_process("log-dirs", "--topic", topic, "--json", "-b", b)).out
            .splitlines()]
    assert [d["broker"] for d in docs] == [1]
    sizes = {r["partition"]: r["size"] for r in docs[0]["replicas"]}
    assert set(sizes) == {0, 1} and sizes[1] > sizes[0]
    table = _ok(cli_process("log-dirs", "--topic", topic, "-b", b)).out.splitlines()
    assert table[0].split() == ["BROKER", "DIR", "TOPIC", "PARTITION", "SIZE", "OFFSET-LAG", "NOTE"]
    assert len(table) == 3
    _fails(cli_process("log-dirs", "--broker", "x", "-b", b), 2, "invalid int value")

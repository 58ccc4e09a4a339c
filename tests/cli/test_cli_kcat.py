"""Issue 15 item 6: end offsets on Tansu, and the kcat-style features, against the embedded brokers."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from _cli_support import Result

from aiokafka_lite.consumer import Consumer
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.producer import Producer
from aiokafka_lite.structs import TopicPartition


def _ok(result: Result) -> Result:
    assert result.code == 0, f"exit {result.code}: {result.err}"
    return result


def _one_batch(cli: Callable[..., Result], b: str, topic: str, lines: list[str], *extra: str) -> None:
    """Produce ``lines`` to partition 0 as one batch (Tansu then lists the end as base offset + 1)."""
    _ok(cli("produce", topic, "-p", "0", "-X", "linger.ms=200", "-q", *extra, "-b", b,
            stdin="".join(f"{line}\n" for line in lines).encode()))


def test_exit_at_end_reads_the_whole_last_batch(cli: Callable[..., Result], broker: EmbeddedBroker,
                                                 new_topic: Callable[..., str]) -> None:
    b, topic = broker.bootstrap, new_topic()
    _ok(cli("topics", "create", topic, "-p", "1", "-b", b))
    _one_batch(cli, b, topic, [f"a{i}" for i in range(5)])
    _one_batch(cli, b, topic, [f"b{i}" for i in range(10)])
    # Two records per poll: trusting Tansu's "latest" (6) would stop after 6 records.
    out = _ok(cli("consume", topic, "--from-beginning", "-e", "-q", "-X", "max.poll.records=2", "-b", b)).out
    assert out.split() == [f"a{i}" for i in range(5)] + [f"b{i}" for i in range(10)]


async def _commit(b: str, group: str, offsets: dict[TopicPartition, int]) -> None:
    """Commit for a group that has no members (setup, through the library)."""
    async with Consumer(bootstrap_servers=b, group_id=group, enable_auto_commit=False) as consumer:
        consumer.assign(list(offsets))
        await consumer.commit(offsets)


def test_group_lag_is_never_negative(cli: Callable[..., Result], broker: EmbeddedBroker,
                                           new_topic: Callable[..., str]) -> None:
    b, topic, group = broker.bootstrap, new_topic(), new_topic("group")
    _ok(cli("topics", "create", topic, "-p", "1", "-b", b))
    _one_batch(cli, b, topic, [f"r{i}" for i in range(10)])
    asyncio.run(_commit(b, group, {TopicPartition(topic, 0): 7}))
    doc = json.loads(_ok(cli("groups", "describe", group, "--json", "-b", b)).out)
    assert [(p["committed"], p["end"], p["lag"]) for p in doc["partitions"]] == [(7, 10, 3)]


def _now_ms() -> int:
    return int(time.time() * 1000)


def test_bench_produce_attaches_no_callback_per_record(cli: Callable[..., Result], tansu: EmbeddedBroker,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The real producer, watched: every send's future is handed back untouched, not given a callback."""
    callbacks: list[object] = []
    real_send = Producer.send

    class Watched:
        def __init__(self, fut: Any) -> None:
            self._fut = fut

        def add_done_callback(self, fn: Any) -> None:
            callbacks.append(fn)
            self._fut.add_done_callback(fn)

        def __await__(self) -> Any:
            return self._fut.__await__()

        def __getattr__(self, name: str) -> Any:
            return getattr(self._fut, name)

    async def send(self: Producer, *args: Any, **kwargs: Any) -> Any:
        return Watched(await real_send(self, *args, **kwargs))

    monkeypatch.setattr(Producer, "send", send)
    result = _ok(cli("bench", "produce", "-n", "2000", "-s", "10", "--json", "--progress", "-b",
                     tansu.bootstrap))
    assert json.loads(result.out)["records"] == 2000
    assert "[############################] 100.0%" in result.err
    assert callbacks == []


def test_start_offsets(cli: Callable[..., Result], broker: EmbeddedBroker,
                       new_topic: Callable[..., str]) -> None:
    b, topic = broker.bootstrap, new_topic()
    _ok(cli("topics", "create", topic, "-p", "1", "-b", b))
    _one_batch(cli, b, topic, [f"r{i}" for i in range(10)])

    def read(*argv: str) -> list[str]:
        return _ok(cli("consume", topic, *argv, "-q", "-b", b)).out.split()

    assert read("-o", "beginning", "-e") == [f"r{i}" for i in range(10)]
    assert read("-o", "3", "-e") == [f"r{i}" for i in range(3, 10)]
    assert read("-o", "-4", "-e") == [f"r{i}" for i in range(6, 10)]
    assert read("-o", "-40", "-e") == [f"r{i}" for i in range(10)]  # no further back than the start
    assert read("-o", "end", "-t", "1") == []  # the end is the end, even inside Tansu's last batch
    bad = cli("consume", topic, "-o", "yesterday", "-b", b)
    assert bad.code == 2 and "bad -o 'yesterday'" in bad.err
    grouped = cli("consume", topic, "-g", "g", "-o", "5", "-b", b)
    assert grouped.code == 2 and "reset-offsets" in grouped.err


def test_start_offset_by_timestamp(cli: Callable[..., Result], noida: EmbeddedBroker,
                                   new_topic: Callable[..., str]) -> None:
    """On noida-db: Tansu answers every offsets_for_times with offset 0 (brokers.md)."""
    b, topic = noida.bootstrap, new_topic()
    _ok(cli("topics", "create", topic, "-p", "2", "-b", b))
    _ok(cli("produce", topic, "-q", "-b", b, stdin=b"old1\nold2\nold3\n"))
    time.sleep(0.05)
    middle = _now_ms()
    time.sleep(0.05)
    _ok(cli("produce", topic, "-q", "-b", b, stdin=b"new1\nnew2\n"))
    out = _ok(cli("consume", topic, "-o", f"s@{middle}", "-e", "-q", "-b", b)).out
    assert sorted(out.split()) == ["new1", "new2"]
    future = _ok(cli("consume", topic, "-o", f"s@{middle + 3_600_000}", "-e", "-q", "-b", b)).out
    assert future == ""  # no record that late: start at the end


def test_kcat_formats_json_and_several_topics(cli: Callable[..., Result], broker: EmbeddedBroker,
                                              new_topic: Callable[..., str]) -> None:
    b, t1, t2 = broker.bootstrap, new_topic("one"), new_topic("two")
    for t in (t1, t2):
        _ok(cli("topics", "create", t, "-p", "1", "-b", b))
    _ok(cli("produce", t1, "-K", ":", "-H", "h=v", "-q", "-b", b, stdin=b"k1:hello\nnokey\n"))
    _ok(cli("produce", t2, "-q", "-b", b, stdin=b"other\n"))

    out = _ok(cli("consume", t1, "-o", "beginning", "-e", "-q", "-b", b,
                  "-f", r"%t|%p|%o|%k|%s|%h|%S|%K|100%%\n")).out
    assert out.splitlines() == [f"{t1}|0|0|k1|hello|h=v|5|2|100%", f"{t1}|0|1||nokey|h=v|5|-1|100%"]
    stamps = _ok(cli("consume", t1, "-o", "beginning", "-e", "-q", "-b", b, "-f", r"%T\t")).out
    assert [abs(int(ts) - _now_ms()) < 600_000 for ts in stamps.split("\t")[:-1]] == [True, True]
    nulls = _ok(cli("consume", t1, "-o", "beginning", "-e", "-q", "-Z", "-b", b, "-f", "%k;")).out
    assert nulls == "k1;NULL;"
    bad = cli("consume", t1, "-f", "%x", "-b", b)
    assert bad.code == 2 and "%x is not a directive" in bad.err

    docs = [json.loads(line) for line in _ok(cli("consume", t1, "-o", "beginning", "-e", "-q", "-J",
                                                 "-b", b)).out.splitlines()]
    assert [{k: d[k] for k in ("topic", "partition", "offset", "tstype", "headers", "key", "payload")}
            for d in docs] == [
        {"topic": t1, "partition": 0, "offset": 0, "tstype": "create", "headers": ["h", "v"], "key": "k1",
         "payload": "hello"},
        {"topic": t1, "partition": 0, "offset": 1, "tstype": "create", "headers": ["h", "v"], "key": None,
         "payload": "nokey"}]
    assert all(isinstance(d["ts"], int) and d["ts"] > 0 for d in docs)

    both = _ok(cli("consume", t1, t2, "-o", "beginning", "-e", "-b", b, "-f", r"%t %s\n"))
    assert sorted(both.out.splitlines()) == sorted([f"{t1} hello", f"{t1} nokey", f"{t2} other"])
    assert both.err_lines[-1] == f"consumed 3 records from {t1}, {t2}"
    keyed = _ok(cli("consume", t1, "-o", "beginning", "-e", "-q", "-K", r"\t", "-D", "|", "-b", b)).out
    assert keyed == "k1\thello|\tnokey|"
    mixed = cli("consume", t1, "-f", "%s", "-K", ":", "-b", b)
    assert mixed.code == 2 and "-K and -D shape the default output" in mixed.err


def test_produce_delimiters_and_nulls(cli: Callable[..., Result], broker: EmbeddedBroker,
                                      new_topic: Callable[..., str]) -> None:
    b, topic = broker.bootstrap, new_topic()
    _ok(cli("topics", "create", topic, "-p", "1", "-b", b))
    produced = _ok(cli("produce", topic, "-D", "|", "-K", "=", "-Z", "-b", b,
                       stdin=b"a=1|b=|=3|line\nwith newline||c=\r"))
    assert produced.err_lines[-1].startswith(f"produced 6 records to {topic}")
    out = _ok(cli("consume", topic, "-o", "beginning", "-e", "-q", "-Z", "-b", b, "-f", r"%k=%s;%S\n")).out
    assert out.split("\n") == ["a=1;1", "b=NULL;-1", "NULL=3;1", "NULL=line", "with newline;17",
                               "NULL=NULL;-1", "c=\r;1", ""]


def test_metadata_listing_and_help(cli: Callable[..., Result], broker: EmbeddedBroker,
                                   new_topic: Callable[..., str]) -> None:
    b, topic = broker.bootstrap, new_topic()
    _ok(cli("topics", "create", topic, "-p", "2", "-b", b))
    listing = _ok(cli("-L", "-t", topic, "-b", b)).out.splitlines()
    assert listing[0].startswith(f"Metadata for {topic} (cluster ")
    assert listing[1] == " 1 brokers:" and listing[2].startswith("  broker ")
    assert listing[3:5] == [" 1 topics:", f'  topic "{topic}" with 2 partitions:']
    assert [line.split(",")[0] for line in listing[5:]] == ["    partition 0", "    partition 1"]
    assert f'topic "{topic}" with 2 partitions' in _ok(cli("-L", "-b", b)).out
    doc = json.loads(_ok(cli("-L", "-J", "-b", b)).out)
    (mine,) = [t for t in doc["topics"] if t["topic"] == topic]
    assert [p["partition"] for p in mine["partitions"]] == [0, 1]
    assert mine["partitions"][0]["leader"] == doc["brokers"][0]["id"]
    assert _ok(cli("metadata", "-t", topic, "-b", b)).out.splitlines() == listing

    configs = _ok(cli("configs", "describe", "topic", topic, "-b", b)).out  # Tansu: none reported
    assert configs.startswith(f"Configs for topic {topic}:")
    helped = _ok(cli("--help")).out
    assert "examples:" in helped and "consume events -o beginning -e" in helped
    assert "groups reset-offsets billing" in helped and "-L" in helped


def test_offsets_and_reset_offsets(cli: Callable[..., Result], broker: EmbeddedBroker,
                                   new_topic: Callable[..., str]) -> None:
    b, topic, group = broker.bootstrap, new_topic(), new_topic("group")
    _ok(cli("topics", "create", topic, "-p", "1", "-b", b))
    _one_batch(cli, b, topic, [f"r{i}" for i in range(10)])
    assert _ok(cli("offsets", topic, "-b", b)).out == f"{topic}\t0\t10\n"  # the true end, also on Tansu
    assert _ok(cli("offsets", topic, "--time", "earliest", "-b", b)).out == f"{topic}\t0\t0\n"
    asyncio.run(_commit(b, group, {TopicPartition(topic, 0): 7}))

    def committed() -> int:
        doc = json.loads(_ok(cli("groups", "describe", group, "--json", "-b", b)).out)
        return int(doc["partitions"][0]["committed"])

    dry = _ok(cli("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", "-b", b))
    assert dry.out.split() == ["TOPIC", "PARTITION", "CURRENT", "NEW", topic, "0", "7", "0"]
    assert "dry run" in dry.err and committed() == 7
    _ok(cli("groups", "reset-offsets", group, "--topic", topic, "--shift-by", "-2", "--execute", "-b", b))
    assert committed() == 5
    _ok(cli("groups", "reset-offsets", group, "--all-topics", "--to-latest", "--execute", "-b", b))
    assert committed() == 10
    _ok(cli("groups", "reset-offsets", group, "--topic", topic, "--to-offset", "3", "--execute", "-b", b))
    assert committed() == 3
    clamped = _ok(cli("groups", "reset-offsets", group, "--topic", topic, "--to-offset", "99", "-b", b))
    assert clamped.out.split()[-2:] == ["3", "10"]  # never past the end
    assert cli("groups", "reset-offsets", group, "--topic", topic, "-b", b).code == 2  # no --to-*


def test_times_and_configs_on_noida(cli: Callable[..., Result], noida: EmbeddedBroker,
                                    new_topic: Callable[..., str]) -> None:
    """Offsets by time (Tansu answers every time with offset 0) and configs (Tansu reports none)."""
    b, topic, group = noida.bootstrap, new_topic(), new_topic("group")
    _ok(cli("topics", "create", topic, "-p", "1", "-c", "retention.ms=3600000", "-b", b))
    _one_batch(cli, b, topic, ["old1", "old2", "old3"])
    time.sleep(0.05)
    middle = _now_ms()
    time.sleep(0.05)
    _one_batch(cli, b, topic, ["new1", "new2"])
    assert _ok(cli("offsets", topic, "--time", str(middle), "-b", b)).out == f"{topic}\t0\t3\n"
    assert _ok(cli("offsets", topic, "--time", "2099-01-01T00:00:00Z", "-b", b)).out == f"{topic}\t0\t-1\n"
    asyncio.run(_commit(b, group, {TopicPartition(topic, 0): 0}))
    _ok(cli("groups", "reset-offsets", group, "--topic", topic, "--to-datetime", str(middle), "--execute",
            "-b", b))
    doc = json.loads(_ok(cli("groups", "describe", group, "--json", "-b", b)).out)
    assert doc["partitions"][0]["committed"] == 3

    assert "retention.ms=3600000" in _ok(cli("configs", "describe", "topic", topic, "-b", b)).out
    assert _ok(cli("configs", "alter", "topic", topic, "--set", "retention.ms=7200000", "-b", b)).out == (
        f"changed retention.ms of topic {topic}\n")
    doc = json.loads(_ok(cli("configs", "describe", "topic", topic, "--all", "--json", "-b", b)).out)
    assert doc["configs"]["retention.ms"]["value"] == "7200000"
    _ok(cli("configs", "alter", "topic", topic, "--delete", "retention.ms", "-b", b))
    doc = json.loads(_ok(cli("configs", "describe", "topic", topic, "--all", "--json", "-b", b)).out)
    assert doc["configs"].get("retention.ms", {}).get("value") != "7200000"


def test_reset_offsets_refuses_a_group_with_members(cli: Callable[..., Result], noida: EmbeddedBroker,
                                                    new_topic: Callable[..., str]) -> None:
    b, topic, group = noida.bootstrap, new_topic(), new_topic("group")
    _ok(cli("topics", "create", topic, "-p", "1", "-b", b))
    _one_batch(cli, b, topic, ["r0", "r1"])

    async def with_a_member() -> Result:
        async with Consumer(topic, bootstrap_servers=b, group_id=group, session_timeout_ms=10000,
                            enable_auto_commit=False, auto_offset_reset="earliest") as consumer:
            deadline = time.monotonic() + 20
            while not consumer.assignment() and time.monotonic() < deadline:
                await consumer.poll(timeout_ms=200)
            assert consumer.assignment()
            await consumer.commit({TopicPartition(topic, 0): 1})
            # The CLI runs its own event loop: run it in a thread while this member stays in the group.
            return await asyncio.to_thread(cli, "groups", "reset-offsets", group, "--topic", topic,
                                           "--to-earliest", "--execute", "-b", b)

    refused = asyncio.run(with_a_member())
    assert refused.code == 1 and "active member" in refused.err
    dry = _ok(cli("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", "-b", b))
    assert dry.out.split()[-2:] == ["1", "0"]  # nothing was committed

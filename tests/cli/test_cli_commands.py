"""The CLI's commands against real brokers (Tansu and noida-db), run in-process through main(argv).

Tansu 0.6 takes ~20 s to admit a consumer into a group, so group round trips are checked on noida-db.
Its wrong ListOffsets(latest) (the last batch's base offset + 1), which the CLI now corrects, is
covered on both brokers in test_cli_kcat.py (``consume -e``, ``-o end``, lag, ``offsets``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from _cli_support import Result

from aiokafka_lite.embedded import EmbeddedBroker


def _ok(result: Result) -> Result:
    assert result.code == 0, f"exit {result.code}: {result.err}"
    return result


def test_topics(cli: Callable[..., Result], broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    b = broker.bootstrap
    a, c = new_topic("a"), new_topic("c")
    assert _ok(cli("topics", "create", a, c, "-p", "3", "-c", "retention.ms=3600000", "-b", b)).out == (
        f"created topic {a}\ncreated topic {c}\n")
    again = cli("topics", "create", a, "-b", b)
    assert again.code == 1
    assert again.err_lines == [f"aiokafka-lite: error: [Error 36] TOPIC_ALREADY_EXISTS: topic '{a}': "
                               f"{again.err.split(': ', 4)[-1].strip()}"]
    assert "--if-not-exists" in again.err
    assert _ok(cli("topics", "create", a, "--if-not-exists", "-b", b)).out == ""

    names = _ok(cli("topics", "list", "-b", b)).out.splitlines()
    assert a in names and c in names
    assert f"{a}\t3" in _ok(cli("topics", "list", "-l", "-b", b)).out.splitlines()
    described = _ok(cli("topics", "describe", a, "-b", b)).out
    assert f"Topic: {a}\t" in described and "PartitionCount: 3" in described
    assert described.count("\tPartition: ") == 3
    doc = json.loads(_ok(cli("topics", "describe", c, "--json", "-b", b)).out)
    assert doc["name"] == c and [p["partition"] for p in doc["partitions"]] == [0, 1, 2]

    assert _ok(cli("topics", "delete", a, c, "-b", b)).out == f"deleted topic {a}\ndeleted topic {c}\n"
    gone = cli("topics", "delete", a, "-b", b)
    assert gone.code == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in gone.err and "--if-exists" in gone.err
    assert _ok(cli("topics", "delete", a, "--if-exists", "-b", b)).out == ""
    missing = cli("topics", "describe", a, "-b", b)
    assert missing.code == 1 and f"topic '{a}' does not exist" in missing.err


def test_produce_then_consume(cli: Callable[..., Result], broker: EmbeddedBroker,
                              new_topic: Callable[..., str]) -> None:
    b, topic = broker.bootstrap, new_topic()
    _ok(cli("topics", "create", topic, "-p", "1", "-b", b))
    lines = b"k1:v1\nk2:v2\r\nno-key-here\n\nk3:\xff\xfe\n"
    produced = _ok(cli("produce", topic, "-K", ":", "-H", "source=test", "-z", "zstd", "-a", "all",
                       "-X", "linger.ms=1", "-b", b, stdin=lines))
    assert produced.out == ""
    assert produced.err_lines[-1].startswith(f"produced 4 records to {topic}")

    out = _ok(cli("consume", topic, "--from-beginning", "-n", "3", "-b", b,
                  "-F", r"{partition}:{offset}\t{key}\t{value}\t{headers}")).out
    assert out.splitlines() == ["0:0\tk1\tv1\tsource=test", "0:1\tk2\tv2\tsource=test",
                                "0:2\t\tno-key-here\tsource=test"]

    docs = [json.loads(line) for line in _ok(cli("consume", topic, "--from-beginning", "-n", "4",
                                                 "-F", "json", "-b", b)).out.splitlines()]
    assert [d["offset"] for d in docs] == [0, 1, 2, 3]
    assert docs[2]["key"] is None and docs[2]["value"] == "no-key-here"
    assert docs[3]["key"] == "k3" and docs[3]["value"] == {"base64": "//4="}  # not UTF-8: lossless
    assert docs[0]["headers"] == [["source", "test"]]


def test_produce_file_with_progress(cli: Callable[..., Result], broker: EmbeddedBroker,
                                    new_topic: Callable[..., str], tmp_path: Path) -> None:
    b, topic = broker.bootstrap, new_topic()
    _ok(cli("topics", "create", topic, "-p", "2", "-b", b))
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line {i}\n" for i in range(5000)))
    result = _ok(cli("produce", topic, "-f", str(path), "--progress", "-b", b))
    assert "[############################] 100.0% 5.0k/5.0k" in result.err
    assert "produced 5000 records" in result.err
    out = _ok(cli("consume", topic, "--from-beginning", "-n", "5000", "-q", "-b", b)).out
    assert sorted(out.splitlines()) == sorted(f"line {i}" for i in range(5000))

    bad = cli("produce", topic, "-p", "7", "-b", b, stdin=b"x\n")
    assert bad.code == 1 and bad.err_lines == [
        f"aiokafka-lite: error: topic '{topic}' has no partition 7 (it has 2: 0..1)"]


def test_consume_gives_up_after_timeout(cli: Callable[..., Result], broker: EmbeddedBroker,
                                        new_topic: Callable[..., str]) -> None:
    b, topic = broker.bootstrap, new_topic()
    _ok(cli("topics", "create", topic, "-b", b))
    started = time.monotonic()
    result = cli("consume", topic, "--from-beginning", "-n", "5", "-t", "1", "-b", b)
    assert result.code == 1
    assert result.err_lines[-1] == (
        f"aiokafka-lite: error: got 0 of 5 records from {topic} (nothing new for 1 s)")
    assert time.monotonic() - started < 6
    missing = cli("consume", new_topic("missing"), "-n", "1", "-t", "1", "-b", b)
    assert missing.code == 1 and "does not exist" in missing.err


def test_consume_to_the_end_and_groups(cli: Callable[..., Result], noida: EmbeddedBroker,
                                       new_topic: Callable[..., str]) -> None:
    """On noida-db (see the module docstring): -e, a group's commit, and groups list/describe."""
    b, topic, group = noida.bootstrap, new_topic(), new_topic("group")
    _ok(cli("topics", "create", topic, "-p", "2", "-b", b))
    _ok(cli("produce", topic, "-b", b, stdin=b"".join(b"r%d\n" % i for i in range(10))))
    out = _ok(cli("consume", topic, "--from-beginning", "-e", "-b", b)).out
    assert sorted(out.split()) == sorted(f"r{i}" for i in range(10))

    out = _ok(cli("consume", topic, "-g", group, "--from-beginning", "-n", "10", "-b", b)).out
    assert len(out.split()) == 10
    again = cli("consume", topic, "-g", group, "--from-beginning", "-n", "1", "-t", "2", "-b", b)
    assert again.code == 1 and "got 0 of 1" in again.err  # the group's committed offsets held

    assert group in _ok(cli("groups", "list", "-b", b)).out.split()
    described = _ok(cli("groups", "describe", group, "-b", b)).out
    assert f"Group: {group}" in described
    rows = [line.split() for line in described.splitlines() if line.startswith(topic)]
    assert sorted((r[1], r[4]) for r in rows) == [("0", "0"), ("1", "0")]  # partition, lag
    assert sum(int(r[2]) for r in rows) == 10  # committed offsets add up to what was read
    doc = json.loads(_ok(cli("groups", "describe", group, "--json", "-b", b)).out)
    assert doc["group_id"] == group and sum(p["committed"] for p in doc["partitions"]) == 10
    _ok(cli("groups", "delete", group, "-b", b))
    assert group not in _ok(cli("groups", "list", "-b", b)).out.split()


def test_smoke(cli: Callable[..., Result], broker: EmbeddedBroker) -> None:
    result = _ok(cli("smoke", "-n", "500", "-z", "lz4", "-b", broker.bootstrap))
    assert result.out.startswith("smoke OK: 500/500 records round-tripped through aiokafka-lite-smoke-")
    assert f"on {broker.bootstrap}" in result.out
    temp = result.out.split(" through ")[1].split()[0]
    assert temp not in _ok(cli("topics", "list", "-b", broker.bootstrap)).out.split()  # cleaned up


def test_smoke_through_a_group(cli: Callable[..., Result], noida: EmbeddedBroker,
                               new_topic: Callable[..., str]) -> None:
    result = _ok(cli("smoke", "-n", "300", "-g", new_topic("smoke"), "--uvloop", "-b", noida.bootstrap))
    assert result.out.startswith("smoke OK: 300/300")


def test_bench(cli: Callable[..., Result], broker: EmbeddedBroker) -> None:
    for action in ("produce", "consume"):
        result = _ok(cli("bench", action, "-n", "3000", "-s", "50", "--json", "-b", broker.bootstrap))
        figures = json.loads(result.out)
        assert figures["op"] == action and figures["records"] == 3000 and figures["records_per_s"] > 0
        assert "[############################] 100.0%" in result.err  # the progress bar

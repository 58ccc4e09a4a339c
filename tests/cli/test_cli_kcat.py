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

"""The testing kit's helpers for any test runner: fresh topics, and producing and reading back records.

The brokers themselves are already plain (sync and async) context managers:
``async with EmbeddedBroker("noida") as broker`` and ``async with MockCluster(3) as cluster``; the pytest
plugin (:mod:`aiokafka_lite.testing.pytest_plugin`) wraps the same objects in fixtures. See docs/testing.md.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
from collections.abc import Iterable
from typing import Any, Literal, Protocol

from ..admin import Admin
from ..consumer import Consumer
from ..errors import KafkaTimeoutError
from ..producer import Producer
from ..structs import ConsumerRecord, NewTopic, RecordMetadata
from .mockcluster import MockCluster

__all__ = ["HasBootstrap", "TopicFactory", "produce", "read_back"]


class HasBootstrap(Protocol):
    """Anything with a ``bootstrap`` address: an EmbeddedBroker, a MockCluster, a SaslBroker..."""

    @property
    def bootstrap(self) -> str: ...


Target = str | HasBootstrap
_counter = itertools.count()


def _bootstrap(target: Target) -> str:
    return target if isinstance(target, str) else target.bootstrap


class TopicFactory:
    """``await topics(partitions=1)`` creates a topic with a name no other call in this process used.

    On an :class:`EmbeddedBroker` (or any broker given by address) it creates the topic with CreateTopics;
    on a :class:`MockCluster`, which has no admin API, through the cluster's control channel. ``on=``
    picks another target for one call. Names start with ``prefix`` (letters, digits, ``-`` kept).
    """

    def __init__(self, target: Target | None = None, prefix: str = "topic") -> None:
        self.target = target
        self.prefix = re.sub(r"[^a-zA-Z0-9-]+", "-", prefix).strip("-")[:80] or "topic"
        #: Every topic this factory made, in order.
        self.created: list[str] = []

    def name(self) -> str:
        """A fresh topic name (unique in this process, and across processes by the PID)."""
        return f"{self.prefix}-{os.getpid():x}-{next(_counter)}"

    async def __call__(self, partitions: int = 1, *, on: Target | None = None,
                       name: str | None = None) -> str:
        target = on if on is not None else self.target
        if target is None:
            raise ValueError("TopicFactory has no target: pass one to the constructor or on=")
        topic = name or self.name()
        if isinstance(target, MockCluster):
            await asyncio.to_thread(target.create_topic, topic, partitions)
        else:
            async with Admin(bootstrap_servers=_bootstrap(target)) as admin:
                await admin.create_topics([NewTopic(topic, partitions, 1)])
        self.created.append(topic)
        return topic


async def produce(target: Target, topic: str, values: Iterable[Any], *, key: Any = None,
                  partition: int | None = None, **settings: Any) -> list[RecordMetadata]:
    """Send ``values`` (bytes, or ``(key, value)`` tuples) to ``topic`` and wait until every one is
    acknowledged; returns their metadata in order. ``settings`` go to the :class:`Producer` (for
    example ``transactional_id``: then all records are written in one committed transaction)."""
    pairs = [v if isinstance(v, tuple) else (key, v) for v in values]
    async with Producer(bootstrap_servers=_bootstrap(target), **settings) as producer:
        if settings.get("transactional_id") is not None:
            async with producer.transaction():
                futures = [await producer.send(topic, v, k, partition) for k, v in pairs]
        else:
            futures = [await producer.send(topic, v, k, partition) for k, v in pairs]
        return [await f for f in futures]


async def read_back(target: Target, topic: str, count: int, *, timeout: float = 20.0,
                    isolation_level: Literal["read_uncommitted", "read_committed"] = "read_committed",
                    **settings: Any) -> list[ConsumerRecord[Any, Any]]:
    """Read ``topic`` from the beginning (every partition, no group) until ``count`` records arrived.

    Returns exactly the first ``count`` records in arrival order (per partition in offset order). Raises
    :class:`KafkaTimeoutError` naming what did arrive if fewer came within ``timeout`` seconds.
    ``settings`` go to the :class:`Consumer`.
    """
    got: list[ConsumerRecord[Any, Any]] = []
    settings.setdefault("auto_offset_reset", "earliest")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with Consumer(topic, bootstrap_servers=_bootstrap(target), isolation_level=isolation_level,
                        **settings) as consumer:
        while len(got) < count:
            left = deadline - loop.time()
            if left <= 0:
                raise KafkaTimeoutError(
                    f"read_back({topic!r}): {len(got)} of {count} records in {timeout}s: "
                    f"{[(r.partition, r.offset, r.value) for r in got][:20]}")
            batch = await consumer.poll(timeout_ms=int(min(left, 1.0) * 1000) + 1)
            for records in batch.values():
                got.extend(records)
    return got[:count]


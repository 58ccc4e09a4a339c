"""Work shared by ``smoke`` and ``bench``: temporary topics, producing N records, reading them back."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import secrets
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from .. import errors
from ..net.retry import ExponentialBackoff, Retry, call_with_retries
from ..structs import NewTopic, RecordMetadata, TopicPartition
from ._clients import started
from ._progress import Progress
from ._runtime import CLIError


async def maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def run_id() -> str:
    return secrets.token_hex(4)


@asynccontextmanager
async def topic_for(args: argparse.Namespace, admin_kwargs: dict[str, Any], prefix: str,
                    topic: str | None, partitions: int, keep: bool) -> AsyncIterator[str]:
    """The topic to work on: ``topic`` (created if missing) or a fresh one deleted afterwards."""
    from ..admin import Admin

    async with started(Admin(**admin_kwargs), args, "admin") as admin:
        name = topic or f"{prefix}-{run_id()}"
        created = False
        if topic is None or topic not in set(await admin.list_topics(internal=True)):
            try:
                await admin.create_topics([NewTopic(name, partitions, -1)])  # the cluster's replication
                created = True
            except errors.TopicAlreadyExistsError:
                pass
            await _wait_for_leaders(admin, name)
        try:
            yield name
        finally:
            if created and topic is None and not keep:
                try:
                    await admin.delete_topics([name])
                except errors.KafkaError:
                    pass  # best effort: the figures or verdict already stand


async def _wait_for_leaders(admin: Any, topic: str, timeout: float = 10.0) -> None:
    """Brokers answer CreateTopics before every partition has a leader; wait for them."""

    async def attempt() -> None:
        (d,) = await admin.describe_topics([topic])
        if not (d.partitions and all(p.leader >= 0 for p in d.partitions)):
            raise errors.LeaderNotAvailableError(f"topic {topic!r}")

    def not_yet(exc: BaseException) -> bool:  # the new topic is not in metadata yet, or has no leader
        return isinstance(exc, (errors.UnknownTopicOrPartitionError, errors.LeaderNotAvailableError))

    retry = Retry(f"Waiting for leaders of topic {topic!r}", timeout, ExponentialBackoff(50, 500),
                  wait_out=True)
    try:
        await call_with_retries(attempt, retry, retriable=not_yet)
    except errors.KafkaTimeoutError:
        raise CLIError(f"topic {topic!r} has no leaders {timeout:g} s after it was created") from None


async def produce_n(producer: Any, topic: str, n: int, make: Callable[[int], tuple[bytes | None, bytes]],
                    progress: Progress) -> list[RecordMetadata | BaseException]:
    """Send ``n`` records (``make(i) -> (key, value)``), pipelined; each one's metadata or error."""
    results: list[RecordMetadata | BaseException] = [errors.KafkaError("not sent")] * n

    def done(i: int, fut: asyncio.Future[Any]) -> None:
        results[i] = (asyncio.CancelledError() if fut.cancelled()
                      else fut.exception() or fut.result())
        progress.update(1)

    pending = []
    for i in range(n):
        key, value = make(i)
        fut = await producer.send(topic, value, key=key)
        fut.add_done_callback(lambda f, i=i: done(i, f))
        pending.append(fut)
    await producer.flush()
    await asyncio.gather(*pending, return_exceptions=True)
    return results


async def consume_until(consumer: Any, want: Callable[[Any], bool], n: int, progress: Progress,
                        timeout: float) -> int:
    """Poll until ``want(record)`` was true ``n`` times or nothing new came for ``timeout`` s."""
    got = 0
    last = time.monotonic()
    while got < n:
        batch = await consumer.poll(timeout_ms=200, max_records=None)
        new = 0
        for records in (batch or {}).values():
            for record in records:
                if want(record):
                    new += 1
        if new:
            got += new
            progress.update(new)
            last = time.monotonic()
        elif time.monotonic() - last > timeout:
            break
    return got


async def assign_from(consumer: Any, starts: dict[TopicPartition, int]) -> None:
    """Read these partitions directly (no group) from the given offsets."""
    consumer.assign(list(starts))
    for tp, offset in starts.items():
        await maybe(consumer.seek(tp, offset))

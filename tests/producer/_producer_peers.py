"""Peer clients for checking what our producer wrote: confluent-kafka, aiokafka and kcat readers,
and topic creation through confluent-kafka's AdminClient (independent of our own admin code)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
from typing import Any, NamedTuple

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic


class Got(NamedTuple):
    """One record as a peer client read it back."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp: int
    timestamp_type: int  # 0 CreateTime, 1 LogAppendTime


def create_topic(bootstrap: str, topic: str, partitions: int = 1,
                 config: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fut = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1,
                                        config=config or {})], operation_timeout=10)[topic]
    fut.result(timeout=15)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # wait until metadata lists every partition
        md = admin.list_topics(topic, timeout=5).topics.get(topic)
        if md is not None and not md.error and len(md.partitions) == partitions:
            return
        time.sleep(0.05)
    raise AssertionError(f"topic {topic} not visible with {partitions} partitions")


def read_confluent(bootstrap: str, topic: str, count: int, *, isolation: str = "read_uncommitted",
                   timeout: float = 20.0, settle: float = 0.0) -> list[Got]:
    """Read ``count`` records from every partition's start (assign, no group); with ``settle`` > 0 keep
    reading that long after the count is reached, to catch records that should not be there."""
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": f"peer-{time.monotonic_ns()}",
                                  "enable.auto.commit": False, "isolation.level": isolation,
                                  "enable.partition.eof": False})
    try:
        md = c.list_topics(topic, timeout=10).topics[topic]
        c.assign([confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                  for p in md.partitions])
        out: list[Got] = []
        deadline = time.monotonic() + timeout
        settle_until = None
        while time.monotonic() < deadline:
            if len(out) >= count:
                if settle_until is None:
                    settle_until = time.monotonic() + settle
                if time.monotonic() >= settle_until:
                    break
            for m in c.consume(num_messages=10000, timeout=0.2):
                if m.error():
                    raise AssertionError(f"confluent consumer error: {m.error()}")
                ts_type, ts = m.timestamp()
                out.append(Got(m.partition(), m.offset(), m.key(), m.value(),
                               [(k, v) for k, v in (m.headers() or [])], ts,
                               0 if ts_type == confluent_kafka.TIMESTAMP_CREATE_TIME else 1))
        return out
    finally:
        c.close()


async def aread_confluent(bootstrap: str, topic: str, count: int, **kw: Any) -> list[Got]:
    return await asyncio.to_thread(read_confluent, bootstrap, topic, count, **kw)


async def read_aiokafka(bootstrap: str, topic: str, count: int, timeout: float = 20.0) -> list[Got]:
    import aiokafka

    c = aiokafka.AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                  auto_offset_reset="earliest")
    await c.start()
    try:
        parts = c.partitions_for_topic(topic) or set()
        if not parts:
            await c._client.force_metadata_update()
            parts = c.partitions_for_topic(topic) or set()
        tps = [aiokafka.TopicPartition(topic, p) for p in sorted(parts)]
        c.assign(tps)
        await c.seek_to_beginning(*tps)
        out: list[Got] = []
        deadline = time.monotonic() + timeout
        while len(out) < count and time.monotonic() < deadline:
            batch = await c.getmany(timeout_ms=200)
            for records in batch.values():
                for m in records:
                    out.append(Got(m.partition, m.offset, m.key, m.value, list(m.headers), m.timestamp,
                                   m.timestamp_type))
        return out
    finally:
        await c.stop()


def read_kcat(bootstrap: str, topic: str, count: int, timeout: float = 20.0) -> list[Got]:
    """kcat -J: keys/values must be UTF-8 text for this reader (kcat prints them as JSON strings)."""
    kcat = shutil.which("kcat") or shutil.which("kafkacat")
    assert kcat, "kcat is not installed (scripts/sysdeps.sh installs it)"
    proc = subprocess.run([kcat, "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-c", str(count),
                           "-J", "-e", "-q"], capture_output=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"kcat failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    out: list[Got] = []
    for line in proc.stdout.decode().splitlines():
        if not line.strip():
            continue
        m = json.loads(line)
        hs = m.get("headers") or []
        headers = [(hs[i], None if hs[i + 1] is None else hs[i + 1].encode()) for i in range(0, len(hs), 2)]
        key = m.get("key")
        value = m.get("payload")
        out.append(Got(m["partition"], m["offset"], None if key is None else key.encode(),
                       None if value is None else value.encode(), headers, m["ts"],
                       0 if m.get("tstype") == "create" else 1))
    return out

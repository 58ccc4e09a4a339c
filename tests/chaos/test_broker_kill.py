"""noida-db killed with SIGKILL mid-stream and restarted on the same port and data directory, while an
idempotent producer (acks=all) keeps sending through it without being restarted itself.

The test starts its own noida-db (the session broker is shared and must not be killed) and talks to it
through a proxy that notes the error codes in Produce and InitProducerId answers, to show what the
broker says about our producer id after the restart.

noida-db 0.2.3 is not durable to the last acknowledgement: it keeps its Kafka state in memory and
writes it to ``data_dir/kafka.json`` about once a second, so a SIGKILL loses what it acknowledged in
the last second (and it keeps the producer-id state of that snapshot: our next batch gets
OUT_OF_ORDER_SEQUENCE_NUMBER). So the test checks: every send() completed (acknowledged or failed with
an error, none left hanging); every record acknowledged more than ``SNAPSHOT_S`` before the kill is in
the log at the offset the broker gave; when acknowledged records were lost, the producer was told
(a send failed with OutOfOrderSequenceNumberError or UnknownProducerIdError); no record is in the log
twice; per key the log holds the records in send order; and the producer works again after the restart
(the records sent a second after the broker came back are all acknowledged).
"""

from __future__ import annotations

import asyncio
import collections
import random
import time
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from _noida_faults import INIT_PRODUCER_ID, PRODUCE, FaultProxy, create_topic, kill_hard

from aiokafka_lite import Producer
from aiokafka_lite.embedded import EmbeddedBroker, free_port
from aiokafka_lite.errors import OutOfOrderSequenceNumberError, UnknownProducerIdError

PARTITIONS, KEYS = 2, 4
#: noida-db 0.2.3 keeps its Kafka state in memory and writes it to data_dir/kafka.json about once a second
#: (measured: a SIGKILL 0.5 s after 200 acknowledged records lost them and the topic; 1 s after, nothing).
SNAPSHOT_S = 1.5
PRODUCER: dict[str, Any] = {
    "enable_idempotence": True, "acks": "all", "request_timeout_ms": 3000,
    "delivery_timeout_ms": 25000, "retry_backoff_ms": 100, "reconnect_backoff_max_ms": 300,
    "linger_ms": 5}



def _read_log(bootstrap: str, topic: str) -> list[tuple[int, int, bytes]]:
    """Every record of ``topic`` up to its high watermarks, as (partition, offset, value)."""
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": f"peer-{time.monotonic_ns()}",
                                  "enable.auto.commit": False})
    try:
        ends = {p: c.get_watermark_offsets(confluent_kafka.TopicPartition(topic, p), timeout=10)[1]
                for p in range(PARTITIONS)}
        c.assign([confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                  for p in range(PARTITIONS)])
        out: list[tuple[int, int, bytes]] = []
        next_offset = {p: 0 for p in range(PARTITIONS)}
        deadline = time.monotonic() + 20
        while any(next_offset[p] < ends[p] for p in ends):
            assert time.monotonic() < deadline, f"log not read to its end {ends}: at {next_offset}"
            for m in c.consume(num_messages=5000, timeout=0.2):
                assert not m.error(), m.error()
                out.append((m.partition(), m.offset(), m.value()))
                next_offset[m.partition()] = m.offset() + 1
        return out
    finally:
        c.close()


async def test_idempotent_producer_through_sigkill(tmp_path: Path, new_topic: Any, proxy_seed: int,
                                                   chaos_table: Any) -> None:
    seed = proxy_seed  # tests/chaos/conftest.py: seeds 0..min(--chaos-seeds, 4)-1
    rng = random.Random(seed)
    port = free_port()
    broker = EmbeddedBroker("noida", port=port, data_dir=tmp_path / "data", log_dir=tmp_path / "log")
    await broker.astart()
    try:
        await _run(broker, rng, new_topic(), seed, chaos_table)
    finally:
        await broker.astop()


async def _run(broker: EmbeddedBroker, rng: random.Random, topic: str, seed: int, table: Any) -> None:
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, PARTITIONS)
    await asyncio.sleep(SNAPSHOT_S)  # the topic itself must be in noida-db's snapshot before the kill
    kill_after = rng.uniform(1.2, 2.0)  # seconds into the stream
    down_for = rng.uniform(0.2, 1.0)
    events: dict[str, float] = {}
    async with FaultProxy(broker.bootstrap) as proxy:
        proxy.watch = {PRODUCE, INIT_PRODUCER_ID}

        async def kill_and_restart() -> None:
            await asyncio.sleep(kill_after)
            events["kill"] = time.monotonic()
            await asyncio.to_thread(kill_hard, broker)
            await asyncio.sleep(down_for)
            await broker.astart()  # same port, same data directory
            events["up"] = time.monotonic()

        sends: list[tuple[bytes, Any]] = []
        acked_at: dict[bytes, float] = {}
        async with Producer(bootstrap_servers=proxy.bootstrap, **PRODUCER) as producer:
            restart = asyncio.create_task(kill_and_restart())
            i = 0
            while not restart.done() or time.monotonic() < events["up"] + 1.0:
                k = i % KEYS
                value = b"k%d:%06d" % (k, i)
                fut = await producer.send(topic, value, key=b"k%d" % k, partition=k % PARTITIONS)
                fut.add_done_callback(lambda f, v=value: acked_at.setdefault(v, time.monotonic()))
                sends.append((value, fut))
                i += 1
                if i % 20 == 0:
                    await asyncio.sleep(0.02)
            await restart
            # The producer must not need a restart: once the broker is back, new sends get through.
            after = len(sends)
            for j in range(40):
                value = b"k0:%06d" % (i + j)
                sends.append((value, await producer.send(topic, value, key=b"k0", partition=0)))
            try:
                await asyncio.wait_for(producer.flush(), 40)
            except Exception as exc:
                pytest.fail(f"seed {seed}: flush after the restart failed: {exc!r}; broker answers "
                            f"{proxy.answer_errors}")
    hanging = [v for v, f in sends if not f.done()]
    assert not hanging, f"seed {seed}: {len(hanging)} sends neither acknowledged nor failed"
    acked = {v: f.result() for v, f in sends if f.exception() is None}
    failed = {v: f.exception() for v, f in sends if f.exception() is not None}
    log = await asyncio.to_thread(_read_log, broker.bootstrap, topic)
    at = {(p, o): v for p, o, v in log}
    counts = collections.Counter(v for _, _, v in log)

    twice = sorted(v for v, n in counts.items() if n > 1)
    assert not twice, f"seed {seed}: records in the log more than once: {twice[:5]}"
    for k in range(KEYS):
        seqs = [int(v.split(b":")[1]) for _, _, v in sorted(log) if v.startswith(b"k%d:" % k)]
        assert seqs == sorted(seqs), f"seed {seed}: key k{k} out of order in the log: {seqs[:20]}"
    late = [(v, failed[v]) for v, _ in sends[after:] if v in failed]
    assert not late, f"seed {seed}: records sent 1 s after the restart still failed: {late[:3]}"
    # noida-db writes its state to disk about once a second, so a SIGKILL loses what it acknowledged in
    # the last moments: only those may be missing, and the producer must have been told something broke.
    lost = sorted(v for v in acked if at.get((acked[v].partition, acked[v].offset)) != v)
    too_old = [v for v in lost if acked_at[v] < events["kill"] - SNAPSHOT_S]
    assert not too_old, (f"seed {seed}: records acknowledged over {SNAPSHOT_S}s before the kill are not in "
                         f"the log at their offsets: {too_old[:5]}; broker answers {proxy.answer_errors}")
    if lost:
        noticed = [e for e in failed.values() if isinstance(e, (OutOfOrderSequenceNumberError,
                                                                UnknownProducerIdError))]
        assert noticed, (f"seed {seed}: the broker lost {len(lost)} acknowledged records and no send failed "
                         f"with a sequence error; failures {collections.Counter(map(repr, failed.values()))}")
    written_anyway = sorted(v for v in failed if v in counts)
    table.add(seed, "aiokafka_lite/noida-sigkill", len(acked), len(lost), len(twice), 0, len(failed))
    kinds = collections.Counter(type(e).__name__ for e in failed.values())
    samples = {type(e).__name__: str(e)[:160] for e in failed.values()}
    print(f"seed {seed}: killed {kill_after:.2f}s into the stream, down {down_for:.2f}s; {len(sends)} sent, "
          f"{len(acked)} acknowledged ({len(lost)} lost by the broker), {len(failed)} failed "
          f"({len(written_anyway)} of them in the log anyway) {dict(kinds)} {samples}; broker error answers "
          f"{collections.Counter((a, c) for _, a, c in proxy.answer_errors)}")

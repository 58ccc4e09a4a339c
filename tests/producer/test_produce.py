"""The producer against real brokers (Tansu and noida-db): what it writes, read back by confluent-kafka."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable

import pytest
from _kafka_proxy import KafkaProxy
from _producer_peers import aread_confluent, create_topic

from aiokafka_lite import Producer, RecordMetadata, TopicPartition, records
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import (
    ConfigError,
    IllegalArgumentError,
    KafkaTimeoutError,
    ProducerClosedError,
    RecordTooLargeError,
    SerializationError,
)
from aiokafka_lite.producer import ProducerRecord, murmur2
from aiokafka_lite.producer.core import YIELD_BYTES

CODECS = [None, "gzip", "snappy", "lz4", "zstd"]


@pytest.mark.parametrize("codec", CODECS, ids=[str(c) for c in CODECS])
async def test_every_codec_round_trips(broker: EmbeddedBroker, new_topic: Callable[..., str],
                                       codec: str | None) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 2)
    now = int(time.time() * 1000)
    sent = [(f"k{i % 7}".encode() if i % 3 else None, b"v%d-" % i + b"z" * (i % 50),
             [("h", b"%d" % i), ("empty", b""), ("none", None)] if i % 5 == 0 else [], now - i)
            for i in range(300)]
    async with Producer(bootstrap_servers=broker.bootstrap, compression_type=codec, linger_ms=2) as p:
        futs = [await p.send(topic, v, key=k, headers=h or None, timestamp_ms=ts) for k, v, h, ts in sent]
        mds = [await f for f in futs]
    assert {md.partition for md in mds} <= {0, 1}
    got = await aread_confluent(broker.bootstrap, topic, len(sent))
    assert len(got) == len(sent)
    by_pos = {(g.partition, g.offset): g for g in got}
    for (k, v, h, ts), md in zip(sent, mds, strict=True):
        g = by_pos[(md.partition, md.offset)]
        assert (g.key, g.value, g.timestamp, g.timestamp_type) == (k, v, ts, 0)
        assert g.headers == h
        assert md.timestamp == ts and md.log_append_time == -1


@pytest.mark.parametrize("acks", [0, 1, "all"])
async def test_acks(broker: EmbeddedBroker, new_topic: Callable[..., str], acks: int | str) -> None:
    topic = new_topic()
    async with Producer(bootstrap_servers=broker.bootstrap, acks=acks) as p:
        futs = [await p.send(topic, b"%d" % i, partition=0) for i in range(50)]
        await p.flush()
        mds = [f.result() for f in futs]
    if acks == 0:
        assert all(md.offset == -1 for md in mds)  # nothing comes back with acks=0
    else:
        assert [md.offset for md in mds] == list(range(50))
    got = await aread_confluent(broker.bootstrap, topic, 50)
    assert [g.value for g in sorted(got, key=lambda g: g.offset)] == [b"%d" % i for i in range(50)]


async def test_order_per_partition_and_offsets(broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 3)
    async with Producer(bootstrap_servers=broker.bootstrap, linger_ms=1, batch_size=2000) as p:
        futs = [await p.send(topic, b"%06d" % i, key=b"%d" % (i % 10)) for i in range(3000)]
        mds = [await f for f in futs]
    per_part: dict[int, list[int]] = {}
    for md in mds:
        per_part.setdefault(md.partition, []).append(md.offset)
    for offsets in per_part.values():
        assert offsets == list(range(len(offsets)))  # in send order, no gaps
    got = await aread_confluent(broker.bootstrap, topic, 3000)
    for p_id in per_part:
        values = [int(g.value) for g in sorted(got, key=lambda g: g.offset) if g.partition == p_id]  # type: ignore[arg-type]
        assert values == sorted(values)


async def test_log_append_time(noida: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, noida.bootstrap, topic, 1,
                            {"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    async with Producer(bootstrap_servers=noida.bootstrap) as p:
        md = await p.send_and_wait(topic, b"v", timestamp_ms=before - 3_600_000)
    assert md.log_append_time >= before - 1000
    assert md.timestamp == md.log_append_time
    got = await aread_confluent(noida.bootstrap, topic, 1)
    assert got[0].timestamp_type == 1 and got[0].timestamp == md.log_append_time


async def test_send_many(broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 3)
    values = [b"%05d" % i for i in range(5000)]
    keys = [b"k%d" % (i % 13) for i in range(5000)]
    async with Producer(bootstrap_servers=broker.bootstrap, batch_size=4000, compression_type="lz4") as p:
        keyless = await p.send_many(topic, values)
        keyed = await p.send_many(topic, values, keys)
        pinned = await p.send_many(topic, values[:10], partition=2,
                                   headers=[[("i", b"%d" % i)] for i in range(10)])
        assert await keyless == 5000 and await keyed == 5000 and await pinned == 10
        one = await p.send_and_wait(topic, b"x", key=b"k3")
    mds = keyed.metadata()
    assert all(isinstance(m, RecordMetadata) for m in mds)
    assert {m.partition for m in mds if isinstance(m, RecordMetadata) and keys[mds.index(m)] == b"k3"} == {
        one.partition}
    assert {m.partition for m in pinned.metadata()} == {2}  # type: ignore[union-attr]
    got = await aread_confluent(broker.bootstrap, topic, 10011)
    assert len(got) == 10011
    assert sorted(g.value for g in got if g.key is None and not g.headers) == sorted(values)
    by_pos = {(g.partition, g.offset): g for g in got}
    for m, k, v in zip(mds, keys, values, strict=True):
        assert isinstance(m, RecordMetadata)
        assert (by_pos[(m.partition, m.offset)].key, by_pos[(m.partition, m.offset)].value) == (k, v)
    # Keyless records spread over the partitions by whole batches (uniform sticky).
    assert len({m.partition for m in keyless.metadata()}) == 3  # type: ignore[union-attr]


async def test_send_many_from_one_buffer(broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """send_many's buffer input: a ValueBuffer and pyarrow arrays (nulls, a slice, large offsets) are
    produced as the values they hold, keyless, keyed and pinned, and read back equal."""
    import pyarrow as pa

    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 3)
    values = [b"%05d-" % i + b"v" * (i % 50) if i % 7 else None for i in range(3000)]
    data = b"".join(v for v in values if v is not None)
    offsets, pos = [0], 0
    for v in values:
        pos += len(v) if v is not None else 0
        offsets.append(pos)
    plain = [v if v is not None else b"" for v in values]  # a ValueBuffer without validity: empty values
    arr = pa.array(values, type=pa.large_binary())
    keys = [b"k%d" % (i % 11) for i in range(1000)]
    async with Producer(bootstrap_servers=broker.bootstrap, batch_size=4000, linger_ms=5) as p:
        b1 = await p.send_many(topic, records.ValueBuffer(data, offsets))
        b2 = await p.send_many(topic, arr.slice(1000, 1000), keys)
        b3 = await p.send_many(topic, pa.array(values[:500], type=pa.binary()), partition=1)
        assert (await b1, await b2, await b3) == (3000, 1000, 500)
        with pytest.raises(IllegalArgumentError):  # an offset past the data: refused before any append
            await p.send_many(topic, records.ValueBuffer(b"abc", [0, 2, 9]))
    got = await aread_confluent(broker.bootstrap, topic, 4500)
    by_pos = {(g.partition, g.offset): g for g in got}
    for bulk, want, want_keys in ((b1, plain, None), (b2, values[1000:2000], keys), (b3, values[:500], None)):
        for i, md in enumerate(bulk.metadata()):
            assert isinstance(md, RecordMetadata)
            g = by_pos[(md.partition, md.offset)]
            assert g.value == want[i]
            assert g.key == (want_keys[i] if want_keys is not None else None)
    assert {m.partition for m in b3.metadata()} == {1}  # type: ignore[union-attr]


async def test_send_many_hands_a_serializer_the_arrow_values(tansu: EmbeddedBroker,
                                                            new_topic: Callable[..., str]) -> None:
    """With a value_serializer, send_many gives it each value as the pyarrow array holds it (a scalar),
    not bytes read from the array's buffers, and takes a ChunkedArray of several chunks: the buffer input
    is for values sent as they are, without a serializer."""
    import pyarrow as pa

    topic = new_topic()
    await asyncio.to_thread(create_topic, tansu.bootstrap, topic, 1)
    seen: list[object] = []

    def serializer(value: object) -> bytes:
        seen.append(value)
        assert isinstance(value, pa.Scalar)
        return b"<%s>" % str(value.as_py()).encode()

    async with Producer(bootstrap_servers=tansu.bootstrap, value_serializer=serializer) as p:
        one = await p.send_many(topic, pa.array(["a", "b"]))
        chunks = await p.send_many(topic, pa.chunked_array([["c"], ["d", "e"]], type=pa.large_string()))
        assert (await one, await chunks) == (2, 3)
    assert len(seen) == 5
    got = await aread_confluent(tansu.bootstrap, topic, 5)
    assert sorted(g.value for g in got) == [b"<a>", b"<b>", b"<c>", b"<d>", b"<e>"]


class _Bug(BaseException):
    """Not an Exception: escapes the metadata loop's handler and ends its task, as a bug there would."""


@pytest.mark.parametrize("how", ["closed", "metadata task died"])
async def test_an_unusable_client_fails_the_pending_records_at_once(tansu: EmbeddedBroker,
                                                                    new_topic: Callable[..., str],
                                                                    how: str) -> None:
    """A producer whose network client was closed under it, or whose metadata task died, can never
    connect again: the Sender fails its records with the client's error at once, and later calls raise it,
    instead of retrying the connect in a loop (one metadata request per turn) until the delivery timeout."""
    from aiokafka_lite.errors import KafkaError
    from aiokafka_lite.protocol.messages.produce import ProduceRequest

    topic = new_topic()
    await asyncio.to_thread(create_topic, tansu.bootstrap, topic, 1)
    async with Producer(bootstrap_servers=tansu.bootstrap, linger_ms=0, request_timeout_ms=1000,
                        delivery_timeout_ms=3000) as p:
        await p.send_and_wait(topic, b"warm-up")
        client = p.client
        expected: tuple[type[BaseException], str]
        if how == "closed":
            await client.close()
            expected = ProducerClosedError, "closed"
        else:
            reached = asyncio.Event()

            def bug(cluster: object) -> None:
                reached.set()
                raise _Bug()

            client.add_metadata_listener(bug)
            client.request_metadata_update()
            await reached.wait()
            await asyncio.sleep(0)  # the task's done callback, which records its death, runs before us
            assert client.unusable_error() is not None
            leader = client.cluster.leader_for(TopicPartition(topic, 0))
            assert leader is not None
            client.close_connection(leader, ProduceRequest)  # the next record needs a new connection
            expected = KafkaError, "metadata task died"
        before = p.metrics()["metadata-request-total"]
        futs = [await p.send(topic, b"after %d" % i) for i in range(3)]
        for fut in futs:
            with pytest.raises(expected[0], match=expected[1]):  # not KafkaTimeoutError after 3 s
                await fut
        assert p.metrics()["metadata-request-total"] - before <= 1
        with pytest.raises(expected[0], match=expected[1]):
            await p.send(topic, b"later")


async def test_keyless_records_are_sticky_per_batch(tansu: EmbeddedBroker,
                                                    new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, tansu.bootstrap, topic, 4)
    async with Producer(bootstrap_servers=tansu.bootstrap, batch_size=5000, linger_ms=50) as p:
        futs = [await p.send(topic, b"x" * 90) for _ in range(2000)]
        mds = [await f for f in futs]
    runs = 1
    for a, b in itertools.pairwise(mds):
        runs += a.partition != b.partition
    # ~100 bytes per record, 5000-byte batches: a switch about every 50 records, never per record.
    assert 2000 / runs > 30
    assert len({m.partition for m in mds}) == 4


async def _through_slow_link(bootstrap: str, topic: str, keyless: bool) -> tuple[int, list[int]]:
    """20,000 records of 100 B to 6 partitions through a link that holds every Produce request 50 ms:
    (batches sent, the partition of each record)."""
    async with KafkaProxy(bootstrap) as proxy:
        proxy.faults.extend([("delay", 0.05)] * 100_000)
        async with Producer(bootstrap_servers=proxy.bootstrap, buffer_memory=4 << 20) as p:
            await p.send_and_wait(topic, b"warm-up", partition=0)
            before = p.metrics()["batch-send-total"]
            futs = [await p.send(topic, b"v" * 100, partition=None if keyless else i % 6)
                    for i in range(20_000)]
            await p.flush()
            batches = p.metrics()["batch-send-total"] - before
    return batches, [(await f).partition for f in futs]


async def test_keyless_records_keep_a_far_link_full(tansu: EmbeddedBroker,
                                                    new_topic: Callable[..., str]) -> None:
    """Keyless records (uniform sticky, KIP-794) behind a slow link go in about as few batches as records
    with their partitions given: a partition's open batch grows while its batch ahead waits for its
    answer (one in flight per partition, rule I2) instead of queueing batch_size batches, and the sticky
    partition moves on when a batch's worth went to it. They used to move one batch_size batch per
    partition per round trip (docs/performance.md)."""
    keyed_topic, keyless_topic = new_topic(), new_topic()
    for topic in (keyed_topic, keyless_topic):
        await asyncio.to_thread(create_topic, tansu.bootstrap, topic, 6)
    keyed, _ = await _through_slow_link(tansu.bootstrap, keyed_topic, keyless=False)
    keyless, partitions = await _through_slow_link(tansu.bootstrap, keyless_topic, keyless=True)
    assert keyless <= 2 * keyed, (keyless, keyed)
    # Still sticky: every partition used, a switch only after a batch's worth (~150 records of 16 KiB).
    runs = 1 + sum(a != b for a, b in itertools.pairwise(partitions))
    assert len(set(partitions)) == 6 and len(partitions) / runs > 100, runs


async def test_a_tight_send_loop_lets_the_sender_go(broker: EmbeddedBroker,
                                                    new_topic: Callable[..., str]) -> None:
    """send() does not wait for the network, but it lets other tasks run once per YIELD_BYTES queued: a
    caller sending in a loop that awaits nothing else has its records on the wire before the loop ends,
    instead of all of them waiting for flush() (or for the batch to need more memory)."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    async with Producer(bootstrap_servers=broker.bootstrap, linger_ms=0, batch_size=4 << 20) as p:
        await p.send_and_wait(topic, b"warm-up", partition=0)  # metadata and connection ready
        before = p.metrics()["request-total"]
        futs, first_request_at = [], None
        # One open batch takes them all: every send after the first is the fast path, except where the
        # batch takes more memory (at 16, 32, 64 KiB ... reserved).
        for i in range(YIELD_BYTES * 3 // 100):
            futs.append(await p.send(topic, b"v" * 100, partition=0))
            if first_request_at is None and p.metrics()["request-total"] > before:
                first_request_at = i
        assert first_request_at is not None and first_request_at <= YIELD_BYTES // 100 + 2, first_request_at
        await p.flush()
        assert all(f.done() and f.exception() is None for f in futs)


async def test_a_trickle_to_one_partition_keeps_one_request_in_flight(broker: EmbeddedBroker,
                                                                      new_topic: Callable[..., str]) -> None:
    """Self-clocking (producer/accumulator.py): records sent one at a time with linger_ms=0 go as one
    request per answer, holding what came meanwhile, not as a request each up to five in flight."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 1)
    async with Producer(bootstrap_servers=broker.bootstrap, linger_ms=0, batch_size=1 << 20,
                        enable_idempotence=False, max_in_flight_requests_per_connection=5) as p:
        await p.send_and_wait(topic, b"warm-up", partition=0)
        before = p.metrics()["batch-send-total"]
        futs, most_in_flight = [], 0
        for i in range(400):
            futs.append(await p.send(topic, b"%04d" % i, partition=0))
            await asyncio.sleep(0)  # the Sender's turn after every record
            most_in_flight = max(most_in_flight, p.metrics()["requests-in-flight"])
        await p.flush()
        offsets = [(await f).offset for f in futs]
        batches = p.metrics()["batch-send-total"] - before
    assert most_in_flight == 1, most_in_flight
    assert offsets == sorted(offsets) and len(set(offsets)) == 400
    assert batches < 400, batches


async def test_large_batches_reuse_their_stores_and_arrive_intact(broker: EmbeddedBroker,
                                                                  new_topic: Callable[..., str]) -> None:
    """StorePool (records/_core_pool.pxi): once the broker acknowledged a large batch and nothing holds
    it, its store takes the next batch's records; what arrives is still every value as sent (confluent
    reads them back). Were the producer to keep acknowledged batches, the pool would stay empty."""
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 2)
    values = [bytes([65 + i % 26]) * 16384 + b"%06d" % i for i in range(600)]
    async with Producer(bootstrap_servers=broker.bootstrap, linger_ms=5, batch_size=256 * 1024,
                        max_request_size=4 << 20) as p:
        stores = p._acc.stores if p._acc is not None else None
        for rnd in range(3):
            futs = [await p.send(topic, v, partition=i % 2) for i, v in enumerate(values[rnd * 200:][:200])]
            await p.flush()
            assert all(f.exception() is None for f in futs)
            if rnd == 0 and records.IMPLEMENTATION == "cython":  # the pure twin has no stores to pool
                assert stores is not None and stores.idle > 256 * 1024  # acknowledged: back in the pool
    got = await aread_confluent(broker.bootstrap, topic, 600)
    assert sorted(g.value for g in got) == sorted(values)
    for part in (0, 1):
        assert [g.value for g in sorted((g for g in got if g.partition == part), key=lambda g: g.offset)] \
            == values[part::2]


async def test_serializers_interceptors_and_from_config(broker: EmbeddedBroker,
                                                        new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    acks: list[tuple[RecordMetadata | None, BaseException | None]] = []

    class Tagger:
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            return record._replace(headers=[("tag", b"1")])

        def on_acknowledgement(self, md: RecordMetadata | None, exc: BaseException | None) -> None:
            acks.append((md, exc))

    class Broken:
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            raise RuntimeError("interceptors must not break producing")

    p = Producer.from_config({"bootstrap.servers": broker.bootstrap, "linger.ms": "1", "acks": "all",
                              "key.serializer": str.encode, "value.serializer": lambda v: repr(v).encode(),
                              "interceptors": [Broken(), Tagger()]})
    assert p.config.linger_ms == 1
    async with p:
        md = await p.send_and_wait(topic, {"a": 1}, key="k")
    assert acks == [(md, None)]
    got = await aread_confluent(broker.bootstrap, topic, 1)
    assert (got[0].key, got[0].value, got[0].headers) == (b"k", b"{'a': 1}", [("tag", b"1")])

    async with Producer(bootstrap_servers=broker.bootstrap, value_serializer=lambda v: 1 / 0) as p2:
        with pytest.raises(SerializationError, match="value_serializer failed"):
            await p2.send(topic, "x")


async def test_bad_input_gets_clear_errors(broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    with pytest.raises(ConfigError, match="linger_ms"):
        Producer(bootstrap_servers=broker.bootstrap, linger_ms=-1)
    with pytest.raises(ConfigError, match="unknown setting 'lingerms'"):
        Producer(bootstrap_servers=broker.bootstrap, lingerms=1)
    topic = new_topic()
    async with Producer(bootstrap_servers=broker.bootstrap, max_request_size=10_000) as p:
        with pytest.raises(RecordTooLargeError, match="max_request_size=10000"):
            await p.send(topic, b"x" * 20_000)
        with pytest.raises(SerializationError, match="value must be bytes"):
            await p.send(topic, "text")
        with pytest.raises(IllegalArgumentError, match="partition"):
            await p.send(topic, b"x", partition=-1)
        with pytest.raises(IllegalArgumentError, match="timestamp_ms"):
            await p.send(topic, b"x", timestamp_ms=-5)
        with pytest.raises(IllegalArgumentError, match="header"):
            await p.send(topic, b"x", headers=[(1, b"x")])  # type: ignore[list-item]
        with pytest.raises(IllegalArgumentError, match="topic"):
            await p.send("", b"x")
        md = await p.send_and_wait(topic, b"still fine")
        assert md.offset == 0
    with pytest.raises(ProducerClosedError):
        await p.send(topic, b"after stop")
    with pytest.raises(Exception, match="not started"):
        await Producer(bootstrap_servers=broker.bootstrap).send(topic, b"x")


async def test_unknown_topic_times_out_naming_it(broker: EmbeddedBroker,
                                                 new_topic: Callable[..., str]) -> None:
    topic = new_topic("missing")
    async with Producer(bootstrap_servers=broker.bootstrap, max_block_ms=500,
                        allow_auto_create_topics=False) as p:
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match=f"topic '{topic}' not present in metadata after 500 ms"):
            await p.send(topic, b"x")
        assert 0.4 < time.monotonic() - t0 < 5
        with pytest.raises(IllegalArgumentError, match="illegal topic name"):
            await p.send("bad/name", b"x")


async def test_partitions_for_metrics_and_explicit_partition_wait(broker: EmbeddedBroker,
                                                                  new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 3)
    async with Producer(bootstrap_servers=broker.bootstrap, max_block_ms=300, compression_type="gzip") as p:
        assert await p.partitions_for(topic) == {0, 1, 2}
        with pytest.raises(KafkaTimeoutError, match="partition 7 of topic"):
            await p.send(topic, b"x", partition=7)
        for i in range(100):
            await p.send(topic, b"y" * 100, partition=i % 3)
        await p.flush()
        m = p.metrics()
    assert m["record-send-total"] == 100 and m["record-error-total"] == 0
    assert m["byte-total"] > 0 and 0 < m["compression-rate-avg"] < 0.5
    assert m["batch-send-total"] >= 3 and m["request-latency-avg"] > 0
    assert m["buffer-available-bytes"] == m["buffer-total-bytes"] and m["requests-in-flight"] == 0


async def test_flush_and_stop_deliver_everything(broker: EmbeddedBroker,
                                                 new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    p = Producer(bootstrap_servers=broker.bootstrap, linger_ms=10_000, delivery_timeout_ms=40_000)
    await p.start()
    futs = [await p.send(topic, b"%d" % i, partition=0) for i in range(10)]
    await p.flush()  # does not wait 10 s for linger
    assert all(f.done() for f in futs)
    late = [await p.send(topic, b"late%d" % i, partition=0) for i in range(10)]
    t0 = time.monotonic()
    await p.stop()  # flushes too
    assert time.monotonic() - t0 < 5
    assert [f.result().offset for f in futs + late] == list(range(20))
    assert TopicPartition(topic, 0) == futs[0].result().topic_partition


async def test_partitioner_choices_on_a_broker(broker: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    await asyncio.to_thread(create_topic, broker.bootstrap, topic, 3)
    seen: list[tuple[bytes | None, list[int], list[int]]] = []

    def mine(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
        seen.append((key, all_partitions, available))
        return 2

    async with Producer(bootstrap_servers=broker.bootstrap, partitioner="round_robin") as p:
        rr = [(await p.send_and_wait(topic, b"x", key=b"same")).partition for _ in range(6)]
    assert rr in ([0, 1, 2, 0, 1, 2], [1, 2, 0, 1, 2, 0], [2, 0, 1, 2, 0, 1])  # keys ignored
    async with Producer(bootstrap_servers=broker.bootstrap, partitioner=mine) as p:
        assert (await p.send_and_wait(topic, b"x", key=b"k")).partition == 2
        assert (await p.send_and_wait(topic, b"x")).partition == 2
    assert seen == [(b"k", [0, 1, 2], [0, 1, 2]), (None, [0, 1, 2], [0, 1, 2])]
    async with Producer(bootstrap_servers=broker.bootstrap, partitioner="murmur2") as p:
        # librdkafka's murmur2: a missing key hashes like b"" -- always the same partition.
        parts = {(await p.send_and_wait(topic, b"x")).partition for _ in range(20)}
        assert parts == {(murmur2(b"") & 0x7FFFFFFF) % 3}


async def test_a_bad_header_fails_alone(tansu: EmbeddedBroker, new_topic: Callable[..., str]) -> None:
    """A header value that is not bytes is refused before any batch is touched: the producer goes on
    (it used to leave an empty batch behind that killed the Sender after linger_ms)."""
    topic = new_topic()
    async with Producer(bootstrap_servers=tansu.bootstrap, linger_ms=5) as p:
        await p.send_and_wait(topic, b"first", partition=0)
        for bad in ([("h", "str")], [(b"k", b"v")], [("h",)], "h"):
            with pytest.raises(IllegalArgumentError):
                await p.send(topic, b"v", partition=0, headers=bad)  # type: ignore[arg-type]
        with pytest.raises(IllegalArgumentError):
            await p.send_many(topic, [b"a", b"b"], partition=0, headers=[[("h", b"ok")], [("h", 1)]])
        await asyncio.sleep(0.05)  # past linger_ms: an empty batch would have reached the Sender
        md = await p.send_and_wait(topic, b"after", partition=0, headers=[("h", b"ok")])
        assert md.offset == 1

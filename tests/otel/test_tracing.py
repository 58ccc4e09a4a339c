"""OpenTelemetry tracing and metrics on Tansu with the real SDK, and interop with the community
instrumentations of aiokafka (opentelemetry-instrumentation-aiokafka) and confluent-kafka.

What the community packages inject was read from their source (0.66b1): aiokafka's ``_wrap_send`` and
confluent-kafka's ``wrap_produce`` call ``propagate.inject`` with the global propagator into the record's
headers as ``(str, bytes)`` pairs (the ``send`` span's context); aiokafka's ``_wrap_getone`` extracts
from ``record.headers`` and starts its ``{topic} receive`` CONSUMER span with that context as parent.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import aiokafka
from opentelemetry.trace import SpanKind

from aiokafka_lite import Consumer, Producer, TopicPartition
from aiokafka_lite.otel import KafkaInstrumentor

BASE = {"request_timeout_ms": 10000}


def _consumer(bootstrap: str, **settings: Any) -> Consumer:
    return Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest", **BASE, **settings)


async def test_send_and_process_spans_continue_one_trace(tansu: Any, new_topic: Any,
                                                         instrumented: Any) -> None:
    topic = new_topic()
    tel = instrumented
    async with Producer(bootstrap_servers=tansu.bootstrap, client_id="otel-p", **BASE) as producer:
        assert producer._otel is not None and not producer._plain
        mds = [await (await producer.send(topic, b"v%d" % i, key=b"k%d" % i, partition=0,
                                          headers=[("app", b"x")] if i == 0 else None)) for i in range(3)]
    sends = tel.spans(f"send {topic}")
    assert len(sends) == 3
    by_offset = sorted(sends, key=lambda s: s.attributes["messaging.kafka.offset"])
    for span, md in zip(by_offset, mds, strict=True):
        assert span.kind is SpanKind.PRODUCER
        a = span.attributes
        assert a["messaging.system"] == "kafka"
        assert a["messaging.operation.name"] == "send" and a["messaging.operation.type"] == "send"
        assert a["messaging.destination.name"] == topic
        assert a["messaging.destination.partition.id"] == "0"
        assert a["messaging.kafka.offset"] == md.offset  # set at the broker's ack
        assert a["messaging.client.id"] == "otel-p"
        assert a["server.address"] == "127.0.0.1" and a["server.port"] == int(tansu.bootstrap.split(":")[1])
    by_key = {s.attributes["messaging.kafka.message.key"]: s for s in sends}

    tp = TopicPartition(topic, 0)
    consumer = _consumer(tansu.bootstrap, group_id=f"g-{topic}", client_id="otel-c")
    await consumer.start()
    try:
        consumer.assign([tp])
        seen = []
        async for record in consumer:
            # The process span is current while the record is handled: a span made here is its child.
            with tel.tracer_provider.get_tracer("app").start_as_current_span("handler"):
                pass
            seen.append(record)
            assert record.headers[0] == ("app", b"x") if record.offset == 0 else True
            if len(seen) == 3:
                break
        assert len(tel.open_spans.open) == 1  # the last record's process span: still being handled
        await consumer.commit()
    finally:
        await consumer.stop()
    assert tel.open_spans.open == {}  # stop() ended it
    processes = sorted(tel.spans(f"process {topic}"), key=lambda s: s.attributes["messaging.kafka.offset"])
    assert [s.attributes["messaging.kafka.offset"] for s in processes] == [0, 1, 2]
    handlers = tel.spans("handler")
    for i, span in enumerate(processes):
        send = by_key[f"k{i}"]
        assert span.kind is SpanKind.CONSUMER
        assert span.context.trace_id == send.context.trace_id
        assert span.parent.span_id == send.context.span_id
        a = span.attributes
        assert a["messaging.operation.name"] == "process" and a["messaging.operation.type"] == "process"
        assert a["messaging.consumer.group.name"] == f"g-{topic}"
        assert a["messaging.destination.partition.id"] == "0" and a["messaging.kafka.message.key"] == f"k{i}"
        assert a["messaging.client.id"] == "otel-c"
        assert any(h.parent.span_id == span.context.span_id for h in handlers)
    # Each process span covers the handling of its record: it ends before the next one starts.
    for a_span, b_span in itertools.pairwise(processes):
        assert a_span.end_time <= b_span.start_time
    commits = tel.spans("commit")
    assert len(commits) == 1 and commits[0].kind is SpanKind.CLIENT
    assert commits[0].attributes["messaging.operation.name"] == "commit"
    assert commits[0].attributes["messaging.destination.name"] == topic

    assert tel.metric_sum("messaging.client.sent.messages", **{"messaging.destination.name": topic}) == 3
    assert tel.metric_sum("messaging.client.consumed.messages", **{"messaging.destination.name": topic}) == 3
    assert tel.metric_sum("messaging.process.duration", **{"messaging.destination.name": topic}) == 3
    assert tel.metric_sum("messaging.client.operation.duration", **{"messaging.destination.name": topic,
                                                                    "messaging.operation.name": "send"}) == 3


async def test_poll_span_links_to_each_record_and_counts(tansu: Any, new_topic: Any,
                                                        instrumented: Any) -> None:
    topic = new_topic()
    tel = instrumented
    async with Producer(bootstrap_servers=tansu.bootstrap, **BASE) as producer:
        futs = [await producer.send(topic, b"v", partition=1) for _ in range(5)]
        bulk = await producer.send_many(topic, [b"a", b"b", b"c"], partition=1)
        await asyncio.gather(*futs)
        assert await bulk == 3
    sends = tel.spans(f"send {topic}")
    assert len(sends) == 6
    many = [s for s in sends if s.attributes.get("messaging.batch.message_count") == 3]
    assert len(many) == 1
    async with _consumer(tansu.bootstrap) as consumer:
        consumer.assign([TopicPartition(topic, 1)])
        got = 0
        while got < 8:
            got += sum(len(v) for v in (await consumer.poll(timeout_ms=2000)).values())
        polls = tel.spans(f"poll {topic}")
        consumer.seek(TopicPartition(topic, 1), 0)
        arrow = 0
        while arrow < 8:
            arrow += sum(b.num_rows for b in (await consumer.poll_arrow(timeout_ms=2000)).values())
    arrow_polls = tel.spans(f"poll {topic}")[len(polls):]
    assert sum(p.attributes["messaging.batch.message_count"] for p in arrow_polls) == 8
    assert tel.open_spans.open == {}
    assert polls and sum(p.attributes["messaging.batch.message_count"] for p in polls) == 8
    for p in polls:
        assert p.kind is SpanKind.CLIENT and p.attributes["messaging.operation.type"] == "receive"
    linked = {link.context.span_id for p in polls for link in p.links}
    assert {s.context.span_id for s in sends} == linked  # five single sends and the send_many span
    assert tel.metric_sum("messaging.client.sent.messages", **{"messaging.destination.name": topic}) == 8
    assert tel.metric_sum("messaging.client.consumed.messages", **{"messaging.destination.name": topic}) == 16


async def test_aiokafka_record_continues_into_our_process_span(tansu: Any, new_topic: Any,
                                                               instrumented: Any) -> None:
    from opentelemetry.instrumentation.aiokafka import AIOKafkaInstrumentor

    topic = new_topic()
    tel = instrumented
    AIOKafkaInstrumentor().instrument(tracer_provider=tel.tracer_provider)
    try:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=tansu.bootstrap)
        await producer.start()
        try:
            await producer.send_and_wait(topic, b"from-aiokafka", partition=0)
        finally:
            await producer.stop()
    finally:
        AIOKafkaInstrumentor().uninstrument()
    (theirs,) = tel.spans(f"{topic} send")  # the community package names spans "{topic} send"
    async with _consumer(tansu.bootstrap) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        record = await consumer.getone()
        assert any(k == "traceparent" for k, _ in record.headers)
    (ours,) = tel.spans(f"process {topic}")
    assert ours.context.trace_id == theirs.context.trace_id
    assert ours.parent.span_id == theirs.context.span_id


async def test_our_record_continues_into_aiokafka_consumer_span(tansu: Any, new_topic: Any,
                                                                instrumented: Any) -> None:
    from opentelemetry.instrumentation.aiokafka import AIOKafkaInstrumentor

    topic = new_topic()
    tel = instrumented
    async with Producer(bootstrap_servers=tansu.bootstrap, **BASE) as producer:
        await producer.send_and_wait(topic, b"from-us", partition=0)
    (ours,) = tel.spans(f"send {topic}")
    AIOKafkaInstrumentor().instrument(tracer_provider=tel.tracer_provider)
    try:
        consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers=tansu.bootstrap, auto_offset_reset="earliest")
        await consumer.start()
        try:
            consumer.assign([aiokafka.TopicPartition(topic, 0)])
            record = await asyncio.wait_for(consumer.getone(), 20)
            assert record.value == b"from-us"
        finally:
            await consumer.stop()
    finally:
        AIOKafkaInstrumentor().uninstrument()
    (theirs,) = tel.spans(f"{topic} receive")
    assert theirs.context.trace_id == ours.context.trace_id
    assert theirs.parent.span_id == ours.context.span_id


async def test_confluent_record_continues_into_our_process_span(tansu: Any, new_topic: Any,
                                                                instrumented: Any) -> None:
    import confluent_kafka
    from opentelemetry.instrumentation.confluent_kafka import ConfluentKafkaInstrumentor

    topic = new_topic()
    tel = instrumented
    producer = ConfluentKafkaInstrumentor.instrument_producer(
        confluent_kafka.Producer({"bootstrap.servers": tansu.bootstrap}), tracer_provider=tel.tracer_provider)

    def produce() -> None:
        producer.produce(topic, b"from-confluent", partition=0)
        assert producer.flush(20) == 0

    await asyncio.to_thread(produce)
    (theirs,) = tel.spans(f"{topic} send")
    async with _consumer(tansu.bootstrap) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        await consumer.getone()
    (ours,) = tel.spans(f"process {topic}")
    assert ours.context.trace_id == theirs.context.trace_id
    assert ours.parent.span_id == theirs.context.span_id


async def test_per_client_providers_and_uninstrument(tansu: Any, new_topic: Any, telemetry: Any) -> None:
    topic = new_topic()
    tel = telemetry
    tel.exporter.clear()
    # Per client: only the producer given providers is traced.
    async with Producer(bootstrap_servers=tansu.bootstrap, tracer_provider=tel.tracer_provider,
                        meter_provider=tel.meter_provider, **BASE) as traced, \
            Producer(bootstrap_servers=tansu.bootstrap, **BASE) as plain:
        assert plain._otel is None and plain._plain
        await traced.send_and_wait(topic, b"a", partition=0)
        await plain.send_and_wait(topic, b"b", partition=0)
    assert len(tel.spans(f"send {topic}")) == 1

    # Globally instrumented, then uninstrumented: new clients are plain again and old ones go quiet.
    tel.exporter.clear()
    KafkaInstrumentor().instrument(tracer_provider=tel.tracer_provider, meter_provider=tel.meter_provider)
    try:
        async with Producer(bootstrap_servers=tansu.bootstrap, **BASE) as before:
            await before.send_and_wait(topic, b"c", partition=0)
            assert len(tel.spans(f"send {topic}")) == 1
            KafkaInstrumentor().uninstrument()
            await before.send_and_wait(topic, b"d", partition=0)
            async with Producer(bootstrap_servers=tansu.bootstrap, **BASE) as after:
                assert after._otel is None and after._plain
                await after.send_and_wait(topic, b"e", partition=0)
            async with _consumer(tansu.bootstrap) as consumer:
                assert consumer._otel is None
                consumer.assign([TopicPartition(topic, 0)])
                await consumer.getone()
    finally:
        KafkaInstrumentor().uninstrument()
    assert len(tel.spans()) == 1


async def test_cancelled_record_future_ends_its_span_at_delivery(tansu: Any, new_topic: Any,
                                                                 instrumented: Any) -> None:
    """The caller cancelling a record's future (a timeout) neither breaks the send span's callback nor
    ends the span early: it ends with the offset the record was still delivered at."""
    topic = new_topic()
    errors: list[Any] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: errors.append(ctx))
    async with Producer(bootstrap_servers=tansu.bootstrap, linger_ms=3000, **BASE) as producer:
        fut = await producer.send(topic, b"v", partition=0)
        assert fut.cancel() is True
        await asyncio.sleep(0)
        assert instrumented.spans(f"send {topic}") == []
        await producer.flush()
        await asyncio.sleep(0)
    (span,) = instrumented.spans(f"send {topic}")
    assert span.attributes["messaging.kafka.offset"] == 0
    assert errors == []

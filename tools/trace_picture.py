"""Draw docs/img/trace-example.png: the worked example of docs/observability.md, from real spans.

Starts an embedded Tansu broker, runs the example service (an order placed over HTTP-less asyncio code,
sent through Kafka to a payment worker, whose receipt goes through Kafka to a mailer), with
aiokafka_lite instrumented by ``KafkaInstrumentor`` and the OpenTelemetry SDK's in-memory exporter, then
draws every span of the trace as a timeline (matplotlib), one row per span, indented by depth.

    PYTHONPATH=. python tools/trace_picture.py [--out docs/img/trace-example.png]
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from aiokafka_lite import Admin, Consumer, NewTopic, Producer
from aiokafka_lite.otel import KafkaInstrumentor

ROOT = Path(__file__).resolve().parent.parent

# -- the example service (the code docs/observability.md shows) ----------------------------------------

tracer = trace.get_tracer("shop")


async def place_order(producer: Producer, order_id: str) -> None:
    with tracer.start_as_current_span("POST /orders"):
        await asyncio.sleep(0.002)  # validate, store
        await producer.send_and_wait("orders", b'{"total": 42}', key=order_id.encode())


GROUP = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 300, "auto_offset_reset": "earliest"}


async def joined(consumer: Consumer) -> None:
    """Until the group gave this consumer its partitions (so the picture shows Kafka, not the join)."""
    while not consumer.assignment():
        await consumer.poll(timeout_ms=100)


async def payment_worker(bootstrap: str, ready: asyncio.Event) -> None:
    async with Consumer("orders", bootstrap_servers=bootstrap, group_id="payments", **GROUP) as orders, \
            Producer(bootstrap_servers=bootstrap) as producer:
        await joined(orders)
        ready.set()
        async for order in orders:  # a "process orders" span covers each iteration's body
            with tracer.start_as_current_span("charge card"):
                await asyncio.sleep(0.004)
            await producer.send_and_wait("receipts", b"paid", key=order.key)
            await orders.commit()
            break


async def mailer(bootstrap: str, ready: asyncio.Event) -> None:
    async with Consumer("receipts", bootstrap_servers=bootstrap, group_id="mailer", **GROUP) as receipts:
        await joined(receipts)
        ready.set()
        async for _receipt in receipts:
            with tracer.start_as_current_span("send email"):
                await asyncio.sleep(0.003)
            break


async def run(bootstrap: str) -> None:
    async with Admin(bootstrap_servers=bootstrap) as admin:
        await admin.create_topics([NewTopic("orders", 1, 1), NewTopic("receipts", 1, 1)])
    async with Producer(bootstrap_servers=bootstrap) as producer:
        ready = [asyncio.Event(), asyncio.Event()]
        workers = [asyncio.create_task(payment_worker(bootstrap, ready[0])),
                   asyncio.create_task(mailer(bootstrap, ready[1]))]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in ready)), 60)
        await place_order(producer, "order-17")
        await asyncio.gather(*workers)

# -- the picture ---------------------------------------------------------------------------------------


_COLORS = {"SERVER": "#4C72B0", "INTERNAL": "#8172B2", "PRODUCER": "#DD8452", "CONSUMER": "#55A868",
           "CLIENT": "#937860"}


def draw(spans: list[Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    trace_id = spans[0].context.trace_id
    spans = [s for s in spans if s.context.trace_id == trace_id]
    by_id = {s.context.span_id: s for s in spans}
    children: dict[int | None, list[Any]] = {}
    for s in spans:
        parent = s.parent.span_id if s.parent is not None and s.parent.span_id in by_id else None
        children.setdefault(parent, []).append(s)
    rows: list[tuple[int, Any]] = []

    def walk(parent: int | None, depth: int) -> None:
        for s in sorted(children.get(parent, []), key=lambda x: x.start_time):
            rows.append((depth, s))
            walk(s.context.span_id, depth + 1)

    walk(None, 0)
    t0 = min(s.start_time for s in spans)
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(rows) + 1.4))
    for i, (_depth, s) in enumerate(rows):
        start, end = (s.start_time - t0) / 1e6, (s.end_time - t0) / 1e6
        kind = s.kind.name
        ax.barh(i, max(end - start, 0.05), left=start, color=_COLORS.get(kind, "#777777"), height=0.6)
        attrs = s.attributes or {}
        extra = ""
        if "messaging.kafka.offset" in attrs:
            part = attrs.get("messaging.destination.partition.id")
            extra = f"  [p{part} @{attrs['messaging.kafka.offset']}]"
        ax.text(end + 0.2, i, f"{end - start:.1f} ms{extra}", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{'    ' * d}{s.name} ({s.kind.name.lower()})" for d, s in rows], fontsize=8,
                       ha="left", family="monospace")
    ax.tick_params(axis="y", pad=215, length=0)
    ax.invert_yaxis()
    ax.set_xlabel("ms since the trace began")
    ax.set_xlim(0, (max(s.end_time for s in spans) - t0) / 1e6 * 1.25)
    ax.set_title(f"One trace through Kafka (trace id {trace_id:032x}), spans exported by the "
                 "OpenTelemetry SDK", fontsize=9)
    kinds = sorted({s.kind.name for _, s in rows})
    ax.legend(handles=[Patch(color=_COLORS.get(k, "#777777"), label=k) for k in kinds], fontsize=8,
              loc="lower right")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "trace-example.png")
    args = ap.parse_args()
    from aiokafka_lite.embedded import start_broker

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    KafkaInstrumentor().instrument()  # the global provider set just above
    broker = start_broker("tansu")
    try:
        asyncio.run(run(broker.bootstrap))
    finally:
        broker.stop()
    spans = list(exporter.get_finished_spans())
    root = next(s for s in spans if s.name == "POST /orders")
    draw([root, *[s for s in spans if s is not root]], args.out)
    print(f"wrote {args.out} ({len(spans)} spans)")


if __name__ == "__main__":
    main()

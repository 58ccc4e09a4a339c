"""Metadata round trips per second on Tansu: aiokafka_lite's KafkaClient vs aiokafka's AIOKafkaClient.

Both clients send MetadataRequest for one 4-partition topic over one connection to the same Tansu,
at the same version (v5, the highest aiokafka knows), one at a time ("seq") and with ``--concurrency``
requests in flight ("conc"). Each figure is the median of ``--rounds`` timed windows, the two clients
alternating so that background noise hits both alike; the client process's CPU time per round trip
is reported too (Tansu's own time is not in it). Our client at its negotiated Metadata version is
measured as well. The last line printed is one JSON object with the figures and the ratios
(ours / aiokafka: above 1 means ours is faster, or for ``cpu`` ratios, that ours uses more CPU).

    python bench/connection.py [--uvloop] [--seconds 1.5] [--rounds 3] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiokafka.client import AIOKafkaClient
from aiokafka.protocol.metadata import MetadataRequest as AioMetadataRequest

from aiokafka_lite.config import COMMON, Config
from aiokafka_lite.embedded import start_broker
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.protocol.messages.metadata import MetadataRequest, MetadataRequestTopic

TOPIC = "bench-connection"
AIOKAFKA_VERSION = 5

Send = Callable[[], Awaitable[Any]]


async def measure(send: Send, seconds: float, concurrency: int) -> tuple[float, float]:
    """(round trips per second, client CPU microseconds per round trip)."""
    count = 0
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal count
        while time.perf_counter() < deadline:
            await send()
            count += 1

    wall0, cpu0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return count / wall, cpu / max(count, 1) * 1e6


async def run(bootstrap: str, args: argparse.Namespace) -> dict[str, Any]:
    config = Config(
        COMMON,
        {"bootstrap_servers": bootstrap, "max_in_flight_requests_per_connection": max(args.concurrency, 1)},
    )
    ours = KafkaClient(config, allow_auto_create_topics=True)
    await ours.start()
    await ours.wait_for_topic(TOPIC, 10000)
    node = next(iter(ours.cluster.brokers())).node_id
    theirs = AIOKafkaClient(bootstrap_servers=bootstrap)
    await theirs.bootstrap()
    their_node = next(iter(theirs.cluster.brokers())).nodeId

    ours_request = MetadataRequest(topics=[MetadataRequestTopic(name=TOPIC)], allow_auto_topic_creation=False)
    await ours.ready(node)
    negotiated = ours.api_version(node, MetadataRequest)

    async def ours_v5() -> Any:
        return await ours.send(node, ours_request, version=AIOKAFKA_VERSION)

    async def ours_negotiated() -> Any:
        return await ours.send(node, ours_request, version=negotiated)

    async def aiokafka_send() -> Any:
        return await theirs.send(
            their_node, AioMetadataRequest(topics=[TOPIC], allow_auto_topic_creation=False)
        )

    # Both answer the same question: one topic, four partitions.
    mine, other = await ours_v5(), await aiokafka_send()
    assert len(mine.topics[0].partitions) == len(other.topics[0][3]), (mine, other)

    contenders: dict[str, Send] = {
        "ours": ours_v5,
        "aiokafka": aiokafka_send,
        "ours_negotiated": ours_negotiated,
    }
    for send in contenders.values():  # warm up connections, caches and the broker
        await measure(send, 0.3, args.concurrency)
    samples: dict[str, list[tuple[float, float]]] = {}
    for round_no in range(args.rounds):
        order = list(contenders.items())
        if round_no % 2:
            order.reverse()
        for name, send in order:
            for mode, conc in (("seq", 1), ("conc", args.concurrency)):
                samples.setdefault(f"{name}_{mode}", []).append(await measure(send, args.seconds, conc))
    await theirs.close()
    await ours.close()

    result: dict[str, Any] = {
        "bench": "connection",
        "loop": "uvloop" if args.uvloop else "asyncio",
        "broker": "tansu",
        "metadata_version": AIOKAFKA_VERSION,
        "ours_negotiated_version": negotiated,
        "concurrency": args.concurrency,
        "seconds": args.seconds,
        "rounds": args.rounds,
    }
    for key, values in samples.items():
        result[f"{key}_rps"] = round(statistics.median(v[0] for v in values))
        result[f"{key}_cpu_us"] = round(statistics.median(v[1] for v in values), 1)
    for mode in ("seq", "conc"):
        result[f"ratio_{mode}"] = round(result[f"ours_{mode}_rps"] / result[f"aiokafka_{mode}_rps"], 2)
        result[f"ratio_{mode}_cpu"] = round(
            result[f"ours_{mode}_cpu_us"] / result[f"aiokafka_{mode}_cpu_us"], 2
        )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uvloop", action="store_true", help="run on uvloop")
    parser.add_argument("--seconds", type=float, default=1.5, help="length of one timed window")
    parser.add_argument("--rounds", type=int, default=3, help="timed windows per figure (median)")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight in 'conc' mode")
    parser.add_argument("--bootstrap", help="use this broker instead of starting Tansu")
    args = parser.parse_args()

    broker = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        broker = start_broker("tansu")
        bootstrap = broker.bootstrap
    try:
        if args.uvloop:
            import uvloop

            result = uvloop.run(run(bootstrap, args))
        else:
            result = asyncio.run(run(bootstrap, args))
    finally:
        if broker is not None:
            broker.stop()
    for key in ("seq", "conc"):
        print(
            f"{key:>4}: ours {result[f'ours_{key}_rps']:>7}/s ({result[f'ours_{key}_cpu_us']} us CPU)  "
            f"aiokafka {result[f'aiokafka_{key}_rps']:>7}/s ({result[f'aiokafka_{key}_cpu_us']} us CPU)  "
            f"ratio {result[f'ratio_{key}']}  | ours at v{result['ours_negotiated_version']}: "
            f"{result[f'ours_negotiated_{key}_rps']}/s",
            file=sys.stderr,
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()

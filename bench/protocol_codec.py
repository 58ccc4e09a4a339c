"""Micro benchmark of the generated protocol codec: one JSON line of per-operation costs.

``python bench/protocol_codec.py --case produce_encode -n 2000`` runs one case ``n`` times; with ``-n 0``
only the setup runs, so under ``valgrind --tool=callgrind`` the difference of two runs divided by ``n`` is
the instructions per operation (see docs/performance.md). Without valgrind it prints µs per operation.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable

from aiokafka_lite.protocol import decode_response, encode_request_scattered, encode_response
from aiokafka_lite.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    PartitionData,
)
from aiokafka_lite.protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from aiokafka_lite.protocol.messages.produce import (
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
)

PRODUCE_V = 11
FETCH_V = 12
METADATA_V = 12


def _cases() -> dict[str, Callable[[], object]]:
    batch = os.urandom(16384)  # bytes: scattered, not copied
    produce = ProduceRequest(acks=1, timeout_ms=30000, topic_data=[TopicProduceData(
        name="bench-topic", partition_data=[PartitionProduceData(index=i, records=batch) for i in range(6)])])
    produce_resp = encode_response(ProduceResponse(responses=[TopicProduceResponse(
        name="bench-topic", partition_responses=[
            PartitionProduceResponse(index=i, base_offset=1000 * i) for i in range(6)])]), PRODUCE_V, 7)[4:]
    fetch = FetchRequest(replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=52428800, topics=[FetchTopic(
        topic="bench-topic", partitions=[FetchPartition(partition=i, fetch_offset=1000 * i,
                                                        partition_max_bytes=1048576) for i in range(6)])])
    fetch_resp = encode_response(FetchResponse(responses=[FetchableTopicResponse(
        topic="bench-topic", partitions=[PartitionData(partition_index=i, high_watermark=5000, records=batch)
                                         for i in range(6)])]), FETCH_V, 7)[4:]
    metadata_resp = encode_response(MetadataResponse(
        brokers=[MetadataResponseBroker(node_id=i, host=f"broker-{i}", port=9092) for i in range(3)],
        topics=[MetadataResponseTopic(name="bench-topic", partitions=[
            MetadataResponsePartition(partition_index=i, leader_id=i % 3, replica_nodes=[0, 1, 2],
                                      isr_nodes=[0, 1, 2]) for i in range(100)])]), METADATA_V, 7)[4:]
    return {
        "produce_encode": lambda: encode_request_scattered(produce, PRODUCE_V, 7, "bench"),
        "produce_decode": lambda: decode_response(0, PRODUCE_V, produce_resp),
        "fetch_encode": lambda: encode_request_scattered(fetch, FETCH_V, 7, "bench"),
        "fetch_decode": lambda: decode_response(1, FETCH_V, fetch_resp),
        "metadata_decode": lambda: decode_response(3, METADATA_V, metadata_resp),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--case", default="all")
    ap.add_argument("-n", type=int, default=20000)
    args = ap.parse_args()
    cases = _cases()
    names = list(cases) if args.case == "all" else [args.case]
    result: dict[str, object] = {"n": args.n}
    for name in names:
        fn = cases[name]
        t0 = time.perf_counter()
        for _ in range(args.n):
            fn()
        result[f"{name}_us"] = round((time.perf_counter() - t0) / args.n * 1e6, 3) if args.n else 0.0
    print(json.dumps(result))


if __name__ == "__main__":
    main()

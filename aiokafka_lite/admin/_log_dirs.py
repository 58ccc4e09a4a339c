"""describe_log_dirs (KIP-113): where each broker keeps its replicas, and how big they are. Each broker
answers only for its own directories, so the request goes to every broker asked about."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from .. import errors
from ..protocol.messages.describe_log_dirs import DescribeLogDirsRequest
from ..structs import TopicPartition
from ._core import AdminCore, broker_error
from .types import LogDirDescription, ReplicaInfo

__all__ = ["LogDirOps"]


class LogDirOps(AdminCore):
    """describe_log_dirs."""

    async def describe_log_dirs(self, brokers: Iterable[int] | None = None
                                ) -> dict[int, dict[str, LogDirDescription]]:
        """Every log directory of each broker (all brokers when None), by node id then path."""
        client = self.client
        if brokers is None:
            if not client.cluster.brokers():
                await client.refresh_metadata()
            nodes = sorted(b.node_id for b in client.cluster.brokers())
        else:
            nodes = list(dict.fromkeys(brokers))
            if not all(isinstance(n, int) and not isinstance(n, bool) for n in nodes):
                raise errors.IllegalArgumentError(f"brokers are node ids (int), got {nodes!r}")

        async def attempt(pending: list[int]) -> dict[int, Any]:
            async def one(node: int) -> Any:
                try:
                    response = await self._send(node, DescribeLogDirsRequest(topics=None))
                except errors.KafkaError as exc:
                    return exc
                if response.error_code:
                    return broker_error(response.error_code, f"DescribeLogDirs on node {node}")
                return {r.log_dir: LogDirDescription(
                    path=r.log_dir,
                    error=broker_error(r.error_code, f"log dir {r.log_dir!r} on node {node}")
                    if r.error_code else None,
                    replicas={TopicPartition(t.name, p.partition_index):
                              ReplicaInfo(p.partition_size, p.offset_lag, bool(p.is_future_key))
                              for t in r.topics for p in t.partitions},
                    total_bytes=r.total_bytes, usable_bytes=r.usable_bytes) for r in response.results}
            answers = await asyncio.gather(*(one(n) for n in pending))
            return dict(zip(pending, answers, strict=True))

        results = await self._retrying(nodes, attempt, what="DescribeLogDirs")
        self._raise_first(results, nodes)
        return {n: results[n] for n in nodes}

"""describe_log_dirs (KIP-113): where each broker keeps its replicas, and how big they are. Each broker
answers only for its own directories, so the request goes to every broker asked about."""

from __future__ import annotations

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
        nodes = None
        if brokers is not None:
            nodes = list(dict.fromkeys(brokers))
            if not all(isinstance(n, int) and not isinstance(n, bool) for n in nodes):
                raise errors.IllegalArgumentError(f"brokers are node ids (int), got {nodes!r}")

        async def ask(node: int) -> Any:
            response = await self._send(node, DescribeLogDirsRequest(topics=None))
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

        return await self._every_broker("DescribeLogDirs", ask, nodes)

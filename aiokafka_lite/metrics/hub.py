"""What a client owns for metrics: its :class:`ClientMonitor` and, when enabled, its KIP-714 pusher."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._version import __version__
from .kip714 import TelemetryPusher
from .monitor import ClientMonitor, Entry, Feed

__all__ = ["ClientMetrics"]


class ClientMetrics:
    """Started with the client, closed before its connections are (so the last push can go out)."""

    def __init__(self, client_type: str, config: Any, kafka_client: Any, collect: Callable[[Feed], None],
                 resource: dict[str, str] | None = None) -> None:
        self.monitor = ClientMonitor(
            client_type, config.client_id, window_ms=config.metrics_sample_window_ms,
            num_samples=config.metrics_num_samples, collect=collect,
            connections=kafka_client.connection_stats)
        self.pusher: TelemetryPusher | None = None
        if config.enable_metrics_push:
            attrs = {"client_id": config.client_id, **(resource or {})}
            self.pusher = TelemetryPusher(kafka_client, self.monitor.snapshot, attrs, __version__)
        self._timeout = min(config.request_timeout_ms / 1000.0, 5.0)

    def start(self) -> None:
        self.monitor.start()
        if self.pusher is not None:
            self.pusher.start()

    async def close(self) -> None:
        if self.pusher is not None:
            await self.pusher.close(self._timeout)
        await self.monitor.close()

    def snapshot(self) -> list[Entry]:
        return self.monitor.snapshot()

"""Where metadata comes from: the brokers the client knows, else its bootstrap servers.

The first update (bootstrap) asks the bootstrap servers in turn. Later updates ask the known brokers,
connected ones first; when none answers, or a broker says REBOOTSTRAP_REQUIRED, or no update succeeded for
``metadata_recovery_rebootstrap_trigger_ms``, the client *rebootstraps* (KIP-899 / KIP-1102): it resolves
the bootstrap names again and takes whatever cluster answers there. :class:`~.client.KafkaClient` owns the
refresh task and the cluster view; this module only decides whom to ask.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Any

from ..errors import (
    AuthenticationFailedError,
    ClientClosedError,
    ConfigError,
    KafkaConnectionError,
    KafkaError,
    NodeNotReadyError,
    UnsupportedVersionError,
)
from ._ratelimit import RateLimitedWarning
from .connection import BrokerConnection
from .metadata import ClusterMetadata
from .pool import ConnectionPool, PoolKey, describe_key

log = logging.getLogger("aiokafka_lite.net.client")

__all__ = ["MetadataSource"]


class MetadataSource:
    """Asks brokers for metadata, bootstrapping and rebootstrapping as needed (see the module docstring)."""

    def __init__(self, pool: ConnectionPool, cluster: ClusterMetadata,
                 bootstrap_servers: list[tuple[str, int]], *, rebootstrap: bool, trigger_s: float,
                 request: Callable[[BrokerConnection, frozenset[str] | None], tuple[Any, int]],
                 apply: Callable[[Any], None], warning: RateLimitedWarning) -> None:
        self._pool = pool
        self.cluster = cluster
        self._bootstrap_servers = bootstrap_servers
        self._enabled = rebootstrap
        self._trigger = trigger_s
        self._request = request
        self._apply = apply
        self._warning = warning
        #: A broker answered REBOOTSTRAP_REQUIRED: the next update goes to the bootstrap servers.
        self.required = False
        #: How many times the client went back to its bootstrap servers after starting.
        self.rebootstraps = 0

    async def _fetch(self, conn: BrokerConnection, topics: frozenset[str] | None) -> Any:
        request, version = self._request(conn, topics)
        return await conn.send(request, version)

    async def bootstrap(self, topics: frozenset[str] | None) -> None:
        """The first metadata, from the first bootstrap server that answers (its connection closed after)."""
        errors: list[str] = []
        for host, port in self._bootstrap_servers:
            key = (host, port)
            try:
                conn = await self._pool.connect(key)
                response = await self._fetch(conn, topics)
            except (AuthenticationFailedError, UnsupportedVersionError, ConfigError, ClientClosedError):
                self._pool.close_key(key)
                raise  # not something another bootstrap server would answer differently (or stopped)
            except KafkaError as exc:
                self._pool.close_key(key)
                errors.append(f"{type(exc).__name__}: {exc.args[0] if exc.args else exc}")
                continue
            self._pool.close_key(key)
            self._apply(response)
            return
        tried = ", ".join(f"{h}:{p}" for h, p in self._bootstrap_servers)
        raise KafkaConnectionError(f"could not bootstrap from {tried}: {'; '.join(errors)}")

    def _candidates(self) -> list[PoolKey]:
        """Known brokers, connected ones first (least loaded first), then the rest by backoff."""
        pool = self._pool
        ready = sorted(
            (k for k in pool.ready_keys() if isinstance(k, int) and self.cluster.broker(k)),
            key=pool.in_flight,
        )
        others: list[PoolKey] = [b.node_id for b in self.cluster.brokers() if b.node_id not in ready]
        random.shuffle(others)
        others.sort(key=pool.connection_delay)
        return [*ready, *others]

    def _reason(self) -> str | None:
        """Why the next update must skip the known brokers and go to the bootstrap servers, if so."""
        if not self._enabled:
            return None
        if self.required:
            return "a broker answered REBOOTSTRAP_REQUIRED"
        stale = time.monotonic() - self.cluster.last_update
        if self.cluster.version and stale >= self._trigger:
            return f"no metadata update succeeded for {stale * 1000:.0f} ms"
        return None

    async def _try(
        self, candidates: list[PoolKey], topics: frozenset[str] | None, errors: list[str], final: bool
    ) -> tuple[bool, bool]:
        """Ask each candidate in turn; returns (answered, reached any: it answered or timed out).

        Only the last candidate of the ``final`` pass waits out its reconnect backoff. A
        REBOOTSTRAP_REQUIRED answer ends the pass when rebootstrapping is allowed.
        """
        reached = False
        for index, key in enumerate(candidates):
            last = final and index == len(candidates) - 1
            try:
                conn = await self._pool.connect(key, wait_backoff=last and not errors)
                response = await self._fetch(conn, topics)
                self._apply(response)
            except NodeNotReadyError as exc:
                errors.append(str(exc))
                continue
            except (AuthenticationFailedError, UnsupportedVersionError, ConfigError, ClientClosedError):
                raise
            except KafkaError as exc:
                errors.append(f"{describe_key(key)}: {exc}")
                # A broker that answered, or held a live connection until the timeout, is reachable.
                reached = reached or not isinstance(exc, KafkaConnectionError)
                if exc.rebootstrap and isinstance(key, int) and self._enabled:
                    self.required = True
                    return False, reached
                continue
            finally:
                if not isinstance(key, int):
                    self._pool.close_key(key)
            return True, reached
        return False, reached

    async def update(self, topics: frozenset[str] | None) -> None:
        """Metadata from a known broker; from the bootstrap servers again when rebootstrapping is due."""
        errors: list[str] = []
        known = self._candidates()
        reason = self._reason()
        if reason is None:
            can_rebootstrap = self._enabled or not known
            answered, reached = await self._try(known, topics, errors, final=not can_rebootstrap)
            if answered:
                return
            reason = self._reason()
            if reason is None and can_rebootstrap and (not reached or not known):
                reason = "no known broker could be reached" if known else "no broker is known"
            if reason is None:
                raise KafkaConnectionError(
                    f"metadata update failed, no broker answered: {'; '.join(errors)}"
                )
        # Rebootstrap (KIP-899 / KIP-1102): the bootstrap names are resolved again on connect,
        # and whatever cluster answers there replaces the one we knew.
        tried = ", ".join(f"{h}:{p}" for h, p in self._bootstrap_servers)
        self._warning.warn("rebootstrap", "rebootstrapping from %s: %s", tried, reason)
        answered, _ = await self._try(list(self._bootstrap_servers), topics, errors, final=True)
        if not answered:
            raise KafkaConnectionError(
                f"metadata update failed ({reason}; rebootstrap from {tried} failed too): "
                f"{'; '.join(errors)}"
            )
        self.required = False
        self.rebootstraps += 1
        log.info("rebootstrapped from %s (%s): %r", tried, reason, self.cluster)


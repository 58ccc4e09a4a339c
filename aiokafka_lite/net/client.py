"""KafkaClient: the network layer the producer, consumer and admin clients share.

It owns the cluster metadata cache, the connections to each broker (one per request class, see
lanes.py; bootstrap connections are separate, keyed by address, and closed once metadata names the
brokers), the
reconnect backoff, and a background task that refreshes metadata every ``metadata_max_age_ms`` and
whenever someone asks. Requests go to a node by id; the client picks the API version (the highest
both sides know, unless capped) and returns the decoded response. Interpreting a response's error
codes is the caller's business; connection-level failures mark the metadata stale by themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._lifecycle import AsyncClient
from .._tasks import cancel_and_wait
from ..config import Config
from ..errors import (
    AuthenticationFailedError,
    ClientClosedError,
    ConfigError,
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    NodeNotReadyError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
    for_code,
)
from ..protocol import API_KEYS
from ..protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from ._ratelimit import RateLimitedWarning
from .connection import BrokerConnection
from .coordinator import lookup_coordinator
from .lanes import key_for
from .metadata import ClusterMetadata
from .metadata_source import MetadataSource
from .pool import ConnectionPool, ExponentialBackoff, PoolKey, key_node
from .retry import Retry, call_with_retries, retry_backoff
from .settings import ConnectionSettings, choose_version

__all__ = ["KafkaClient", "MetadataListener"]

log = logging.getLogger("aiokafka_lite.net")

MetadataListener = Callable[[ClusterMetadata], None]



def _retrieve(fut: asyncio.Future[Any]) -> None:
    """Mark a shared future's exception as seen: its waiters get it; nobody waiting is fine too."""
    if not fut.cancelled():
        fut.exception()


class KafkaClient(AsyncClient):
    """Connections, metadata and request routing for one producer, consumer or admin client.

    ``config`` is a :class:`~aiokafka_lite.config.Config` built from ``config.COMMON`` or a table
    that extends it. ``allow_auto_create_topics`` goes into Metadata requests (default: the
    config's ``allow_auto_create_topics`` if it has one, else False; producers pass True).
    ``api_version_caps`` caps the version chosen for an API on every node, by API name or key
    (``{"Metadata": 8}``), e.g. to work around a broker that mis-encodes a version it claims.
    ``closed_error`` is what every call waiting when :meth:`close` runs, and every call after it,
    raises: the owner's "stopped" error (``ProducerClosedError``, ``ConsumerStoppedError``), never a
    retriable one, so no retry loop outlives the client.

    Lifecycle: ``await start()`` bootstraps (or raises :class:`KafkaConnectionError` naming every
    server tried); ``await close()`` closes everything and fails requests in flight. Also an async
    context manager.

    Requests: ``await send(node_id, request)`` returns the decoded response (None for
    ``expect_response=False``). It raises :class:`KafkaConnectionError` if the node cannot be
    reached or the connection breaks, :class:`KafkaTimeoutError` after ``request_timeout_ms``
    (the connection is then closed), :class:`ProtocolError` for a broker speaking nonsense,
    :class:`AuthenticationFailedError` and :class:`UnsupportedVersionError`.

    Metadata: ``cluster`` (a :class:`ClusterMetadata`) always holds the latest view; the topics
    it covers are those registered with :meth:`add_topics` / :meth:`set_topics` (all topics after
    ``track_all_topics(True)``). :meth:`refresh_metadata` and :meth:`request_metadata_update`
    coalesce: any number of concurrent callers share one Metadata request.
    """

    def __init__(
        self,
        config: Config,
        *,
        allow_auto_create_topics: bool | None = None,
        api_version_caps: Mapping[Any, int] | None = None,
        closed_error: type[ClientClosedError] = ClientClosedError,
    ) -> None:
        self.config = config
        self._closed_cls = closed_error
        self._settings = ConnectionSettings(config)
        self._bootstrap_servers: list[tuple[str, int]] = list(config.bootstrap_servers)
        self._backoff = retry_backoff(config)
        self._request_timeout = config.request_timeout_ms / 1000
        self._max_age = max(config.metadata_max_age_ms, config.retry_backoff_ms, 1) / 1000
        if allow_auto_create_topics is None:
            allow_auto_create_topics = bool(getattr(config, "allow_auto_create_topics", False))
        self.allow_auto_create_topics = allow_auto_create_topics
        self._caps: dict[int, int] = {}
        for api, cap in (api_version_caps or {}).items():
            key = API_KEYS.get(api) if isinstance(api, str) else api
            if key is None:
                raise ConfigError(f"api_version_caps: unknown API {api!r}")
            self._caps[key] = cap
        self.cluster = ClusterMetadata()
        self._pool = ConnectionPool(
            self._settings,
            ExponentialBackoff(config.reconnect_backoff_ms, config.reconnect_backoff_max_ms),
            self.cluster.broker,
            self._on_broken,
        )
        self._topics: set[str] = set()
        self._all_topics = False
        self._listeners: list[MetadataListener] = []
        self._md_next: asyncio.Future[ClusterMetadata] | None = None
        self._md_current: tuple[asyncio.Future[ClusterMetadata], frozenset[str] | None] | None = None
        self._md_wakeup: asyncio.Event | None = None
        self._md_task: asyncio.Task[None] | None = None
        self._md_failures = 0
        self._md_warning = RateLimitedWarning(log)  # a broker down fails every retry: warn, then rarely
        #: The last error of a background metadata update (None after a success).
        self.last_metadata_error: BaseException | None = None
        self._source = MetadataSource(
            self._pool, self.cluster, self._bootstrap_servers,
            rebootstrap=getattr(config, "metadata_recovery_strategy", "rebootstrap") == "rebootstrap",
            trigger_s=getattr(config, "metadata_recovery_rebootstrap_trigger_ms", 300000) / 1000,
            request=self._metadata_request, apply=self._apply_metadata, warning=self._md_warning)
        self._started = False
        self._closed = False
        self._fatal: BaseException | None = None

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        """Fetch the first metadata from the bootstrap servers and start the refresh task."""
        if self._closed:
            raise self.closed_error()
        if self._started:
            return
        self._md_wakeup = asyncio.Event()
        await self._source.bootstrap(self._requested_topics())
        self._started = True
        self._md_task = asyncio.ensure_future(self._metadata_loop())
        self._md_task.add_done_callback(self._metadata_task_done)

    async def close(self) -> None:
        """Stop refreshing, close every connection; requests in flight fail. Idempotent."""
        if self._closed:
            return
        self._closed = True
        error = self.closed_error()
        # Fail the metadata waiters before cancelling the task, which would otherwise cancel them: a
        # caller that was not cancelled must not see CancelledError.
        for fut in (self._md_next, self._md_current[0] if self._md_current else None):
            if fut is not None and not fut.done():
                fut.set_exception(error)
        task, self._md_task = self._md_task, None
        await cancel_and_wait(task, quiet=True)
        await self._pool.close(error)

    def closed_error(self) -> ClientClosedError:
        """The error of a call that meets the closed client (``closed_error`` of the constructor)."""
        return self._closed_cls("the client was closed (stopped)")

    @property
    def started(self) -> bool:
        return self._started and not self._closed

    def unusable_error(self) -> KafkaError | None:
        """Why no connection or metadata request can be made now (closed, not started, or the metadata
        task died), else None. Only start() can change it (before the first start): for whoever uses
        a started client it is final, an error to fail with rather than retry."""
        if self._closed:
            return self.closed_error()
        if not self._started:
            return IllegalStateError("KafkaClient.start() has not been awaited")
        if self._fatal is not None:
            error = KafkaError(f"the metadata task died: {self._fatal!r}")
            error.__cause__ = self._fatal
            return error
        return None

    def _check_usable(self) -> None:
        error = self.unusable_error()
        if error is not None:
            raise error

    # -- requests ---------------------------------------------------------------------------------

    async def send(
        self,
        node_id: int,
        request: Any,
        *,
        version: int | None = None,
        max_version: int | None = None,
        expect_response: bool = True,
        timeout_ms: int | None = None,
    ) -> Any:
        """Send ``request`` to ``node_id``; return its decoded response (None without one).

        ``version`` None picks the highest version both sides know, capped by ``max_version`` and
        by ``api_version_caps``. ``timeout_ms`` overrides ``request_timeout_ms`` (a Fetch or
        JoinGroup that the broker may hold adds its own wait to it). The request's class picks the
        connection (lanes.py).
        """
        key = key_for(node_id, request)
        conn = self._pool.get(key)
        if conn is None:
            self._check_usable()
            conn = await self._pool.connect(key)
        if version is None:
            if max_version is None and not self._caps:
                version = conn.version_for(type(request))
            else:
                version = conn.version_for(type(request), self._cap(request.API_KEY, max_version))
        return await conn.send(request, version, expect_response=expect_response, timeout_ms=timeout_ms)

    async def send_any(
        self,
        request: Any,
        *,
        version: int | None = None,
        max_version: int | None = None,
        timeout_ms: int | None = None,
    ) -> Any:
        """Send ``request`` to the least-loaded reachable broker (admin and lookup requests)."""
        node_id = await self.any_ready_node()
        return await self.send(
            node_id, request, version=version, max_version=max_version, timeout_ms=timeout_ms
        )

    def _cap(self, api_key: int, max_version: int | None) -> int | None:
        cap = self._caps.get(api_key)
        if cap is None:
            return max_version
        return cap if max_version is None else min(cap, max_version)

    def api_version(self, node_id: int, request_cls: Any, max_version: int | None = None) -> int:
        """The version :meth:`send` would use for ``request_cls`` on ``node_id``.

        Needs a past or present connection to the node (``await ready(node_id)`` first); raises
        :class:`NodeNotReadyError` otherwise and :class:`UnsupportedVersionError` if none fits.
        """
        key = key_for(node_id, request_cls)
        conn = self._pool.get(key)
        versions = conn.api_versions if conn is not None else self._pool.api_versions(key)
        if versions is None:
            raise NodeNotReadyError(
                f"node {node_id} has not been connected yet; await ready({node_id}) first"
            )
        return choose_version(
            versions, request_cls, self._cap(request_cls.API_KEY, max_version), f"node {node_id}"
        )

    async def ready(self, node_id: int, request_cls: Any = None) -> None:
        """Connect to ``node_id`` if needed (waiting out reconnect backoff); raise if that fails. With
        ``request_cls``, the connection such requests travel on (lanes.py)."""
        key = key_for(node_id, request_cls)
        if self._pool.get(key) is None:
            self._check_usable()
            await self._pool.connect(key)

    def is_ready(self, node_id: int, request_cls: Any = None) -> bool:
        """True when a handshaken connection to ``node_id`` (for ``request_cls``) is open."""
        return self._pool.get(key_for(node_id, request_cls)) is not None

    def connection_delay(self, node_id: int) -> float:
        """Milliseconds until a connect attempt to ``node_id`` is allowed (0 if now or connected)."""
        return self._pool.connection_delay(node_id) * 1000

    def in_flight(self, node_id: int) -> int:
        """Requests in flight to ``node_id``."""
        return self._pool.in_flight(node_id)

    def connection(self, node_id: int, request_cls: Any = None) -> BrokerConnection | None:
        """The open connection to ``node_id`` for ``request_cls`` (for inspection: in_flight,
        throttled_until, ...)."""
        return self._pool.get(key_for(node_id, request_cls))

    def close_connection(self, node_id: int, request_cls: Any = None) -> None:
        """Close the connection to ``node_id`` that ``request_cls`` travels on (requests in flight on it
        fail); the next send reconnects."""
        self._pool.close_key(key_for(node_id, request_cls))

    def connection_stats(self) -> tuple[int, int, int]:
        """(open, opened so far, closed so far) handshaken connections, for the client metrics."""
        pool = self._pool
        return len(pool.ready_keys()), pool.created_total, pool.closed_total

    def least_loaded_node(self) -> int | None:
        """A connected broker with the fewest requests in flight, else a broker that may be
        connected to now, else None."""
        ready = [k for k in self._pool.ready_keys() if isinstance(k, int) and self.cluster.broker(k)]
        if ready:
            return min(ready, key=self._pool.in_flight)
        nodes = [b.node_id for b in self.cluster.brokers()]
        random.shuffle(nodes)
        for node_id in nodes:
            if self._pool.connection_delay(node_id) == 0:
                return node_id
        return None

    async def any_ready_node(self) -> int:
        """The id of a broker with an open connection, connecting to one if none is open.

        Tries every known broker not in reconnect backoff, then waits for the one whose backoff
        ends first. Raises :class:`KafkaConnectionError` naming the brokers tried.
        """
        self._check_usable()
        node = self.least_loaded_node()
        if node is not None and self._pool.get(node) is not None:
            return node
        brokers = [b.node_id for b in self.cluster.brokers()]
        if not brokers:
            raise KafkaConnectionError("no brokers are known; metadata listed none")
        random.shuffle(brokers)
        brokers.sort(key=self._pool.connection_delay)
        errors: list[str] = []
        for node_id in brokers:
            if self._pool.connection_delay(node_id) > 0:
                continue
            try:
                await self._pool.connect(node_id)
                return node_id
            except (AuthenticationFailedError, UnsupportedVersionError, ClientClosedError):
                raise
            except KafkaError as exc:
                errors.append(f"node {node_id}: {exc}")
        if not errors:  # every broker is in reconnect backoff: wait for the first to come out of it
            await self._pool.connect(brokers[0])
            return brokers[0]
        raise KafkaConnectionError(f"no broker could be reached: {'; '.join(errors)}")

    # -- metadata ---------------------------------------------------------------------------------

    @property
    def topics(self) -> frozenset[str]:
        """The topics metadata updates ask for."""
        return frozenset(self._topics)

    def add_topics(self, topics: Iterable[str]) -> bool:
        """Track more topics; True if any was new (then request an update to learn them)."""
        new = {t for t in topics if t not in self._topics}
        self._topics |= new
        return bool(new)

    def set_topics(self, topics: Iterable[str]) -> asyncio.Future[ClusterMetadata] | None:
        """Track exactly ``topics`` (a consumer's subscription); returns the update's future when
        a topic was added, None when nothing new needs fetching."""
        wanted = set(topics)
        added = wanted - self._topics
        self._topics = wanted
        if added and self._started:
            return self.request_metadata_update()
        return None

    def track_all_topics(self, enabled: bool = True) -> None:
        """Ask for every topic in metadata updates (pattern subscriptions, list_topics)."""
        self._all_topics = enabled

    def add_metadata_listener(self, listener: MetadataListener) -> None:
        """Call ``listener(cluster)`` after every successful metadata update (exceptions are logged)."""
        self._listeners.append(listener)

    def remove_metadata_listener(self, listener: MetadataListener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def request_metadata_update(self) -> asyncio.Future[ClusterMetadata]:
        """Ask for a metadata update without waiting; the future resolves to ``cluster`` after it.

        Coalesced: every call until the update starts returns the same future. It fails (with the
        reason) if the update fails; the refresh task then retries after ``retry_backoff_ms`` (doubling
        per failure up to ``retry_backoff_max_ms``).
        """
        self.cluster.mark_stale()
        fut = self._md_next
        if fut is None or fut.done():
            fut = self._md_next = asyncio.get_running_loop().create_future()
            fut.add_done_callback(_retrieve)
            final = self.unusable_error() if self._closed or self._fatal is not None else None
            if final is not None:  # no update will run: fail now
                fut.set_exception(final)
            elif self._md_wakeup is not None:
                self._md_wakeup.set()
        return fut

    async def refresh_metadata(self, topics: Iterable[str] | None = None) -> ClusterMetadata:
        """Update metadata now and return ``cluster``; ``topics`` are tracked from now on.

        Joins an update already in flight if that one covers every topic asked for; otherwise
        waits for the next one (itself shared with every concurrent caller).
        """
        self._check_usable()
        wanted: set[str] | None = None
        if topics is not None:
            wanted = set(topics)
            self.add_topics(wanted)
        current = self._md_current
        if (
            current is not None
            and not current[0].done()
            and (wanted is None or current[1] is None or wanted <= current[1])
        ):
            fut = current[0]
        else:
            fut = self.request_metadata_update()
        return await asyncio.shield(fut)

    async def wait_for_topic(self, topic: str, timeout_ms: int) -> set[int]:
        """The partition ids of ``topic``, refreshing metadata until it has some.

        Raises :class:`KafkaTimeoutError` naming the topic after ``timeout_ms``, and the broker's
        error at once for an invalid or unauthorized topic.
        """
        parts = self.cluster.partitions_for(topic)
        if parts:
            return parts
        self._check_usable()
        self.add_topics((topic,))

        async def attempt() -> set[int]:
            await self.refresh_metadata((topic,))
            parts = self.cluster.partitions_for(topic)
            if parts:
                return parts
            code = self.cluster.topic_error(topic)
            if not code:
                raise UnknownTopicOrPartitionError(f"topic {topic!r} has no partitions in metadata yet")
            error = for_code(code)(f"topic {topic!r}")
            if not error.topic_unusable:
                error.retriable = True  # as Java's producer: wait out any other topic error
            raise error

        what = f"Looking up topic {topic!r} in metadata"
        retry = Retry(what, timeout_ms / 1000, self._backoff, wait_out=True)
        return await call_with_retries(attempt, retry)

    async def find_coordinator(self, key: str, key_type: int = 0, *, timeout_ms: int | None = None) -> int:
        """The node id coordinating a group (``key_type`` 0) or transactional id (1).

        Retries retriable errors (COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, lost
        connections) after ``retry_backoff_ms`` (doubling up to ``retry_backoff_max_ms``) for up to
        ``timeout_ms`` (default ``request_timeout_ms``), then raises KafkaTimeoutError with the last error.
        The coordinator's address is remembered so that ``send(node_id, ...)`` can reach it.
        """
        self._check_usable()
        return await lookup_coordinator(self, key, key_type, timeout_ms)

    # -- metadata internals -----------------------------------------------------------------------

    @property
    def rebootstraps(self) -> int:
        """How many times the client went back to ``bootstrap_servers`` after starting."""
        return self._source.rebootstraps

    def _metadata_request(self, conn: BrokerConnection, topics: frozenset[str] | None) -> tuple[Any, int]:
        version = conn.version_for(MetadataRequest, self._cap(MetadataRequest.API_KEY, None))
        wanted: list[MetadataRequestTopic] | None
        if topics is None:
            wanted = None if version >= 1 else []
        else:
            wanted = [MetadataRequestTopic(name=t) for t in sorted(topics)]
        if version >= 4:
            request = MetadataRequest(topics=wanted, allow_auto_topic_creation=self.allow_auto_create_topics)
        else:
            request = MetadataRequest(topics=wanted)
        return request, version

    def _requested_topics(self) -> frozenset[str] | None:
        return None if self._all_topics else frozenset(self._topics)

    def _apply_metadata(self, response: Any) -> None:
        code = getattr(response, "error_code", 0)
        if code:
            raise for_code(code)("Metadata")
        self.cluster.update(response)
        for key in self._pool.ready_keys():
            node = key_node(key)
            if node is not None:
                info = self.cluster.broker(node)
                conn = self._pool.get(key)
                if info is None or (conn is not None and (conn.host, conn.port) != (info.host, info.port)):
                    self._pool.close_key(key)  # the broker left, or moved to another address
        for listener in list(self._listeners):
            try:
                listener(self.cluster)
            except Exception:
                log.exception("metadata listener %r failed", listener)

    async def _metadata_loop(self) -> None:
        assert self._md_wakeup is not None
        wakeup = self._md_wakeup
        loop = asyncio.get_running_loop()
        while True:
            if self._md_next is None:
                wait = self.cluster.last_update + self._max_age - time.monotonic()
                if wait > 0:
                    wakeup.clear()
                    timer = loop.call_later(wait, wakeup.set)
                    try:
                        await wakeup.wait()
                    finally:
                        timer.cancel()
            if self._md_failures:  # the background refresh has no deadline: only the backoff
                await asyncio.sleep(self._backoff.delay(self._md_failures))
            fut = self._md_next
            self._md_next = None
            if fut is None or fut.done():
                fut = loop.create_future()
                fut.add_done_callback(_retrieve)
            topics = self._requested_topics()
            self._md_current = (fut, topics)
            try:
                await self._source.update(topics)
            except asyncio.CancelledError:
                fut.cancel()
                raise
            except Exception as exc:
                self._md_failures += 1
                self.last_metadata_error = exc
                self._md_warning.warn("metadata", "metadata update failed (attempt %d): %s",
                                      self._md_failures, exc)
                if not fut.done():
                    fut.set_exception(exc)
            except BaseException as exc:  # the task dies of it (_metadata_task_done), and so does this update
                self._died(exc, fut)
                raise
            else:
                self._md_warning.recovered("metadata", "metadata update")
                self._md_failures = 0
                self.last_metadata_error = None
                if not fut.done():
                    fut.set_result(self.cluster)
            finally:
                self._md_current = None

    def _metadata_task_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("the metadata task of %r died", self, exc_info=exc)
            self._died(exc, self._md_next)

    def _died(self, exc: BaseException, *waited: asyncio.Future[ClusterMetadata] | None) -> None:
        """The metadata task died of ``exc``: the client is unusable from now on (``unusable_error``), and
        the updates waited on fail with that error."""
        self._fatal = exc
        error = self.unusable_error()
        assert error is not None
        for fut in waited:
            if fut is not None and not fut.done():
                fut.set_exception(error)

    def _on_broken(self, key: PoolKey, reason: BaseException) -> None:
        """A connection failed or broke: the cluster may have changed, refresh metadata."""
        if key_node(key) is not None and self._started and not self._closed:
            self.request_metadata_update()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "started" if self._started else "new"
        return f"<KafkaClient {state} {self.cluster!r}>"

"""The Admin client's plumbing: lifecycle, routing requests to the right node, retries.

Kafka admin requests must reach a particular broker: the controller (topic creation and deletion,
partition growth), a partition's leader (offsets, record deletion), a group's coordinator (group
requests), or every broker (ListGroups). The routing helpers here find that node from the shared
:class:`~aiokafka_lite.net.KafkaClient` and the retry loop re-routes when the broker says it is
not (or no longer) that node.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .. import errors
from .._lifecycle import AsyncClient
from ..config import ADMIN, Config, dotted_to_kwargs
from ..metrics.hub import ClientMetrics
from ..metrics.monitor import Entry, Feed
from ..net import KafkaClient
from ..net.retry import Retry, is_retriable, retry_backoff, retry_each
from ..structs import TopicPartition

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .._settings import AdminSettings

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
A = TypeVar("A", bound="AdminCore")



def broker_error(code: int, subject: str, message: str | None = None) -> errors.BrokerResponseError:
    """The error class for ``code``, its message naming the topic / group / partition it is about."""
    detail = subject if not message else f"{subject}: {message}"
    return errors.for_code(code)(detail)


def _no_client_metrics(feed: Feed) -> None:
    """The admin client reports only the common group (connections and the event loop)."""


def describe_tp(tp: TopicPartition) -> str:
    return f"partition {tp.topic}[{tp.partition}]"


def by_topic(tps: Iterable[TopicPartition]) -> dict[str, list[TopicPartition]]:
    """Partitions by topic, for the requests that list topics, then partitions."""
    out: dict[str, list[TopicPartition]] = {}
    for tp in tps:
        out.setdefault(tp.topic, []).append(tp)
    return out


def topic_errors(results: Iterable[Any]) -> dict[str, errors.BrokerResponseError | None]:
    """Each topic's error (None: it succeeded) in an answer listed by topic, naming the topic."""
    return {r.name: broker_error(r.error_code, f"topic {r.name!r}", getattr(r, "error_message", None))
            if r.error_code else None for r in results}


def partition_errors(topics: Iterable[Any], subject: str = "", *, topic_field: str = "name"
                     ) -> dict[TopicPartition, errors.BrokerResponseError | None]:
    """Each partition's error (None: it succeeded) in an answer listed by topic, then partition, each error
    naming ``subject`` (a group, say) and the partition, and the broker's message where the answer has one."""
    out: dict[TopicPartition, errors.BrokerResponseError | None] = {}
    for t in topics:
        for p in t.partitions:
            tp = TopicPartition(getattr(t, topic_field), p.partition_index)
            where = f"{subject} {describe_tp(tp)}" if subject else describe_tp(tp)
            out[tp] = (broker_error(p.error_code, where, getattr(p, "error_message", None))
                       if p.error_code else None)
    return out


def check_tp(tp: Any) -> TopicPartition:
    if not (isinstance(tp, tuple) and len(tp) == 2 and isinstance(tp[0], str) and tp[0]
            and isinstance(tp[1], int) and not isinstance(tp[1], bool) and tp[1] >= 0):
        raise errors.IllegalArgumentError(f"expected TopicPartition(topic, partition >= 0), got {tp!r}")
    return TopicPartition(*tp)


def check_group(group_id: Any) -> str:
    if not isinstance(group_id, str) or not group_id:
        raise errors.IllegalArgumentError(f"a group id must be a non-empty str, got {group_id!r}")
    return group_id


class AdminCore(AsyncClient):
    """Settings, lifecycle and routing shared by the Admin's operations."""

    def __init__(self, *, api_version_caps: Mapping[str | int, int] | None = None,
                 **settings: Unpack[AdminSettings]) -> None:
        """``settings`` are the common client settings; ``api_version_caps`` (``{"Metadata": 12}``)
        caps the versions used, for a broker that mis-encodes a version it claims."""
        self.config = Config(ADMIN, settings)
        self._caps = dict(api_version_caps or {})
        self._client: KafkaClient | None = None
        self._hub: ClientMetrics | None = None
        self._starting: KafkaClient | None = None
        self._timeout = self.config.request_timeout_ms / 1000
        #: Set by stop(): wakes the calls waiting out a retry backoff (net/retry.py's ``wake``).
        self._stopping = asyncio.Event()

    @classmethod
    def from_config(cls: type[A], config: Mapping[str, Any]) -> A:
        """Build from Kafka's dotted setting names: ``{"bootstrap.servers": "127.0.0.1:9092"}``."""
        return cls(**dotted_to_kwargs(config))

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to a bootstrap server and learn the brokers (KafkaConnectionError if none answers)."""
        if self._client is not None:
            return
        client = KafkaClient(self.config, allow_auto_create_topics=False, api_version_caps=self._caps)
        self._stopping.clear()
        self._starting = client  # so that stop() meanwhile closes it and this start() raises at once
        try:
            await client.start()
        except BaseException:
            await client.close()
            raise
        finally:
            self._starting = None
        self._client = client
        self._hub = ClientMetrics("admin", self.config, client, _no_client_metrics)
        self._hub.start()

    async def stop(self) -> None:
        """Close every connection (a start() in progress raises ``ClientClosedError``; a call waiting out a
        retry backoff wakes and raises it too). Idempotent."""
        starting, self._starting = self._starting, None
        client, self._client = self._client, None
        self._stopping.set()
        if starting is not None:
            await starting.close()
        hub, self._hub = self._hub, None
        if hub is not None:
            await hub.close()
        if client is not None:
            await client.close()

    def metrics(self, tagged: bool = True) -> list[Entry]:
        """Java's ``admin-client-metrics``: connections, io-wait-ratio, event-loop lag, as
        ``{"group", "name", "tags", "value"}`` entries (empty before start). The admin client has no
        flat form; ``tagged`` is accepted so that every client answers ``metrics(tagged=True)``."""
        return self._hub.snapshot() if self._hub is not None else []

    close = stop

    @property
    def client(self) -> KafkaClient:
        if self._client is None:
            raise errors.IllegalStateError("Admin is not started: use `async with Admin(...)` or start()")
        return self._client

    # -- routing ----------------------------------------------------------------------------------

    async def _controller(self) -> int:
        """The controller's node id (any broker when the cluster reports none)."""
        client = self.client
        controller = client.cluster.controller_id
        if controller is None or controller < 0 or client.cluster.broker(controller) is None:
            await client.refresh_metadata()
            controller = client.cluster.controller_id
        if controller is None or controller < 0 or client.cluster.broker(controller) is None:
            return await client.any_ready_node()
        return controller

    async def _leaders(self, tps: Iterable[TopicPartition]) -> tuple[dict[int, list[TopicPartition]],
                                                                        dict[TopicPartition, BaseException]]:
        """Group ``tps`` by leader; partitions without one come back as errors (retriable or not)."""
        wanted = list(tps)
        client = self.client
        topics = {tp.topic for tp in wanted}
        cluster = client.cluster
        if any(cluster.leader_for(tp) is None or cluster.leader_for(tp) == -1 for tp in wanted) or \
                cluster.need_update:
            cluster = await client.refresh_metadata(topics)
        by_leader: dict[int, list[TopicPartition]] = {}
        failed: dict[TopicPartition, BaseException] = {}
        for tp in wanted:
            leader = cluster.leader_for(tp)
            if leader is None:
                code = cluster.topic_error(tp.topic)
                parts = cluster.partitions_for(tp.topic)
                if code and code != errors.UnknownTopicOrPartitionError.errno:
                    failed[tp] = broker_error(code, f"topic {tp.topic!r}")
                else:
                    detail = (f"{describe_tp(tp)} does not exist (partitions 0..{max(parts)} do)" if parts
                              else f"topic {tp.topic!r} does not exist")
                    missing = errors.UnknownTopicOrPartitionError(detail)
                    missing.retriable = False  # the broker just said so; waiting will not create it
                    failed[tp] = missing
            elif leader < 0:
                failed[tp] = errors.LeaderNotAvailableError(describe_tp(tp))
            else:
                by_leader.setdefault(leader, []).append(tp)
        return by_leader, failed

    async def _coordinators(self, keys: list[str], key_type: int = 0
                            ) -> tuple[dict[int, list[str]], dict[str, BaseException]]:
        """Group ``keys`` (group ids, or transactional ids with ``key_type`` 1) by coordinator."""
        found = await asyncio.gather(*(self.client.find_coordinator(k, key_type) for k in keys),
                                     return_exceptions=True)
        by_node: dict[int, list[str]] = {}
        failed: dict[str, BaseException] = {}
        for g, node in zip(keys, found, strict=True):
            if isinstance(node, BaseException):
                if not isinstance(node, Exception):
                    raise node
                failed[g] = node
            else:
                by_node.setdefault(node, []).append(g)
        return by_node, failed

    async def _per_leader(self, wanted: Mapping[TopicPartition, Any], what: str,
                          call: Any) -> dict[TopicPartition, Any]:
        """Send ``call(node, {tp: value})`` to each partition's leader, retrying re-routable errors."""

        async def attempt(pending: list[TopicPartition]) -> dict[TopicPartition, Any]:
            by_leader, out = await self._leaders(pending)
            answers = await asyncio.gather(
                *(call(node, {tp: wanted[tp] for tp in tps}) for node, tps in by_leader.items()),
                return_exceptions=True)
            for tps, answer in zip(by_leader.values(), answers, strict=True):
                if isinstance(answer, BaseException):
                    if not isinstance(answer, Exception):
                        raise answer
                    out.update({tp: answer for tp in tps})
                else:
                    out.update(answer)
            return out

        order = list(wanted)
        results = await self._retrying(order, attempt, what=what, final=())
        self._raise_first(results, order)
        return results

    async def _on_controller(self, keys: list[K], what: str,
                             ask: Callable[[int, list[K]], Awaitable[Mapping[K, Any]]]) -> dict[K, Any]:
        """``ask(controller, pending)`` until every key has its answer, re-finding the controller when it
        moved; returns key -> answer and raises the first key's error. No keys: nothing is sent."""
        if not keys:
            return {}

        async def attempt(pending: list[K]) -> Mapping[K, Any]:
            return await ask(await self._controller(), pending)

        results = await self._retrying(keys, attempt, what=what)
        self._raise_first(results, keys)
        return results

    def _broker_wait(self, timeout_ms: int | None) -> tuple[int, int]:
        """A request the broker may hold for ``timeout_ms`` (default: the request timeout): that, and how
        long we wait for its answer (that plus the request timeout)."""
        wait = timeout_ms if timeout_ms is not None else self.config.request_timeout_ms
        return wait, wait + self.config.request_timeout_ms

    async def _per_coordinator(self, keys: list[str], what: str,
                               ask: Callable[[int, list[str]], Awaitable[Mapping[str, Any]]],
                               key_type: int = 0) -> dict[str, Any]:
        """``ask(node, batch)`` of the coordinator of each key (group ids, or transactional ids with
        ``key_type`` 1), the coordinators in parallel, re-finding those that moved; returns key ->
        answer in ``keys``' order and raises the first key's error."""

        async def attempt(pending: list[str]) -> dict[str, Any]:
            by_node, out = await self._coordinators(pending, key_type)
            answers = await asyncio.gather(*(ask(node, batch) for node, batch in by_node.items()),
                                           return_exceptions=True)
            for batch, answer in zip(by_node.values(), answers, strict=True):
                if isinstance(answer, BaseException):
                    if not isinstance(answer, Exception):
                        raise answer
                    out.update(dict.fromkeys(batch, answer))
                else:
                    out.update(answer)
            return out

        results = await self._retrying(keys, attempt, what=what)
        self._raise_first(results, keys)
        return {k: results[k] for k in keys}

    async def _every_broker(self, what: str, ask: Callable[[int], Awaitable[Any]],
                            nodes: list[int] | None = None) -> dict[int, Any]:
        """``ask(node)`` of every broker (or of ``nodes``) in parallel, retrying the retriable failures;
        returns node -> answer in node order and raises the first node's error."""
        if nodes is None:
            client = self.client
            if not client.cluster.brokers():
                await client.refresh_metadata()
            nodes = sorted(b.node_id for b in client.cluster.brokers())

        async def one(node: int) -> Any:
            try:
                return await ask(node)
            except errors.KafkaError as exc:
                return exc

        async def attempt(pending: list[int]) -> dict[int, Any]:
            return dict(zip(pending, await asyncio.gather(*(one(n) for n in pending)), strict=True))

        results = await self._retrying(nodes, attempt, what=what)
        self._raise_first(results, nodes)
        return {n: results[n] for n in nodes}

    # -- retries ----------------------------------------------------------------------------------

    async def _retrying(
        self, items: Iterable[K], attempt: Callable[[list[K]], Awaitable[Mapping[K, Any]]], *, what: str,
        final: tuple[type[BaseException], ...] = (errors.UnknownTopicOrPartitionError,),
    ) -> dict[K, Any]:
        """Run ``attempt(pending)`` until every item has a final answer or the request timeout passes.

        ``attempt`` maps each item to its result or to an exception; retriable exceptions (and
        retriable failures of the whole attempt) send the item round again after the retry backoff
        (``retry_backoff_ms`` doubling up to ``retry_backoff_max_ms``), with fresh metadata when the error
        says the routing was wrong (net/retry.py's ``retry_each``). Not retried: errors of the ``final``
        types (by default a topic the broker does not know; only a partition leader's answer may be
        stale, and those callers pass ``final=()``), and a lost connection after the third time (a broker
        that drops the connection on a request will drop it again). Returns item -> result or final
        exception; the caller decides how to raise.
        """

        def retriable(exc: BaseException) -> bool:
            return is_retriable(exc) and not isinstance(exc, final)

        client = self.client

        async def guarded(pending: list[K]) -> Mapping[K, Any]:
            # stop() during the backoff replaced the client: the call ends with its owner's closed error,
            # not "not started" (that is for calls made after stop()).
            if self._client is not client:
                raise client.closed_error()
            answers = await attempt(pending)
            if self._client is not client:  # the failures were stop() closing the client, not the broker's
                raise client.closed_error()
            return answers

        retry = Retry(what, self._timeout, retry_backoff(self.config), wake=self._stopping)
        return await retry_each(items, guarded, retry, retriable=retriable, max_disconnects=3,
                                reroute=client.request_metadata_update)

    @staticmethod
    def _raise_first(results: Mapping[Any, Any], order: Iterable[Any]) -> None:
        """Raise the first error among ``results`` (in ``order``), noting how many others failed."""
        failures = [k for k in order if isinstance(results.get(k), BaseException)]
        if not failures:
            return
        first = results[failures[0]]
        if len(failures) > 1 and isinstance(first, errors.KafkaError) and first.args:
            first.args = (f"{first.args[0]} (and {len(failures) - 1} more failed)", *first.args[1:])
        raise first

    async def _send(self, node_id: int, request: Any, *, max_version: int | None = None,
                    version: int | None = None, timeout_ms: int | None = None) -> Any:
        return await self.client.send(node_id, request, version=version, max_version=max_version,
                                      timeout_ms=timeout_ms)

    async def _version(self, node_id: int, request_cls: Any, max_version: int | None = None) -> int:
        """The version to send on ``node_id`` (UnsupportedVersionError names a missing API)."""
        await self.client.ready(node_id)
        return self.client.api_version(node_id, request_cls, max_version)

"""``aiokafka.admin.client``: aiokafka's ``AIOKafkaAdminClient`` over :class:`aiokafka_lite.Admin`.

aiokafka's admin methods return the broker's answers as protocol objects, and its users read them by
attribute and position: ``create_topics(...).topic_errors`` is ``[(topic, error_code, error_message)]``,
``describe_configs(...)[0].resources`` is ``[(error_code, error_message, type, name, entries)]``. Here the
native Admin does the work and these methods lay its results out the same way (as plain namespaces);
``describe_cluster`` and ``describe_topics`` return dicts as aiokafka's do. Per-topic failures are reported
in the answer rather than raised, as in aiokafka. The client holds a native Admin rather than being one:
most of aiokafka's methods share a native name with another signature and answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import Any

from ... import errors
from ...admin import Admin
from ...admin import ConfigResource as NativeResource
from ...structs import NewTopic as NativeNewTopic
from ...structs import TopicPartition
from .._settings import adapt
from ..structs import OffsetAndMetadata
from .config_resource import ConfigResource, ConfigResourceType
from .new_partitions import NewPartitions
from .records_to_delete import RecordsToDelete


class Response(SimpleNamespace):
    """An answer laid out as aiokafka's protocol response object (attributes of tuples)."""


def _code(exc: BaseException | None) -> tuple[int, str | None]:
    if exc is None:
        return 0, None
    return getattr(exc, "errno", -1), str(exc)


def _native_topic(t: Any) -> NativeNewTopic:
    if isinstance(t, NativeNewTopic):
        return t
    return NativeNewTopic(t.name, t.num_partitions, t.replication_factor, t.replica_assignments or None,
                          {k: str(v) for k, v in (t.topic_configs or {}).items()} or None)


def _native_resource(r: ConfigResource) -> NativeResource:
    return NativeResource(ConfigResourceType(r.resource_type).name.lower(), str(r.name))


class AIOKafkaAdminClient:
    """aiokafka's admin client names, arguments and answers over :class:`aiokafka_lite.Admin`."""

    def __init__(self, **settings: Any) -> None:
        self._admin = Admin(**adapt(settings, {}, "AIOKafkaAdminClient"))

    @property
    def _client(self) -> Any:
        """aiokafka's private ``_client`` (its cluster metadata is read by aiokafka's own tests): ours."""
        return self._admin._client

    async def start(self) -> None:
        await self._admin.start()

    async def close(self) -> None:
        """aiokafka's admin client has ``close()`` where ours has ``stop()``."""
        await self._admin.stop()

    async def list_topics(self) -> list[str]:
        return await self._admin.list_topics()

    async def _each(self, names: list[str], call: Any) -> list[tuple[str, BaseException | None]]:
        """``call(name)`` for each name at once; its broker error, or None."""
        async def one(name: str) -> BaseException | None:
            try:
                await call(name)
            except errors.BrokerResponseError as exc:
                return exc
            return None
        return list(zip(names, await asyncio.gather(*(one(n) for n in names)), strict=True))

    # -- topics ------------------------------------------------------------------------------------------
    async def create_topics(self, new_topics: Iterable[Any], timeout_ms: int | None = None,
                            validate_only: bool = False) -> Response:
        """``topic_errors``: ``[(topic, error_code, error_message)]`` (code 0 and None when created)."""
        topics = {t.name: _native_topic(t) for t in new_topics}
        results = await self._each(list(topics), lambda n: self._admin.create_topics(
            [topics[n]], timeout_ms=timeout_ms, validate_only=validate_only))
        return Response(topic_errors=[(n, *_code(e)) for n, e in results])

    async def delete_topics(self, topics: Iterable[str],
                            timeout_ms: int | None = None) -> Response:
        """``topic_error_codes``: ``[(topic, error_code)]``."""
        results = await self._each(list(topics),
                                   lambda n: self._admin.delete_topics([n], timeout_ms=timeout_ms))
        return Response(topic_error_codes=[(n, _code(e)[0]) for n, e in results])

    async def create_partitions(self, topic_partitions: Mapping[str, Any],
                                timeout_ms: int | None = None, validate_only: bool = False) -> Response:
        """Raises the first topic's error, as aiokafka's does; else ``topic_errors`` all 0."""
        wanted = {t: NewPartitions(p.total_count, p.new_assignments) for t, p in topic_partitions.items()}
        await self._admin.create_partitions(wanted, timeout_ms=timeout_ms, validate_only=validate_only)
        return Response(topic_errors=[(t, 0, None) for t in wanted])

    async def describe_topics(self, topics: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """aiokafka's Metadata answer per topic: ``{"error_code", "topic", "is_internal", "partitions"}``."""
        found = await self._admin.describe_topics(None if topics is None else list(topics))
        return [{"error_code": 0, "topic": d.name, "is_internal": d.is_internal, "partitions": [
            {"error_code": p.error_code, "partition": p.partition, "leader": p.leader,
             "leader_epoch": p.leader_epoch, "replicas": list(p.replicas), "isr": list(p.isr),
             "offline_replicas": list(p.offline_replicas)} for p in d.partitions]} for d in found]

    async def describe_cluster(self) -> dict[str, Any]:
        """``{"brokers": [{"node_id", "host", "port", "rack"}], "cluster_id", "controller_id"}``."""
        c = await self._admin.describe_cluster()
        return {"throttle_time_ms": 0, "cluster_id": c.cluster_id, "controller_id": c.controller_id,
                "brokers": [{"node_id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack}
                            for b in c.brokers]}

    # -- configs -----------------------------------------------------------------------------------------
    async def describe_configs(self, config_resources: Iterable[ConfigResource],
                               include_synonyms: bool = False) -> list[Response]:
        """One answer whose ``resources`` are ``(error_code, error_message, resource_type, name,
        [(config_name, value, read_only, is_default, is_sensitive)])``; a resource's ``configs`` keys filter
        the names."""
        wanted = list(config_resources)
        found = await self._admin.describe_configs([_native_resource(r) for r in wanted],
                                             include_synonyms=include_synonyms)
        resources = []
        for r in wanted:
            entries = found.get(_native_resource(r), {})
            names = set(r.configs) if r.configs else None
            resources.append((0, None, ConfigResourceType(r.resource_type), str(r.name), [
                (e.name, e.value, e.read_only, e.is_default, e.is_sensitive) for e in entries.values()
                if names is None or e.name in names]))
        return [Response(resources=resources)]

    async def alter_configs(self, config_resources: Iterable[ConfigResource]) -> list[Response]:
        """Set each resource's ``configs``; ``resources``: ``(error_code, error_message, type, name)``.

        Done with IncrementalAlterConfigs, so configs not named keep their values (aiokafka's legacy
        AlterConfigs resets them)."""
        wanted = list(config_resources)
        await self._admin.incremental_alter_configs(
            {_native_resource(r): {k: None if v is None else str(v) for k, v in (r.configs or {}).items()}
             for r in wanted})
        return [Response(resources=[(0, None, ConfigResourceType(r.resource_type), str(r.name))
                                    for r in wanted])]

    # -- groups ------------------------------------------------------------------------------------------
    async def find_coordinator(self, group_id: str, coordinator_type: int = 0) -> int:
        """The node id of ``group_id``'s coordinator (``coordinator_type`` 1: a transactional id's)."""
        node: int = await self._admin.client.find_coordinator(group_id, coordinator_type)
        return node

    async def list_consumer_groups(self, broker_ids: Iterable[int] | None = None) -> list[tuple[str, str]]:
        """``[(group_id, protocol_type)]`` of every group (``broker_ids`` is accepted; every broker is
        asked)."""
        return [(g.group_id, g.protocol_type) for g in await self._admin.list_groups()]

    async def describe_consumer_groups(self, group_ids: Iterable[str],
                                       group_coordinator_id: int | None = None,
                                       include_authorized_operations: bool = False) -> list[Response]:
        """One answer whose ``groups`` are ``(error_code, group_id, state, protocol_type, protocol, members,
        authorized_operations)``, members ``(member_id, group_instance_id, client_id, client_host,
        metadata, assignment)``."""
        found = await self._admin.describe_groups(list(group_ids))
        return [Response(groups=[(0, g.group_id, g.state, g.protocol_type, g.protocol, [
            (m.member_id, m.group_instance_id, m.client_id, m.client_host, m.raw_metadata, m.raw_assignment)
            for m in g.members], -2147483648) for g in found])]

    async def list_consumer_group_offsets(self, group_id: str,
                                          group_coordinator_id: int | None = None,
                                          partitions: Iterable[TopicPartition] | None = None
                                          ) -> dict[TopicPartition, OffsetAndMetadata]:
        found = await self._admin.list_consumer_group_offsets(group_id, partitions)
        return {tp: OffsetAndMetadata(om.offset, om.metadata) for tp, om in found.items()}

    # -- records -----------------------------------------------------------------------------------------
    async def delete_records(self, records_to_delete: Mapping[TopicPartition, Any],
                             timeout_ms: int | None = None) -> dict[TopicPartition, int]:
        """``{tp: RecordsToDelete(before_offset)}`` (or a plain offset); returns each new low watermark."""
        offsets = {tp: r.before_offset if isinstance(r, RecordsToDelete) else r
                   for tp, r in records_to_delete.items()}
        return await self._admin.delete_records(offsets, timeout_ms=timeout_ms)


__all__ = ["AIOKafkaAdminClient"]

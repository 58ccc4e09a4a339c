"""Topic, config and cluster operations of the Admin client."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from .. import errors
from .._version import __version__
from ..net.handshake import CLIENT_SOFTWARE_NAME
from ..protocol.messages.api_versions import ApiVersionsRequest
from ..protocol.messages.create_partitions import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
)
from ..protocol.messages.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from ..protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
from ..protocol.messages.describe_cluster import DescribeClusterRequest
from ..protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from ..protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from ..structs import BrokerInfo, NewTopic, PartitionInfo, check_topic_name
from ._config_routes import by_node, config_routes
from ._core import AdminCore, broker_error, topic_errors
from .types import (
    CONFIG_SOURCES,
    CONFIG_TYPES,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ConfigSynonym,
    FeatureMetadata,
    NewPartitions,
    TopicDescription,
)

_ZERO_UUID = uuid.UUID(int=0)
_METADATA_MAX = 12  # v13 adds nothing we read; capped so the request stays name-based
_INTERNAL_PREFIX = "__"


def _new_topic(topic: NewTopic | str) -> NewTopic:
    if isinstance(topic, str):
        topic = NewTopic(topic)
    if not isinstance(topic, NewTopic):
        raise errors.IllegalArgumentError(f"create_topics takes NewTopic objects, got {topic!r}")
    check_topic_name(topic.name)
    for field in ("num_partitions", "replication_factor"):
        value = getattr(topic, field)
        if isinstance(value, bool) or not isinstance(value, int) or (value < 1 and value != -1):
            raise errors.IllegalArgumentError(
                f"topic {topic.name!r}: {field} must be a positive int or -1 (the broker's default), "
                f"got {value!r}")
    return topic


class TopicOps(AdminCore):
    """create/list/describe/delete topics, create_partitions, describe_configs, describe_cluster,
    describe_features."""

    async def create_topics(self, new_topics: Iterable[NewTopic | str], *, timeout_ms: int | None = None,
                            validate_only: bool = False) -> None:
        """Create topics on the controller; raises the first topic's error, naming the topic.

        ``validate_only`` asks the broker to check the request without creating anything.
        ``timeout_ms`` is how long the controller may wait for the topics to be created.
        """
        topics = [_new_topic(t) for t in new_topics]
        names = [t.name for t in topics]
        if len(set(names)) != len(names):
            raise errors.IllegalArgumentError(f"create_topics: a topic is named twice in {names!r}")
        by_name = {t.name: t for t in topics}
        wait, answer_within = self._broker_wait(timeout_ms)

        async def ask(node: int, pending: list[str]) -> dict[str, Any]:
            request = CreateTopicsRequest(
                topics=[self._creatable(by_name[n]) for n in pending], timeout_ms=wait,
                validate_only=validate_only)
            return topic_errors((await self._send(node, request, timeout_ms=answer_within)).topics)

        await self._on_controller(names, "CreateTopics", ask)

    @staticmethod
    def _creatable(topic: NewTopic) -> CreatableTopic:
        assignments = []
        partitions, replication = topic.num_partitions, topic.replication_factor
        if topic.replica_assignments:
            assignments = [CreatableReplicaAssignment(partition_index=p, broker_ids=list(ids))
                           for p, ids in sorted(topic.replica_assignments.items())]
            partitions, replication = -1, -1  # Kafka requires -1 when assignments are given
        configs = [CreatableTopicConfig(name=k, value=None if v is None else str(v))
                   for k, v in (topic.topic_configs or {}).items()]
        return CreatableTopic(name=topic.name, num_partitions=partitions, replication_factor=replication,
                              assignments=assignments, configs=configs)

    async def delete_topics(self, topics: Iterable[str], *, timeout_ms: int | None = None) -> None:
        """Delete topics on the controller; raises the first topic's error, naming the topic."""
        names = list(dict.fromkeys(check_topic_name(t) for t in topics))
        wait, answer_within = self._broker_wait(timeout_ms)

        async def ask(node: int, pending: list[str]) -> dict[str, Any]:
            version = await self._version(node, DeleteTopicsRequest)
            if version >= 6:
                request = DeleteTopicsRequest(topics=[DeleteTopicState(name=n) for n in pending],
                                              timeout_ms=wait)
            else:
                request = DeleteTopicsRequest(topic_names=pending, timeout_ms=wait)
            response = await self._send(node, request, version=version, timeout_ms=answer_within)
            return topic_errors(response.responses)

        await self._on_controller(names, "DeleteTopics", ask)

    async def create_partitions(self, new_partitions: Mapping[str, int | NewPartitions], *,
                                timeout_ms: int | None = None, validate_only: bool = False) -> None:
        """Grow topics to ``{topic: total_count}`` partitions (or :class:`NewPartitions` with assignments)."""
        wanted: dict[str, NewPartitions] = {}
        for name, spec in new_partitions.items():
            check_topic_name(name)
            np = NewPartitions(spec) if isinstance(spec, int) and not isinstance(spec, bool) else spec
            if not isinstance(np, NewPartitions) or not isinstance(np.total_count, int) or np.total_count < 1:
                raise errors.IllegalArgumentError(
                    f"topic {name!r}: expected a positive partition count or NewPartitions, got {spec!r}")
            wanted[name] = np
        wait, answer_within = self._broker_wait(timeout_ms)

        async def ask(node: int, pending: list[str]) -> dict[str, Any]:
            request = CreatePartitionsRequest(
                topics=[CreatePartitionsTopic(
                    name=n, count=wanted[n].total_count,
                    assignments=self._assignments(wanted[n])) for n in pending],
                timeout_ms=wait, validate_only=validate_only)
            return topic_errors((await self._send(node, request, timeout_ms=answer_within)).results)

        await self._on_controller(list(wanted), "CreatePartitions", ask)

    @staticmethod
    def _assignments(np: NewPartitions) -> list[CreatePartitionsAssignment] | None:
        if np.new_assignments is None:
            return None
        return [CreatePartitionsAssignment(broker_ids=list(ids)) for ids in np.new_assignments]

    async def _metadata(self, topics: list[str] | None) -> Any:
        """A Metadata response for ``topics`` (None: all), without touching the client's cache."""
        node = await self.client.any_ready_node()
        version = await self._version(node, MetadataRequest, _METADATA_MAX)
        request = MetadataRequest(
            topics=None if topics is None else [MetadataRequestTopic(name=t) for t in topics])
        if version >= 4:
            request.allow_auto_topic_creation = False
        if topics is None and version == 0:
            request.topics = []
        return await self._send(node, request, version=version)

    async def list_topics(self, *, internal: bool = False) -> list[str]:
        """Names of every topic, sorted; internal ones (``__consumer_offsets``) only if asked for."""
        response = await self._metadata(None)
        return sorted(t.name for t in response.topics
                      if t.name and (internal or not (t.is_internal or t.name.startswith(_INTERNAL_PREFIX))))

    async def describe_topics(self, topics: Iterable[str] | None = None) -> list[TopicDescription]:
        """Partitions, leaders and replicas of ``topics`` (all when None), in the order asked.

        A topic that does not exist raises UnknownTopicOrPartitionError naming it.
        """
        names = None if topics is None else list(dict.fromkeys(check_topic_name(t) for t in topics))
        if names == []:
            return []

        async def attempt(pending: list[str]) -> dict[str, Any]:
            response = await self._metadata(pending if names is not None else None)
            out: dict[str, Any] = {}
            for t in response.topics:
                if t.error_code == errors.UnknownTopicOrPartitionError.errno:
                    missing = errors.UnknownTopicOrPartitionError(f"topic {t.name!r} does not exist")
                    missing.retriable = False  # final here: describing a missing topic is not worth retrying
                    out[t.name] = missing
                    continue
                if t.error_code:
                    out[t.name] = broker_error(t.error_code, f"topic {t.name!r}")
                    continue
                tid = t.topic_id if isinstance(t.topic_id, uuid.UUID) and t.topic_id != _ZERO_UUID else None
                out[t.name] = TopicDescription(
                    name=t.name, topic_id=str(tid) if tid else None, is_internal=bool(t.is_internal),
                    partitions=sorted((PartitionInfo(
                        t.name, p.partition_index, p.leader_id, getattr(p, "leader_epoch", -1),
                        tuple(p.replica_nodes), tuple(p.isr_nodes), tuple(getattr(p, "offline_replicas", ())),
                        p.error_code) for p in t.partitions), key=lambda p: p.partition))
            return out

        if names is None:
            response = await attempt([])
            return [d for _, d in sorted(response.items()) if isinstance(d, TopicDescription)]
        results = await self._retrying(names, attempt, what="Metadata")
        self._raise_first(results, names)
        return [results[n] for n in names]

    async def describe_configs(self, resources: Iterable[ConfigResource | tuple[str, str]], *,
                               include_synonyms: bool = False, include_documentation: bool = False
                               ) -> dict[ConfigResource, dict[str, ConfigEntry]]:
        """Configs of topics and brokers: ``{ConfigResource("topic", "t"): {name: ConfigEntry}}``.

        Broker resources are asked of that broker (its configs are its own); topics of any broker.
        """
        wanted = [ConfigResource(*r) for r in resources]
        for r in wanted:
            r.type_code  # noqa: B018 - validates the type name
            if not isinstance(r.name, str):
                raise errors.IllegalArgumentError(f"config resource name must be a str, got {r.name!r}")
        routes = config_routes(wanted)

        async def attempt(pending: list[ConfigResource]) -> dict[ConfigResource, Any]:
            out: dict[ConfigResource, Any] = {}
            for node, batch in by_node(pending, routes).items():
                target = node if node is not None else await self.client.any_ready_node()
                request = DescribeConfigsRequest(
                    resources=[DescribeConfigsResource(resource_type=r.type_code, resource_name=r.name,
                                                       configuration_keys=None) for r in batch],
                    include_synonyms=include_synonyms, include_documentation=include_documentation)
                response = await self._send(target, request)
                index = {(r.type_code, r.name): r for r in batch}
                for result in response.results:
                    found = index.get((result.resource_type, result.resource_name))
                    if found is None:
                        continue
                    r = found
                    if result.error_code:
                        out[r] = broker_error(result.error_code, f"{r.type} {r.name!r}", result.error_message)
                    else:
                        out[r] = {c.name: self._config_entry(c) for c in result.configs}
            return out

        results = await self._retrying(wanted, attempt, what="DescribeConfigs")
        self._raise_first(results, wanted)
        return {r: results[r] for r in wanted}

    @staticmethod
    def _config_entry(c: Any) -> ConfigEntry:
        source = CONFIG_SOURCES.get(c.config_source, str(c.config_source))
        is_default = bool(c.is_default) if c.config_source == -1 else c.config_source == 5
        return ConfigEntry(
            name=c.name, value=c.value, source=source, read_only=bool(c.read_only), is_default=is_default,
            is_sensitive=bool(c.is_sensitive),
            synonyms=tuple(ConfigSynonym(s.name, s.value, CONFIG_SOURCES.get(s.source, str(s.source)))
                           for s in c.synonyms),
            type=CONFIG_TYPES.get(c.config_type, str(c.config_type)), documentation=c.documentation)

    async def describe_cluster(self) -> ClusterDescription:
        """Cluster id, controller and brokers (DescribeCluster where offered, else Metadata)."""
        node = await self.client.any_ready_node()
        try:
            version = await self._version(node, DescribeClusterRequest)
        except errors.UnsupportedVersionError:
            response = await self._metadata([])
            brokers = [BrokerInfo(b.node_id, b.host, b.port, b.rack) for b in response.brokers]
            return ClusterDescription(response.cluster_id, response.controller_id,
                                      sorted(brokers, key=lambda b: b.node_id))
        response = await self._send(node, DescribeClusterRequest(), version=version)
        if response.error_code:
            raise broker_error(response.error_code, "DescribeCluster", response.error_message)
        brokers = [BrokerInfo(b.broker_id, b.host, b.port, b.rack) for b in response.brokers]
        return ClusterDescription(response.cluster_id, response.controller_id,
                                  sorted(brokers, key=lambda b: b.node_id))

    async def describe_features(self) -> FeatureMetadata:
        """The cluster's finalized and supported features (KIP-584), from a broker's ApiVersions v3+
        answer (Java's Admin asks the same way); older brokers raise UnsupportedVersionError."""
        node = await self.client.any_ready_node()
        version = await self._version(node, ApiVersionsRequest)
        if version < 3:
            raise errors.UnsupportedVersionError(
                f"node {node} reports no features (ApiVersions v{version}; v3 needed)")
        response = await self._send(node, ApiVersionsRequest(
            client_software_name=CLIENT_SOFTWARE_NAME, client_software_version=__version__), version=version)
        if response.error_code:
            raise broker_error(response.error_code, f"ApiVersions on node {node}")
        return FeatureMetadata(
            finalized={f.name: (f.min_version_level, f.max_version_level)
                       for f in response.finalized_features},
            supported={f.name: (f.min_version, f.max_version) for f in response.supported_features},
            finalized_epoch=response.finalized_features_epoch)

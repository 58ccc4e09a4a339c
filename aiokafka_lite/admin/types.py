"""Values the Admin client takes and returns (plain, hashable where they key dicts)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from ..errors import IllegalArgumentError
from ..structs import BrokerInfo, PartitionInfo, TopicPartition

#: Kafka's ConfigResource.Type codes.
RESOURCE_TYPES = {"unknown": 0, "any": 1, "topic": 2, "group": 3, "cluster": 4, "broker": 4,
                  "transactional_id": 5, "delegation_token": 6, "broker_logger": 8, "client_metrics": 16}
_RESOURCE_NAMES = {2: "topic", 3: "group", 4: "broker", 8: "broker_logger", 16: "client_metrics"}

#: Kafka's ConfigSource codes (DescribeConfigs v1+).
CONFIG_SOURCES = {
    -1: "unknown", 0: "unknown", 1: "dynamic_topic_config", 2: "dynamic_broker_config",
    3: "dynamic_default_broker_config", 4: "static_broker_config", 5: "default_config",
    6: "dynamic_broker_logger_config", 7: "client_metrics_config", 8: "dynamic_group_config",
}
#: Kafka's ConfigType codes (DescribeConfigs v3+).
CONFIG_TYPES = {0: "unknown", 1: "boolean", 2: "string", 3: "int", 4: "short", 5: "long", 6: "double",
                7: "list", 8: "class", 9: "password"}


class NewPartitions(NamedTuple):
    """Grow a topic to ``total_count`` partitions; ``new_assignments`` lists broker ids per new partition."""

    total_count: int
    new_assignments: list[list[int]] | None = None


class ConfigResource(NamedTuple):
    """A thing that has configs: ``ConfigResource("topic", "events")``, ``ConfigResource("broker", "1")``."""

    type: str
    name: str

    @property
    def type_code(self) -> int:
        try:
            return RESOURCE_TYPES[self.type.lower()]
        except (KeyError, AttributeError):
            raise IllegalArgumentError(
                f"unknown config resource type {self.type!r}; expected one of topic, broker, "
                f"broker_logger, group, client_metrics") from None

    @staticmethod
    def type_name(code: int) -> str:
        return _RESOURCE_NAMES.get(code, str(code))


class ConfigSynonym(NamedTuple):
    name: str
    value: str | None
    source: str


class ConfigEntry(NamedTuple):
    """One config of a resource as the broker reports it; sensitive values come back as None."""

    name: str
    value: str | None
    source: str = "unknown"
    read_only: bool = False
    is_default: bool = False
    is_sensitive: bool = False
    synonyms: tuple[ConfigSynonym, ...] = ()
    type: str = "unknown"
    documentation: str | None = None


class ListOffsetsResult(NamedTuple):
    """An offset found by ``list_offsets``; ``timestamp`` is -1 for earliest/latest."""

    offset: int
    timestamp: int = -1
    leader_epoch: int = -1


class GroupListing(NamedTuple):
    group_id: str
    protocol_type: str
    state: str = ""
    #: "classic" or "consumer" (KIP-848), as ListGroups v5+ reports it; "" from older brokers.
    group_type: str = ""


@dataclass(frozen=True)
class MemberDescription:
    """A group member; for consumer groups ``assignment`` and ``subscription`` are decoded."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: list[TopicPartition] = field(default_factory=list)
    subscription: list[str] = field(default_factory=list)
    raw_metadata: bytes = b""
    raw_assignment: bytes = b""
    #: A KIP-848 member's epoch (-1 in classic groups).
    member_epoch: int = -1


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    protocol_type: str
    #: The assignor: the leader's (classic) or the broker's (KIP-848 consumer groups).
    protocol: str
    members: list[MemberDescription]
    #: "classic" (JoinGroup/SyncGroup) or "consumer" (KIP-848, described with ConsumerGroupDescribe).
    group_type: str = "classic"
    #: KIP-848 only: the group's epoch (-1 in classic groups).
    group_epoch: int = -1

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for m in out["members"]:
            m.pop("raw_metadata"), m.pop("raw_assignment")
            m["assignment"] = [list(tp) for tp in m["assignment"]]
        return out


@dataclass(frozen=True)
class TopicDescription:
    name: str
    topic_id: str | None
    is_internal: bool
    partitions: list[PartitionInfo]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "topic_id": self.topic_id, "is_internal": self.is_internal,
            "partitions": [{"partition": p.partition, "leader": p.leader, "leader_epoch": p.leader_epoch,
                            "replicas": list(p.replicas), "isr": list(p.isr)} for p in self.partitions],
        }


@dataclass(frozen=True)
class ClusterDescription:
    cluster_id: str | None
    controller_id: int
    brokers: list[BrokerInfo]

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


# -- ACLs (KIP-140) ------------------------------------------------------------------------------------

#: Kafka's ResourceType, AclOperation, AclPermissionType and PatternType codes, by our names.
ACL_RESOURCE_TYPES = {"unknown": 0, "any": 1, "topic": 2, "group": 3, "cluster": 4, "transactional_id": 5,
                      "delegation_token": 6, "user": 7}
ACL_OPERATIONS = {"unknown": 0, "any": 1, "all": 2, "read": 3, "write": 4, "create": 5, "delete": 6,
                  "alter": 7, "describe": 8, "cluster_action": 9, "describe_configs": 10,
                  "alter_configs": 11, "idempotent_write": 12, "create_tokens": 13, "describe_tokens": 14}
ACL_PERMISSIONS = {"unknown": 0, "any": 1, "deny": 2, "allow": 3}
ACL_PATTERN_TYPES = {"unknown": 0, "any": 1, "match": 2, "literal": 3, "prefixed": 4}
#: Values a filter may hold but a binding may not (they match many).
_ACL_WILDCARDS = {"any", "match", "unknown"}


def acl_code(table: dict[str, int], what: str, value: str, *, filter_: bool) -> int:
    """The code of ``value`` in ``table``; a filter's wildcards ("any", "match") only in filters."""
    name = value.lower() if isinstance(value, str) else value
    if name not in table or (not filter_ and name in _ACL_WILDCARDS):
        allowed = [k for k in table if filter_ or k not in _ACL_WILDCARDS]
        raise IllegalArgumentError(f"unknown ACL {what} {value!r}; expected one of {', '.join(allowed)}")
    return table[name]


def acl_name(table: dict[str, int], code: int) -> str:
    for name, c in table.items():
        if c == code:
            return name
    return str(code)


class AclBinding(NamedTuple):
    """One ACL: ``principal`` (``"User:alice"``) may (``permission="allow"``) or may not (``"deny"``) do
    ``operation`` on the resources ``resource_type``/``resource_name`` matched by ``pattern_type``
    (``"literal"``: that name, ``"*"`` for all; ``"prefixed"``: names starting with it) from ``host``."""

    resource_type: str
    resource_name: str
    principal: str
    operation: str
    permission: str = "allow"
    host: str = "*"
    pattern_type: str = "literal"

    def as_dict(self) -> dict[str, str]:
        return self._asdict()


class AclBindingFilter(NamedTuple):
    """Which ACLs to describe or delete; None (or ``"any"``) matches every value of a field, and
    ``pattern_type="match"`` matches the literal, wildcard and prefixed ACLs that apply to the name."""

    resource_type: str = "any"
    resource_name: str | None = None
    principal: str | None = None
    operation: str = "any"
    permission: str = "any"
    host: str | None = None
    pattern_type: str = "any"


# -- producers and transactions (KIP-664) -------------------------------------------------------------


class ProducerState(NamedTuple):
    """A producer writing to a partition, as its leader knows it (DescribeProducers)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    #: The offset of the producer's open transaction's first record in this partition (-1: none open).
    current_transaction_start_offset: int


class TransactionListing(NamedTuple):
    transactional_id: str
    producer_id: int
    #: Java's TransactionState names, lower case: "ongoing", "prepare_commit", "complete_abort", ...
    state: str


class TransactionDescription(NamedTuple):
    transactional_id: str
    state: str
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    #: When the open transaction began (ms since the epoch; -1 when none is open).
    transaction_start_time_ms: int
    partitions: tuple[TopicPartition, ...]
    coordinator_id: int

    def as_dict(self) -> dict[str, Any]:
        out = self._asdict()
        out["partitions"] = [list(tp) for tp in self.partitions]
        return out


class AbortTransactionSpec(NamedTuple):
    """What ``abort_transaction`` needs, all from ``describe_producers`` of the partition: the
    hanging transaction's producer id and epoch, and the coordinator epoch it last wrote with."""

    partition: TopicPartition
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int


class FencedProducer(NamedTuple):
    """The producer id and the new epoch that fenced every older producer of a transactional id."""

    producer_id: int
    producer_epoch: int


# -- log directories (KIP-113) --------------------------------------------------------------------------


class ReplicaInfo(NamedTuple):
    size: int
    #: How far this replica is behind the partition's end (a future replica's lag behind the current one).
    offset_lag: int
    is_future: bool = False


@dataclass(frozen=True)
class LogDirDescription:
    """One log directory of a broker; ``error`` names why it is unusable (None: it is fine);
    ``total_bytes`` / ``usable_bytes`` are -1 from brokers before DescribeLogDirs v4."""

    path: str
    error: BaseException | None
    replicas: dict[TopicPartition, ReplicaInfo]
    total_bytes: int = -1
    usable_bytes: int = -1

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "error": None if self.error is None else str(self.error),
                "total_bytes": self.total_bytes, "usable_bytes": self.usable_bytes,
                "replicas": [{"topic": tp.topic, "partition": tp.partition, "size": r.size,
                              "offset_lag": r.offset_lag, "is_future": r.is_future}
                             for tp, r in sorted(self.replicas.items())]}


# -- SCRAM credentials (KIP-554) -------------------------------------------------------------------------

#: Kafka's ScramMechanism codes.
SCRAM_MECHANISMS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}


class ScramCredentialInfo(NamedTuple):
    mechanism: str
    iterations: int


class UserScramCredentialsDescription(NamedTuple):
    user: str
    credential_infos: tuple[ScramCredentialInfo, ...]


class UserScramCredentialUpsertion(NamedTuple):
    """Create or replace ``user``'s credential for ``mechanism``; the password is salted and hashed
    here (``salt`` random when None) and only the salted password is sent (KIP-554)."""

    user: str
    password: str
    mechanism: str = "SCRAM-SHA-256"
    iterations: int = 4096
    salt: bytes | None = None


class UserScramCredentialDeletion(NamedTuple):
    user: str
    mechanism: str = "SCRAM-SHA-256"


# -- partition reassignments (KIP-455) and client quotas (KIP-546) ---------------------------------------


class PartitionReassignment(NamedTuple):
    """An ongoing reassignment: the replica set now, and those being added and removed."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()


#: A client-quota entity: ``(("user", "alice"), ("client-id", None))``, sorted by entity type; a name of
#: None is that type's default entity.
QuotaEntity = tuple[tuple[str, str | None], ...]


class QuotaFilterComponent(NamedTuple):
    """One entity type of a describe_client_quotas filter: ``match_type`` "exact" (``name``), "default"
    (the type's default entity) or "any" (any entity of the type)."""

    entity_type: str
    name: str | None = None
    match_type: str = "exact"


class FeatureMetadata(NamedTuple):
    """Cluster features (KIP-584) from a broker's ApiVersions answer: ``{name: (min, max)}``;
    ``finalized_epoch`` is -1 when the broker reports none."""

    finalized: dict[str, tuple[int, int]]
    supported: dict[str, tuple[int, int]]
    finalized_epoch: int = -1


# -- share groups (KIP-932) -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShareMemberDescription:
    """A share group's member, as ShareGroupDescribe reports it; ``assignment`` is what the broker's
    assignor gave it (several members may share a partition)."""

    member_id: str
    client_id: str
    client_host: str
    member_epoch: int
    rack_id: str | None = None
    subscription: list[str] = field(default_factory=list)
    assignment: list[TopicPartition] = field(default_factory=list)


@dataclass(frozen=True)
class ShareGroupDescription:
    """A share group (KIP-932): its state ("Empty", "Stable", "Dead"...), epochs, assignor and members."""

    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: list[ShareMemberDescription]
    #: The AclOperation names the caller may use on the group (None unless asked for).
    authorized_operations: tuple[str, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for m in out["members"]:
            m["assignment"] = [list(tp) for tp in m["assignment"]]
        out["authorized_operations"] = (None if self.authorized_operations is None
                                        else list(self.authorized_operations))
        return out

"""Plain value types shared by every layer (names and fields as in aiokafka, see shared/api.md)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Generic, NamedTuple

from typing_extensions import TypeVar

from .errors import IllegalArgumentError

#: A ConsumerRecord's key and value types: bytes, unless the consumer has deserializers (then theirs).
KT = TypeVar("KT", default=bytes)
VT = TypeVar("VT", default=bytes)

#: Kafka's rule for topic names (Topic.validate in the Java client): 1-249 of these, not "." or "..".
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")


def check_topic_name(name: Any) -> str:
    """``name`` if Kafka accepts it as a topic name, else IllegalArgumentError saying why."""
    if type(name) is not str or not _LEGAL_TOPIC.fullmatch(name) or name in (".", ".."):
        raise IllegalArgumentError(
            f"illegal topic name {name!r}: 1-249 characters of ASCII letters, digits, '.', '_' and '-', "
            "and not '.' or '..'")
    return name


class TopicPartition(NamedTuple):
    """A partition of a topic; hashable, so it keys dicts of offsets and assignments."""

    topic: str
    partition: int


class OffsetAndMetadata(NamedTuple):
    """A committed position: the next offset to read, plus free-form metadata."""

    offset: int
    metadata: str = ""
    leader_epoch: int = -1


class RecordMetadata(NamedTuple):
    """Where the broker put a produced record."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    log_append_time: int = -1

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def timestamp_type(self) -> int:
        """0 when ``timestamp`` is the producer's CreateTime, 1 when the broker stamped LogAppendTime."""
        return 1 if self.log_append_time >= 0 else 0

    @property
    def log_start_offset(self) -> int:
        """aiokafka's field; this client does not keep the produce answer's log start offset: -1
        (what aiokafka reports for brokers that do not send one)."""
        return -1


class ConsumerRecord(NamedTuple, Generic[KT, VT]):
    """One record handed out by the consumer. ``timestamp_type`` is 0 (CreateTime) or 1 (LogAppendTime).

    Generic in its key and value types: ``bytes`` by default, what the consumer's ``key_deserializer`` /
    ``value_deserializer`` return when it has them, so ``record.value.decode()`` type-checks. A record
    without a key has ``key`` None (typed ``KT | None``); a tombstone (a deleted key on a compacted topic)
    has ``value`` None although the type says ``VT``: check for it where tombstones can occur.
    ``headers`` is a tuple of ``(str, bytes | None)`` pairs, as in aiokafka (immutable, so the records
    layer can hand the garbage collector untracked objects). ``delivery_count`` is how many times a share
    group (:class:`~aiokafka_lite.ShareConsumer`) has delivered the record, 1 the first time; None for
    records of a consumer group.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: KT | None
    value: VT
    headers: Sequence[tuple[str, bytes | None]]
    serialized_key_size: int = -1
    serialized_value_size: int = -1
    leader_epoch: int = -1
    delivery_count: int | None = None


class NewTopic(NamedTuple):
    """A topic to create with Admin.create_topics; -1 lets the broker choose its default."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    replica_assignments: dict[int, list[int]] | None = None
    topic_configs: dict[str, str] | None = None


class BrokerInfo(NamedTuple):
    """A broker as the cluster's metadata describes it."""

    node_id: int
    host: str
    port: int
    rack: str | None = None


class PartitionInfo(NamedTuple):
    """A partition's leader, replicas and in-sync replicas, from metadata."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    error_code: int = 0

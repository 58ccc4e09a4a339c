"""Option parsing for the data source and sink, mirroring Spark's own Kafka connector.

Spark hands a data source its options as a case-insensitive map of strings. Everything is parsed and
validated here, once, on the driver when the query is planned, so that a wrong option fails the
``load()`` / ``start()`` call with a :class:`ConfigError` naming the option instead of failing later
inside a Python worker. The parsed objects are frozen dataclasses of plain values: they pickle to the
executors together with the readers and writers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..config import CONSUMER, PRODUCER, Config, dotted_to_kwargs
from ..errors import ConfigError
from ..structs import TopicPartition
from .offsets import EARLIEST, LATEST, OffsetSpec, parse_partition_json
from .porting import translate

__all__ = [
    "SinkOptions",
    "SourceOptions",
    "Subscription",
    "parse_duration_ms",
    "parse_sink_options",
    "parse_source_options",
]

#: kafka.* settings Spark's Kafka source refuses because the source owns what they control.
_SOURCE_FORBIDDEN = {
    "auto.offset.reset": "set the source option 'startingOffsets' instead; offsets live in Spark's "
                         "checkpoint",
    "enable.auto.commit": "the source never commits offsets to Kafka; they live in Spark's checkpoint",
    "key.deserializer": "keys are always read as binary; cast or decode them with DataFrame operations",
    "value.deserializer": "values are always read as binary; cast or decode them with DataFrame operations",
    "interceptor.classes": "interceptors are not supported by the data source",
}
_SINK_FORBIDDEN = {
    "key.serializer": "keys must be a binary or string column named 'key'",
    "value.serializer": "values must be a binary or string column named 'value'",
    "transactional.id": "set the sink option 'exactlyOnce' (and 'transactionalIdPrefix'); each task derives "
    "its own transactional id, a single shared id would make the tasks fence each other",
    "interceptors": "interceptors are not supported by the sink",
}
# Consumer settings that only make sense with a consumer group or a deserializer; the reader uses
# neither (it reads exact offset ranges), so they are accepted for compatibility and ignored.
_SOURCE_IGNORED = {"group_id", "group_instance_id", "session_timeout_ms", "heartbeat_interval_ms",
                   "max_poll_interval_ms", "rebalance_timeout_ms", "auto_commit_interval_ms",
                   "partition_assignment_strategy", "max_poll_records", "exclude_internal_topics",
                   "allow_auto_create_topics"}

_SUBSCRIPTIONS = ("assign", "subscribe", "subscribepattern")


def _get(options: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive lookup; Spark already lower-cases keys, plain dicts in tests may not."""
    low = name.lower()
    for key, value in options.items():
        if key.lower() == low:
            return None if value is None else str(value)
    return None


def _bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = _get(options, name)
    if raw is None:
        return default
    low = raw.strip().lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    raise ConfigError(f"option {name!r} must be 'true' or 'false', got {raw!r}")


def _int(options: Mapping[str, str], name: str, *, minimum: int) -> int | None:
    raw = _get(options, name)
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(f"option {name!r} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"option {name!r} must be >= {minimum}, got {value}")
    return value


_DURATION = re.compile(r"^\s*(\d+)\s*(us|ms|s|sec|m|min|h|d)?\s*$", re.IGNORECASE)
_UNIT_MS = {"us": 0.001, "ms": 1, "s": 1000, "sec": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000,
            "d": 86_400_000}


def parse_duration_ms(text: str, name: str = "duration") -> int:
    """Spark's time strings ("500ms", "30s", "15m", "1h", "2d"; a bare number is milliseconds)."""
    match = _DURATION.match(text)
    if match is None:
        raise ConfigError(f"option {name!r} must be a duration like '30s', '15m' or '500ms', got {text!r}")
    number, unit = int(match.group(1)), (match.group(2) or "ms").lower()
    return int(number * _UNIT_MS[unit])


@dataclass(frozen=True)
class Subscription:
    """What to read: fixed topics, a regex over topic names, or fixed partitions."""

    kind: Literal["subscribe", "subscribePattern", "assign"]
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    partitions: tuple[TopicPartition, ...] = ()

    def matches(self, topic: str) -> bool:
        if self.kind == "subscribe":
            return topic in self.topics
        if self.kind == "subscribePattern":
            assert self.pattern is not None
            return re.fullmatch(self.pattern, topic) is not None
        return any(tp.topic == topic for tp in self.partitions)

    def describe(self) -> str:
        if self.kind == "subscribe":
            return f"subscribe={','.join(self.topics)}"
        if self.kind == "subscribePattern":
            return f"subscribePattern={self.pattern}"
        return f"assign={sorted(self.partitions)}"


@dataclass(frozen=True)
class SourceOptions:
    """Everything the readers need, parsed; client settings are validated keyword arguments."""

    subscription: Subscription
    starting: OffsetSpec
    ending: OffsetSpec | None
    starting_by_timestamp_strategy: Literal["error", "latest"]
    max_offsets_per_trigger: int | None
    min_offsets_per_trigger: int | None
    max_trigger_delay_ms: int
    min_partitions: int | None
    max_records_per_partition: int | None
    fail_on_data_loss: bool
    include_headers: bool
    poll_timeout_ms: int
    fetch_offset_num_retries: int
    fetch_offset_retry_interval_ms: int
    #: every kafka.* option as a keyword argument of the client (``bootstrap_servers``, ...).
    client: dict[str, Any] = field(default_factory=dict)

    @property
    def read_committed(self) -> bool:
        return self.client.get("isolation_level") == "read_committed"


@dataclass(frozen=True)
class SinkOptions:
    """The sink's options: default topic, headers, delivery guarantee and producer settings."""

    topic: str | None
    #: None: write the headers column when the DataFrame has one; False: ignore it; True: require it.
    include_headers: bool | None
    exactly_once: bool
    transactional_id_prefix: str
    #: Batch writes: names the write, so that running it again (e.g. in foreachBatch after a restart)
    #: is recognised as the same write; None draws a new id per write.
    write_id: str | None = None
    client: dict[str, Any] = field(default_factory=dict)


def _kafka_settings(options: Mapping[str, str], forbidden: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in options.items():
        low = key.lower()
        if not low.startswith("kafka."):
            continue
        name = low[len("kafka."):]
        if name in forbidden:
            raise ConfigError(f"Kafka option 'kafka.{name}' is not supported: {forbidden[name]}")
        out[name] = value
    if "bootstrap.servers" not in out:
        raise ConfigError("option 'kafka.bootstrap.servers' is required (e.g. '127.0.0.1:9092')")
    return out


def _client_kwargs(settings: Mapping[str, str], table: Any, ignored: set[str]) -> dict[str, Any]:
    """Validate the kafka.* settings against a client's table; unknown names raise ConfigError."""
    kwargs = dotted_to_kwargs(translate(settings))
    tls = {k: kwargs.pop(k) for k in list(kwargs) if k.startswith("_ssl_")}  # PEM text, see porting.py
    try:
        config = Config(table, kwargs)
    except ConfigError as exc:
        raise ConfigError(f"in a 'kafka.*' option: {exc}") from None
    # Keep what the user gave, validated (numbers as ints, booleans as bools), minus ignored keys.
    out = {k: getattr(config, k) for k in kwargs if k not in ignored}
    out.update(tls)
    return out


def _subscription(options: Mapping[str, str]) -> Subscription:
    given = [name for name in _SUBSCRIPTIONS if _get(options, name) is not None]
    if len(given) != 1:
        raise ConfigError(
            "exactly one of the options 'assign', 'subscribe' or 'subscribePattern' must be given"
            + (f", got {len(given)}: {given}" if given else "")
        )
    raw = _get(options, given[0])
    assert raw is not None
    if given[0] == "subscribe":
        topics = tuple(t.strip() for t in raw.split(",") if t.strip())
        if not topics:
            raise ConfigError(f"option 'subscribe' needs a comma-separated list of topics, got {raw!r}")
        return Subscription("subscribe", topics=topics)
    if given[0] == "subscribepattern":
        if not raw.strip():
            raise ConfigError("option 'subscribePattern' must be a non-empty regular expression")
        try:
            re.compile(raw)
        except re.error as exc:
            raise ConfigError(f"option 'subscribePattern' is not a valid regular expression: {exc}") from None
        return Subscription("subscribePattern", pattern=raw)
    return Subscription("assign", partitions=tuple(sorted(_parse_assign(raw))))


def _parse_assign(raw: str) -> set[TopicPartition]:
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not data:
        raise ConfigError(
            f"option 'assign' must be JSON like {{\"topicA\":[0,1],\"topicB\":[2,4]}}, got {raw!r}")
    out: set[TopicPartition] = set()
    for topic, parts in data.items():
        if not isinstance(parts, list) or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0
                                                  for p in parts):
            raise ConfigError(
                f"option 'assign': topic {topic!r} needs a list of partition numbers, got {parts!r}")
        out.update(TopicPartition(topic, p) for p in parts)
    if not out:
        raise ConfigError("option 'assign' names no partitions")
    return out


def _offset_spec(options: Mapping[str, str], which: Literal["starting", "ending"],
                 streaming: bool) -> OffsetSpec | None:
    """Spark's precedence: <which>OffsetsByTimestamp, then <which>Timestamp, then <which>Offsets."""
    by_ts = _get(options, f"{which}OffsetsByTimestamp")
    if by_ts is not None:
        per = parse_partition_json(by_ts, f"{which}OffsetsByTimestamp")
        bad = {tp: ts for tp, ts in per.items() if ts < 0}
        if bad:
            raise ConfigError(f"option '{which}OffsetsByTimestamp' needs timestamps >= 0 (ms), got {bad}")
        return OffsetSpec.by_timestamp(per)
    ts = _int(options, f"{which}Timestamp", minimum=0)
    if ts is not None:
        return OffsetSpec.timestamp(ts)
    raw = _get(options, f"{which}Offsets")
    if raw is None:
        if which == "starting":
            return OffsetSpec.latest() if streaming else OffsetSpec.earliest()
        return None if streaming else OffsetSpec.latest()
    low = raw.strip().lower()
    if low == "earliest":
        return OffsetSpec.earliest()
    if low == "latest":
        return OffsetSpec.latest()
    per = parse_partition_json(raw, f"{which}Offsets")
    bad = {tp: o for tp, o in per.items() if o < EARLIEST}
    if bad:
        raise ConfigError(
            f"option '{which}Offsets': offsets must be >= 0, or -2 (earliest) / -1 (latest); got {bad}")
    return OffsetSpec.specific(per)


def parse_source_options(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Parse and validate the reader options of ``spark.read`` (batch) or ``spark.readStream``."""
    subscription = _subscription(options)
    starting = _offset_spec(options, "starting", streaming)
    assert starting is not None
    ending = _offset_spec(options, "ending", streaming)
    if streaming:
        for name in ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"):
            if _get(options, name) is not None:
                raise ConfigError(f"option {name!r} is not valid in streaming queries (only in spark.read)")
    else:
        assert ending is not None
        if starting.kind == "latest" or LATEST in starting.partition_values().values():
            raise ConfigError("option 'startingOffsets' can't be 'latest' (-1) for batch queries")
        if ending.kind == "earliest" or (ending.kind == "specific"
                                         and EARLIEST in ending.partition_values().values()):
            raise ConfigError("option 'endingOffsets' can't be 'earliest' (-2) for batch queries")
    if subscription.kind == "assign":
        assigned = set(subscription.partitions)
        for spec, name in ((starting, "starting"), (ending, "ending")):
            if spec is not None and spec.partition_values():
                extra = set(spec.partition_values()) - assigned
                if extra:
                    raise ConfigError(f"option '{name}Offsets…' names partitions {sorted(extra)} that "
                                      f"'assign' does not: {sorted(assigned)}")

    strategy = (_get(options, "startingOffsetsByTimestampStrategy") or "error").strip().lower()
    if strategy not in ("error", "latest"):
        raise ConfigError(
            f"option 'startingOffsetsByTimestampStrategy' must be 'error' or 'latest', got {strategy!r}")

    if streaming:
        max_trigger = _int(options, "maxOffsetsPerTrigger", minimum=1)
        min_trigger = _int(options, "minOffsetsPerTrigger", minimum=1)
        if max_trigger is not None and min_trigger is not None and min_trigger > max_trigger:
            raise ConfigError(f"option 'minOffsetsPerTrigger' ({min_trigger}) must be <= "
                              f"'maxOffsetsPerTrigger' ({max_trigger})")
        delay_raw = _get(options, "maxTriggerDelay")
        delay_ms = parse_duration_ms(delay_raw, "maxTriggerDelay") if delay_raw is not None else 15 * 60_000
    else:
        # Spark's Kafka source reads these only in its micro-batch stream and ignores them in batch
        # reads (KafkaSourceProvider.createRelation never looks at them), so a job may share one options
        # map between spark.read and spark.readStream. Not even validated here, as there.
        max_trigger = min_trigger = None
        delay_ms = 15 * 60_000

    settings = _kafka_settings(options, _SOURCE_FORBIDDEN)
    client = _client_kwargs(settings, CONSUMER, _SOURCE_IGNORED)
    poll_timeout = _int(options, "kafkaConsumer.pollTimeoutMs", minimum=1)
    return SourceOptions(
        subscription=subscription,
        starting=starting,
        ending=ending,
        starting_by_timestamp_strategy=strategy,  # type: ignore[arg-type]
        max_offsets_per_trigger=max_trigger,
        min_offsets_per_trigger=min_trigger,
        max_trigger_delay_ms=delay_ms,
        min_partitions=_int(options, "minPartitions", minimum=1),
        max_records_per_partition=_int(options, "maxRecordsPerPartition", minimum=1),
        fail_on_data_loss=_bool(options, "failOnDataLoss", True),
        include_headers=_bool(options, "includeHeaders", False),
        poll_timeout_ms=poll_timeout if poll_timeout is not None else 120_000,
        fetch_offset_num_retries=_default(_int(options, "fetchOffset.numRetries", minimum=0), 3),
        fetch_offset_retry_interval_ms=_default(
            _int(options, "fetchOffset.retryIntervalMs", minimum=0), 10),  # Spark's default
        client=client,
    )


def _default(value: int | None, default: int) -> int:
    return default if value is None else value


def parse_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """Parse and validate the writer options of ``df.write`` / ``df.writeStream``."""
    settings = _kafka_settings(options, _SINK_FORBIDDEN)
    client = _client_kwargs(settings, PRODUCER, set())
    exactly_once = _bool(options, "exactlyOnce", False)
    if exactly_once and client.get("enable_idempotence") is False:
        raise ConfigError(
            "option 'exactlyOnce' needs the idempotent producer; drop 'kafka.enable.idempotence=false'")
    if exactly_once and client.get("acks", -1) != -1:
        raise ConfigError("option 'exactlyOnce' needs 'kafka.acks=all'")
    topic = _get(options, "topic")
    if topic is not None and not topic.strip():
        raise ConfigError("option 'topic' must not be empty")
    prefix = _get(options, "transactionalIdPrefix") or "aiokafka-lite-spark"
    write_id = _get(options, "writeId")
    if write_id is not None and not exactly_once:
        raise ConfigError("option 'writeId' only matters with exactlyOnce=true")
    return SinkOptions(
        topic=topic.strip() if topic else None,
        include_headers=(None if _get(options, "includeHeaders") is None
                         else _bool(options, "includeHeaders", False)),
        exactly_once=exactly_once,
        transactional_id_prefix=prefix,
        write_id=write_id,
        client=client,
    )

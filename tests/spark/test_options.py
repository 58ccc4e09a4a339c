"""Option parsing mirrors Spark's Kafka source and sink; bad options fail at planning with ConfigError."""

from __future__ import annotations

import pytest

from aiokafka_lite import TopicPartition
from aiokafka_lite.errors import ConfigError
from aiokafka_lite.spark.offsets import EARLIEST, LATEST
from aiokafka_lite.spark.options import parse_duration_ms, parse_sink_options, parse_source_options

BOOT = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def src(streaming: bool = True, **opts: str):
    return parse_source_options({**BOOT, **opts}, streaming=streaming)


def test_defaults_match_spark() -> None:
    s = src(subscribe="a,b")
    assert s.subscription.kind == "subscribe" and s.subscription.topics == ("a", "b")
    assert s.starting.kind == "latest" and s.ending is None
    assert s.fail_on_data_loss is True and s.include_headers is False
    assert s.max_offsets_per_trigger is None and s.max_trigger_delay_ms == 15 * 60_000
    assert s.client == {"bootstrap_servers": [("127.0.0.1", 9092)]}
    b = src(streaming=False, subscribe="a")
    assert b.starting.kind == "earliest" and b.ending is not None and b.ending.kind == "latest"


def test_options_are_case_insensitive() -> None:
    s = src(SUBSCRIBE="t", STARTINGOFFSETS="earliest", maxoffsetspertrigger="10", INCLUDEHEADERS="TRUE")
    assert s.starting.kind == "earliest" and s.max_offsets_per_trigger == 10 and s.include_headers


@pytest.mark.parametrize("opts", [{}, {"subscribe": "a", "assign": '{"a":[0]}'},
                                  {"subscribe": "a", "subscribePattern": "a.*"}])
def test_exactly_one_subscription(opts: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="exactly one of"):
        src(**opts)


def test_assign_and_pattern() -> None:
    s = src(assign='{"b":[1,0],"a":[2]}')
    assert s.subscription.partitions == (TopicPartition("a", 2), TopicPartition("b", 0),
                                         TopicPartition("b", 1))
    p = src(subscribePattern="ev.*")
    assert p.subscription.matches("events") and not p.subscription.matches("xevents")
    for bad in ('[1]', '{"a":"0"}', '{"a":[-1]}', "{}", "nope"):
        with pytest.raises(ConfigError, match="assign"):
            src(assign=bad)
    with pytest.raises(ConfigError, match="regular expression"):
        src(subscribePattern="(")


def test_bootstrap_required_and_kafka_settings_validated() -> None:
    with pytest.raises(ConfigError, match=r"kafka\.bootstrap\.servers"):
        parse_source_options({"subscribe": "a"}, streaming=True)
    with pytest.raises(ConfigError, match="fetch_max_wait_msx"):
        src(subscribe="a", **{"kafka.fetch.max.wait.msx": "1"})
    with pytest.raises(ConfigError, match="isolation_level"):
        src(subscribe="a", **{"kafka.isolation.level": "serializable"})
    s = src(subscribe="a", **{"kafka.isolation.level": "read_committed", "kafka.fetch.max.wait.ms": "50",
                              "kafka.group.id": "ignored"})
    assert s.read_committed and s.client["fetch_max_wait_ms"] == 50 and "group_id" not in s.client


@pytest.mark.parametrize("name", ["auto.offset.reset", "enable.auto.commit", "key.deserializer",
                                  "value.deserializer", "interceptor.classes"])
def test_forbidden_kafka_options(name: str) -> None:
    with pytest.raises(ConfigError, match=name.replace(".", r"\.")):
        src(subscribe="a", **{f"kafka.{name}": "x"})


def test_offsets_json_and_precedence() -> None:
    s = src(subscribe="a", startingOffsets='{"a":{"0":5,"1":-2,"2":-1}}')
    assert s.starting.kind == "specific"
    assert dict(s.starting.partition_values()) == {
        TopicPartition("a", 0): 5, TopicPartition("a", 1): EARLIEST, TopicPartition("a", 2): LATEST}
    s = src(subscribe="a", startingOffsets="earliest", startingTimestamp="1000")
    assert s.starting.kind == "timestamp" and s.starting.timestamp_ms == 1000
    s = src(subscribe="a", startingTimestamp="1000", startingOffsetsByTimestamp='{"a":{"0":7}}')
    assert s.starting.kind == "by_timestamp"
    for bad in ('{"a":{"0":-3}}', '{"a":{"x":1}}', '{"a":[1]}', "[", '{"a":{"0":true}}'):
        with pytest.raises(ConfigError, match="startingOffsets"):
            src(subscribe="a", startingOffsets=bad)


def test_streaming_and_batch_restrictions() -> None:
    with pytest.raises(ConfigError, match="not valid in streaming"):
        src(subscribe="a", endingOffsets="latest")
    with pytest.raises(ConfigError, match="can't be 'latest'"):
        src(streaming=False, subscribe="a", startingOffsets="latest")
    with pytest.raises(ConfigError, match="can't be 'latest'"):
        src(streaming=False, subscribe="a", startingOffsets='{"a":{"0":-1}}')
    with pytest.raises(ConfigError, match="can't be 'earliest'"):
        src(streaming=False, subscribe="a", endingOffsets='{"a":{"0":-2}}')
    # Streaming-only options are ignored by batch reads, as by Spark's Kafka source (its docs list them
    # under "Query Type: streaming query"; KafkaSourceProvider.validateBatchOptions does not look at them).
    b = src(streaming=False, subscribe="a", maxOffsetsPerTrigger="5", minOffsetsPerTrigger="x",
            maxTriggerDelay="soon")
    assert (b.max_offsets_per_trigger, b.min_offsets_per_trigger) == (None, None)
    assert src(subscribe="a").fetch_offset_retry_interval_ms == 10  # Spark's default
    with pytest.raises(ConfigError, match="does not"):
        src(assign='{"a":[0]}', startingOffsets='{"a":{"0":1,"1":2}}')


def test_trigger_options() -> None:
    s = src(subscribe="a", maxOffsetsPerTrigger="100", minOffsetsPerTrigger="10", maxTriggerDelay="30s")
    assert (s.max_offsets_per_trigger, s.min_offsets_per_trigger, s.max_trigger_delay_ms) == (100, 10, 30_000)
    with pytest.raises(ConfigError, match="must be <="):
        src(subscribe="a", maxOffsetsPerTrigger="5", minOffsetsPerTrigger="10")
    for bad in ("0", "-1", "x", "1.5"):
        with pytest.raises(ConfigError, match="maxOffsetsPerTrigger"):
            src(subscribe="a", maxOffsetsPerTrigger=bad)
    with pytest.raises(ConfigError, match="minPartitions"):
        src(subscribe="a", minPartitions="0")
    with pytest.raises(ConfigError, match="failOnDataLoss"):
        src(subscribe="a", failOnDataLoss="maybe")


def test_durations() -> None:
    assert parse_duration_ms("15m") == 900_000
    assert parse_duration_ms("500") == 500
    assert parse_duration_ms("2h") == 7_200_000
    assert parse_duration_ms("1d") == 86_400_000
    assert parse_duration_ms("10 s") == 10_000
    with pytest.raises(ConfigError):
        parse_duration_ms("soon")


def test_sink_options() -> None:
    s = parse_sink_options({**BOOT, "topic": "out", "kafka.linger.ms": "20"})
    assert s.topic == "out" and s.client["linger_ms"] == 20 and not s.exactly_once
    assert s.include_headers is None
    e = parse_sink_options({**BOOT, "exactlyOnce": "true", "transactionalIdPrefix": "app"})
    assert e.exactly_once and e.transactional_id_prefix == "app"
    with pytest.raises(ConfigError, match=r"transactional\.id"):
        parse_sink_options({**BOOT, "kafka.transactional.id": "x"})
    with pytest.raises(ConfigError, match="idempotent"):
        parse_sink_options({**BOOT, "exactlyOnce": "true", "kafka.enable.idempotence": "false"})
    with pytest.raises(ConfigError, match="acks"):
        parse_sink_options({**BOOT, "exactlyOnce": "true", "kafka.acks": "1"})
    with pytest.raises(ConfigError, match=r"key\.serializer"):
        parse_sink_options({**BOOT, "kafka.key.serializer": "x"})

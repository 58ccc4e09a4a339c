"""The batch and streaming sinks against real brokers through local Spark; read back with confluent-kafka."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _spark_kafka import create_topic, produce, read_all

pytestmark = pytest.mark.timeout(240)


def writer(df: Any, bootstrap: str, **options: Any) -> Any:
    w = df.write.format("aiokafka_lite").mode("append").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        w = w.option(key, str(value))
    return w


def stream(spark: Any, bootstrap: str, **options: Any) -> Any:
    r = spark.readStream.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        r = r.option(key, str(value))
    return r.load()


def run_to_kafka(df: Any, bootstrap: str, checkpoint: Path, **options: Any) -> Any:
    w = (df.writeStream.format("aiokafka_lite").option("kafka.bootstrap.servers", bootstrap)
         .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True))
    for key, value in options.items():
        w = w.option(key, str(value))
    q = w.start()
    q.awaitTermination(180)
    assert not q.isActive
    if q.exception() is not None:
        raise q.exception()
    return q


def test_100k_rows_written_read_back_whole(spark: Any, bootstrap: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    create_topic(bootstrap, topic, 3)
    n = 100_000
    df = spark.range(n).selectExpr("cast(id % 1000 as string) as key",
                                   "concat('v', cast(id as string)) as value")
    writer(df.repartition(4), bootstrap, topic=topic).save()
    got = read_all(bootstrap, topic)
    assert len(got) == n
    assert {v for _, _, _, v in got} == {b"v%d" % i for i in range(n)}
    # Keyed rows go where the key hashes to (murmur2, as the Java client): one partition per key.
    partitions_of_key: dict[bytes | None, set[int]] = {}
    for p, _, k, _ in got:
        partitions_of_key.setdefault(k, set()).add(p)
    assert len(partitions_of_key) == 1000 and all(len(ps) == 1 for ps in partitions_of_key.values())


def test_stream_sink_columns(spark: Any, bootstrap: str, new_topic: Callable[..., str],
                             tmp_path: Path) -> None:
    src, out_a, out_b = new_topic("src"), new_topic("a"), new_topic("b")
    create_topic(bootstrap, src, 2)
    create_topic(bootstrap, out_a, 2)
    create_topic(bootstrap, out_b, 2)
    produce(bootstrap, src, [(i % 2, b"k%d" % i, b"%d" % i) for i in range(400)])
    df = stream(spark, bootstrap, subscribe=src, startingOffsets="earliest", maxOffsetsPerTrigger=150)
    out = df.selectExpr(
        f"if(cast(cast(value as string) as int) % 2 = 0, '{out_a}', '{out_b}') as topic",
        "key", "value", "1 as partition",
        "array(named_struct('key', 'src-offset', 'value', cast(cast(offset as string) as binary)))"
        " as headers")
    run_to_kafka(out, bootstrap, tmp_path / "ck")
    a, b = read_all(bootstrap, out_a), read_all(bootstrap, out_b)
    assert sorted(int(v) for _, _, _, v in a) == list(range(0, 400, 2))
    assert sorted(int(v) for _, _, _, v in b) == list(range(1, 400, 2))
    assert {p for p, _, _, _ in a + b} == {1}


@pytest.mark.parametrize("broker", ["noida"], indirect=True)
def test_exactly_once_survives_a_replayed_micro_batch(spark: Any, bootstrap: str,
                                                      new_topic: Callable[..., str], tmp_path: Path) -> None:
    src = new_topic("src")
    create_topic(bootstrap, src, 2)
    produce(bootstrap, src, [(i % 2, None, b"%d" % i) for i in range(300)])

    def run_and_replay_last(out: str, ck: Path, **sink: Any) -> None:
        create_topic(bootstrap, out, 2)
        df = stream(spark, bootstrap, subscribe=src, startingOffsets="earliest", maxOffsetsPerTrigger=100)
        run_to_kafka(df.select("value"), bootstrap, ck, topic=out, **sink)
        # Forget that the last micro-batch finished: a restart must run it again (what a driver crash
        # between the sink's writes and the commit log entry leaves behind).
        last = max(int(p.name) for p in (ck / "commits").iterdir() if p.name.isdigit())
        (ck / "commits" / str(last)).unlink()
        (ck / "commits" / f".{last}.crc").unlink(missing_ok=True)
        df = stream(spark, bootstrap, subscribe=src, startingOffsets="earliest", maxOffsetsPerTrigger=100)
        run_to_kafka(df.select("value"), bootstrap, ck, topic=out, **sink)

    eos = new_topic("eos")
    run_and_replay_last(eos, tmp_path / "ck-eos", exactlyOnce="true")
    values = Counter(v for _, _, _, v in read_all(bootstrap, eos, read_committed=True))
    assert sorted(int(v) for v in values) == list(range(300))
    assert set(values.values()) == {1}

    # The same replay without transactions writes the last micro-batch twice: the check above can fail.
    alo = new_topic("alo")
    run_and_replay_last(alo, tmp_path / "ck-alo")
    again = Counter(v for _, _, _, v in read_all(bootstrap, alo))
    assert set(again) == set(values) and max(again.values()) == 2

"""Decode to Arrow: schema, values and nulls, and agreement with decode_records."""

from __future__ import annotations

import gc
from types import ModuleType

import pyarrow as pa
from _records_helpers import IMPLS, build

from aiokafka_lite.records import arrow_schema

RECS = [
    (1_700_000_000_000, b"key", b"value", [("h1", b"a"), ("h2", None)]),
    (1_700_000_000_007, None, b"v2", []),
    (1_700_000_000_003, b"", None, [("\u00fc", b"")]),
]


def test_arrow_columns(impl: ModuleType) -> None:
    data = build(impl, RECS, 3, base_offset=40) + build(impl, RECS[:1], 0, base_offset=43)
    res = impl.decode_arrow(data, "tópic", 9)
    batch = res.batch
    assert batch.schema == arrow_schema()
    assert batch.schema.field("timestamp").type == pa.timestamp("ms", tz="UTC")
    assert batch.num_rows == 4
    assert batch.column("key").to_pylist() == [b"key", None, b"", b"key"]
    assert batch.column("value").to_pylist() == [b"value", b"v2", None, b"value"]
    assert batch.column("topic").to_pylist() == ["tópic"] * 4
    assert batch.column("partition").to_pylist() == [9] * 4
    assert batch.column("offset").to_pylist() == [40, 41, 42, 43]
    assert batch.column("timestamp").cast(pa.int64()).to_pylist() == [r[0] for r in RECS] + [RECS[0][0]]
    assert batch.column("timestampType").to_pylist() == [0] * 4
    assert batch.column("headers").to_pylist() == [
        [{"key": "h1", "value": b"a"}, {"key": "h2", "value": None}], [], [{"key": "\u00fc", "value": b""}],
        [{"key": "h1", "value": b"a"}, {"key": "h2", "value": None}]]
    batch.validate(full=True)
    assert (res.next_offset, res.truncated) == (44, False)


def test_arrow_matches_records_and_twin() -> None:
    data = b"".join(build(IMPLS["python"], RECS * 50, codec, base_offset=i * 150)
                    for i, codec in enumerate([0, 1, 2, 3, 4]))
    outs = {name: impl.decode_arrow(data, "t", 1, start_offset=30, end_offset=700)
            for name, impl in IMPLS.items()}
    assert outs["cython"].batch.equals(outs["python"].batch)
    assert outs["cython"][1:] == outs["python"][1:]
    records = IMPLS["cython"].decode_records(data, "t", 1, start_offset=30, end_offset=700).records
    assert outs["cython"].batch.column("offset").to_pylist() == [r.offset for r in records]
    assert outs["cython"].batch.column("value").to_pylist() == [r.value for r in records]
    assert outs["cython"].batch.column("headers").to_pylist() == [
        [{"key": k, "value": v} for k, v in r.headers] for r in records]


def test_arrow_empty_and_buffers_outlive_decoder(impl: ModuleType) -> None:
    empty = impl.decode_arrow(b"", "t", 0).batch
    assert empty.num_rows == 0 and empty.schema == arrow_schema()
    data = build(impl, [(1, None, b"x" * 1000, None)] * 100)
    tables = [impl.decode_arrow(data, "t", 0).batch for _ in range(3)]
    del data
    gc.collect()
    assert pa.Table.from_batches(tables).column("value").to_pylist() == [b"x" * 1000] * 300

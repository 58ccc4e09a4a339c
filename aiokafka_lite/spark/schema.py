"""The source's fixed schema and the sink's accepted columns, as in Spark's own Kafka connector.

The Arrow schema here must equal what PySpark derives from the Spark schema
(``to_arrow_schema(schema, timezone="UTC")``, nullability included): PySpark refuses record batches
whose schema differs, and the readers build their batches directly against this one.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ..errors import ConfigError
from ..records import arrow_schema

__all__ = [
    "HEADERS_ARROW_TYPE",
    "arrow_source_schema",
    "check_sink_schema",
    "source_schema",
]

_HEADERS_TYPE = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))
HEADERS_ARROW_TYPE = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))


def source_schema(include_headers: bool) -> StructType:
    """``key, value, topic, partition, offset, timestamp, timestampType[, headers]``, all nullable."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", _HEADERS_TYPE))
    return StructType(fields)


def arrow_source_schema(include_headers: bool) -> pa.Schema:
    """The Arrow twin of :func:`source_schema`: the columns the record decoder produces
    (``records.arrow_schema``), with timestamps in microseconds (UTC) as Spark wants."""
    schema = arrow_schema()
    at = schema.get_field_index("timestamp")
    schema = schema.set(at, pa.field("timestamp", pa.timestamp("us", tz="UTC")))
    return schema if include_headers else schema.remove(schema.get_field_index("headers"))


def _is_bytes_like(t: DataType) -> bool:
    return isinstance(t, (BinaryType, StringType))


def check_sink_schema(schema: StructType, *, default_topic: str | None,
                      include_headers: bool | None) -> None:
    """Refuse, at planning time, a DataFrame the sink cannot write (Spark's rules for its Kafka sink).

    ``value`` is required (binary or string); ``key`` binary or string; ``topic`` string, required
    unless the ``topic`` option is set; ``partition`` int; ``headers`` array<struct<key string, value
    binary>>. Other columns are ignored, as in Spark.
    """
    by_name = {f.name.lower(): f for f in schema.fields}
    value = by_name.get("value")
    if value is None:
        raise ConfigError(
            f"the sink needs a 'value' column (binary or string); columns: {schema.fieldNames()}")
    if not _is_bytes_like(value.dataType):
        raise ConfigError(f"column 'value' must be binary or string, got {value.dataType.simpleString()}")
    key = by_name.get("key")
    if key is not None and not _is_bytes_like(key.dataType):
        raise ConfigError(f"column 'key' must be binary or string, got {key.dataType.simpleString()}")
    topic = by_name.get("topic")
    if topic is None and default_topic is None:
        raise ConfigError("no topic: give the sink a 'topic' option or a string 'topic' column")
    if topic is not None and not isinstance(topic.dataType, StringType):
        raise ConfigError(f"column 'topic' must be a string, got {topic.dataType.simpleString()}")
    partition = by_name.get("partition")
    if partition is not None and not isinstance(partition.dataType, IntegerType):
        raise ConfigError(f"column 'partition' must be an int, got {partition.dataType.simpleString()}")
    headers = by_name.get("headers")
    if include_headers and headers is None:
        raise ConfigError("option includeHeaders=true needs a 'headers' column")
    if headers is not None and include_headers is not False:
        t = headers.dataType
        ok = (isinstance(t, ArrayType) and isinstance(t.elementType, StructType)
              and [f.name for f in t.elementType.fields] == ["key", "value"]
              and isinstance(t.elementType.fields[0].dataType, StringType)
              and _is_bytes_like(t.elementType.fields[1].dataType))
        if not ok:
            raise ConfigError("column 'headers' must be array<struct<key: string, value: binary>>, got "
                              f"{t.simpleString()}")

"""The data source Spark instantiates for ``format("aiokafka_lite")``: schema, readers and writers.

Spark pickles this object (its options only) to every Python process that plans or runs the query.
Options are parsed in each factory method, so a wrong option fails ``load()`` / ``save()`` /
``start()`` on the driver with a message naming it.
"""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from ..errors import ConfigError
from .options import _get, parse_sink_options, parse_source_options
from .reader import KafkaBatchReader
from .schema import check_sink_schema, source_schema
from .stream_reader import KafkaStreamReader
from .writer import KafkaBatchWriter, KafkaStreamWriter

__all__ = ["FORMAT", "KafkaDataSource"]

FORMAT = "aiokafka_lite"


class KafkaDataSource(DataSource):
    """Kafka topics as a Spark source and sink, through aiokafka_lite (no JVM Kafka jars)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        """Spark asks for the schema when ``load()`` is called (reads only), so the source options are
        checked here already; checks specific to batch or streaming reads follow when the reader is
        made."""
        batch_only = any(_get(self.options, name) is not None
                         for name in ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"))
        options = parse_source_options(self.options, streaming=not batch_only)
        return source_schema(options.include_headers)

    def _check_schema(self, schema: StructType, include_headers: bool) -> None:
        expected = source_schema(include_headers)
        if schema != expected:
            raise ConfigError("the Kafka source has a fixed schema and takes no user schema; expected "
                              f"{expected.simpleString()}, got {schema.simpleString()}")

    def reader(self, schema: StructType) -> DataSourceReader:
        options = parse_source_options(self.options, streaming=False)
        self._check_schema(schema, options.include_headers)
        return KafkaBatchReader(options)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        options = parse_source_options(self.options, streaming=True)
        self._check_schema(schema, options.include_headers)
        return KafkaStreamReader(options)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        if overwrite:
            raise ConfigError("the Kafka sink only appends; use mode('append')")
        options = parse_sink_options(self.options)
        check_sink_schema(schema, default_topic=options.topic, include_headers=options.include_headers)
        return KafkaBatchWriter(options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        options = parse_sink_options(self.options)
        check_sink_schema(schema, default_topic=options.topic, include_headers=options.include_headers)
        return KafkaStreamWriter(options)

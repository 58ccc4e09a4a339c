"""``spark.read.format("aiokafka_lite")``: a one-off read of ``[startingOffsets, endingOffsets)``.

The offsets are resolved once, when Spark plans the read (``partitions()`` runs on the driver), so
every task reads a fixed range and the result does not depend on when a task happens to run.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from ..errors import ConfigError
from .data_loss import report_data_loss
from .fetch import read_range
from .offset_reader import OffsetReader
from .options import SourceOptions
from .partitioning import KafkaInputPartition, plan_ranges

__all__ = ["KafkaBatchReader"]


class KafkaBatchReader(DataSourceReader):
    """Reads the offset ranges between the starting and ending specifications."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def partitions(self) -> list[InputPartition]:
        opts = self.options
        assert opts.ending is not None
        offsets = OffsetReader(opts)
        tps = offsets.partitions()
        start = offsets.resolve(opts.starting, tps, which="starting")
        end = offsets.resolve(opts.ending, tps, which="ending")
        for tp in sorted(tps):
            if end[tp] < start[tp]:
                message = (f"endingOffsets for {tp.topic}-{tp.partition} ({end[tp]}) is before its "
                           f"startingOffsets ({start[tp]})")
                if opts.starting.kind == "specific" and opts.ending.kind == "specific":
                    raise ConfigError(message)
                report_data_loss(opts.fail_on_data_loss, message + ".")
                end[tp] = start[tp]
        ranges = plan_ranges(start, end, min_partitions=opts.min_partitions,
                             max_records_per_partition=opts.max_records_per_partition)
        return [KafkaInputPartition(i, r) for i, r in enumerate(ranges)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        # PySpark substitutes InputPartition(None) when there is nothing to read.
        if not isinstance(partition, KafkaInputPartition):
            return iter(())
        return read_range(self.options, partition.range)

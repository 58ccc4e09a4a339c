"""``spark.readStream.format("aiokafka_lite")``: the micro-batch stream reader.

Positions belong to Spark's checkpoint, never to a consumer group: Spark stores each micro-batch's end
offsets (``{"topic": {"0": n}}``, exclusive) in its offset log before running it, and replays exactly
those ranges after a failure. So a restart on the same checkpoint neither skips nor repeats an offset,
and no offsets are committed to Kafka.

Spark runs this class in two places. On the driver, a long-lived Python process calls
``initialOffset``, ``latestOffset`` (every trigger), ``partitions`` and ``commit``; the state kept
there (the ``Trigger.AvailableNow`` target, the ``maxTriggerDelay`` clock, the last latest offsets for
progress reports) lives as long as the query run. On executors, a pickled copy only runs ``read``; it
carries options, never a socket.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)

from .admission import TriggerPacer, admit
from .data_loss import report_data_loss
from .fetch import read_range
from .offset_reader import OffsetReader
from .offsets import PartitionOffsets, from_json_dict, to_json_dict
from .options import SourceOptions
from .partitioning import KafkaInputPartition, plan_ranges

__all__ = ["KafkaStreamReader"]

log = logging.getLogger("aiokafka_lite.spark")


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of Kafka offset ranges, with Spark's admission control and Trigger.AvailableNow."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self._available_now: PartitionOffsets | None = None
        self._latest: PartitionOffsets | None = None
        self._pacer = TriggerPacer(options.max_trigger_delay_ms)
        #: Topic ids seen during this run (brokers with real ids): a changed id is a recreated topic.
        self._topic_ids: dict[str, Any] = {}

    @property
    def _offsets(self) -> OffsetReader:
        return OffsetReader(self.options)

    # -- driver side ----------------------------------------------------------------------------

    def initialOffset(self) -> dict[str, Any]:
        """Where a new query starts (a restarted one continues from its checkpoint instead)."""
        offsets = self._offsets
        tps = offsets.partitions()
        start = offsets.resolve(self.options.starting, tps, which="starting")
        log.info("initial offsets for %s: %s", self.options.subscription.describe(), start)
        return to_json_dict(start)

    def getDefaultReadLimit(self) -> ReadLimit:
        opts = self.options
        if opts.max_offsets_per_trigger is not None:
            return ReadMaxRows(opts.max_offsets_per_trigger)
        if opts.min_offsets_per_trigger is not None:
            return ReadMinRows(opts.min_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Fix the target: everything in the subscribed partitions now, nothing that arrives later."""
        offsets = self._offsets
        self._available_now = offsets.latest(offsets.partitions())
        log.info("Trigger.AvailableNow target: %s", self._available_now)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        """The end of the next micro-batch: new partitions included, within Spark's read limit."""
        begin = from_json_dict(start, "start offset")
        offsets = self._offsets
        fail = self.options.fail_on_data_loss
        if self._available_now is not None:
            latest = dict(self._available_now)
        else:
            tps = offsets.partitions()
            gone = sorted(set(begin) - tps)
            if gone:
                report_data_loss(fail, f"partitions {gone} are gone (deleted topics or partitions).")
            latest = offsets.latest(tps)
        self._latest = latest
        self._check_topic_ids({tp.topic for tp in latest})
        new = sorted(set(latest) - set(begin))
        full_start: PartitionOffsets = {tp: begin[tp] for tp in latest if tp in begin}
        if new:
            earliest = offsets.earliest(new)
            log.info("new partitions: %s, from their earliest offsets %s", new, earliest)
            full_start.update(earliest)
        went_back = sorted(tp for tp in latest if latest[tp] < full_start[tp])
        for tp in went_back:
            report_data_loss(fail, f"topic {tp.topic!r}: partition {tp.partition}'s latest offset went back "
                                   f"from {full_start[tp]} (the query's position) to {latest[tp]}; was the "
                                   "topic deleted and recreated?")
        if went_back:
            # A new log under the old name: read it from its start (partitions() sees end < start
            # for these and does the same, so a replay of this batch reads the same range).
            full_start.update(offsets.earliest(went_back))
        pacer = None if self._available_now is not None else self._pacer
        min_option = None if self._available_now is not None else self.options.min_offsets_per_trigger
        end = admit(full_start, latest, limit, min_offsets_option=min_option, pacer=pacer)
        if end is None:
            return start
        return to_json_dict(end)

    def _check_topic_ids(self, topics: set[str]) -> None:
        """A topic deleted and recreated while this run watched it has a new id (on brokers that give
        ids; noida-db 0.2 reports none). Its offsets may even have grown past the query's position, so
        offsets alone can't tell. failOnDataLoss=true fails naming the topic; false warns and goes on
        from the checkpointed offsets, as Spark's source would (records of the new topic below them
        are skipped)."""
        ids = self._offsets.topic_ids(topics)
        for topic, tid in sorted(ids.items()):
            before = self._topic_ids.get(topic)
            self._topic_ids[topic] = tid
            if before is not None and before != tid:
                report_data_loss(self.options.fail_on_data_loss,
                                 f"topic {topic!r} was deleted and recreated while the query ran (its topic "
                                 f"id changed from {before} to {tid}).")

    def reportLatestOffset(self) -> dict[str, Any] | None:
        return None if self._latest is None else to_json_dict(self._latest)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        """One task per partition range (split further by minPartitions / maxRecordsPerPartition).

        A partition absent from ``start`` is new in this batch and is read from its earliest offset;
        if that is not 0, records were deleted before the query saw them: data loss, as in Spark.
        """
        begin = from_json_dict(start, "start offset")
        stop = from_json_dict(end, "end offset")
        full_start = {tp: begin[tp] for tp in stop if tp in begin}
        went_back = sorted(tp for tp in full_start if stop[tp] < full_start[tp])
        if went_back:  # reported by latestOffset (failOnDataLoss=false): the topic's new log, from its start
            earliest_now = self._offsets.earliest(went_back)
            full_start.update({tp: min(earliest_now[tp], stop[tp]) for tp in went_back})
        new = sorted(set(stop) - set(begin))
        if new:
            earliest = self._offsets.earliest(new)
            for tp in new:
                if earliest[tp] != 0:
                    report_data_loss(self.options.fail_on_data_loss,
                                     f"added partition {tp.topic}-{tp.partition} starts at offset "
                                     f"{earliest[tp]} instead of 0.")
                full_start[tp] = min(earliest[tp], stop[tp])
        ranges = plan_ranges(full_start, stop, min_partitions=self.options.min_partitions,
                             max_records_per_partition=self.options.max_records_per_partition)
        return [KafkaInputPartition(i, r) for i, r in enumerate(ranges)]

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to do: the offsets are in Spark's checkpoint, and Kafka keeps no state for us."""

    def stop(self) -> None:
        """Nothing to release: clients belong to the process's worker loop and are reused."""

    # -- executor side --------------------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, KafkaInputPartition):
            return iter(())
        return read_range(self.options, partition.range)

    def __getstate__(self) -> dict[str, Any]:
        # Driver-only state stays behind; executors need the options alone.
        return {"options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["options"])  # type: ignore[misc]

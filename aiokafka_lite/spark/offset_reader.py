"""Driver-side questions to the brokers: which partitions, and which offsets.

Used by the batch reader when it plans a read and by the stream reader at every trigger. Calls run on
the process's worker loop (``_client_cache``) against one cached client per configuration, so a
long-running query reuses its connections and metadata from trigger to trigger. Listing offsets is
retried ``fetchOffset.numRetries`` times, ``fetchOffset.retryIntervalMs`` apart, as in Spark; within
each attempt, unreachable brokers (a restart) and moved leaders are waited out for up to
``kafkaConsumer.pollTimeoutMs`` (Spark's Admin client likewise retries for ``default.api.timeout.ms``).
"""

from __future__ import annotations

import time
from collections.abc import Coroutine, Iterable, Mapping
from typing import Any, TypeVar

from ..errors import ConfigError, KafkaError
from ..structs import TopicPartition
from ._client_cache import worker_loop
from ._source_client import SourceClient
from .data_loss import report_data_loss
from .offsets import EARLIEST, LATEST, OffsetSpec, PartitionOffsets
from .options import SourceOptions

__all__ = ["OffsetReader"]

T = TypeVar("T")


class OffsetReader:
    """Partitions of the subscription and their offsets, resolved against the live cluster."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    # -- plumbing -------------------------------------------------------------------------------

    def _run(self, make: Any) -> Any:
        """Run ``make(client)`` on the worker loop with Spark's offset-fetch retries."""
        opts = self.options
        attempts = opts.fetch_offset_num_retries + 1
        # The client retries through unreachable brokers for up to pollTimeoutMs; leave it room to
        # say so itself before the outer wait gives up.
        timeout = opts.poll_timeout_ms / 1000.0 + 60.0
        for attempt in range(attempts):
            try:
                return worker_loop().run(self._with_client(make), timeout)
            except KafkaError as exc:
                if not exc.retriable or attempt == attempts - 1:
                    raise
            time.sleep(opts.fetch_offset_retry_interval_ms / 1000.0)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _with_client(self, make: Any) -> Any:
        client = await SourceClient.get(self.options.client, self.options.poll_timeout_ms)

        def attempt() -> Coroutine[Any, Any, Any]:
            coro: Coroutine[Any, Any, Any] = make(client)
            return coro

        return await client.retrying(f"asking {self.options.subscription.describe()} for offsets",
                                     self.options.poll_timeout_ms, attempt)

    # -- questions ------------------------------------------------------------------------------

    def partitions(self) -> set[TopicPartition]:
        """The partitions the subscription covers now (assign: as given, whether they exist or not)."""
        sub = self.options.subscription
        if sub.kind == "assign":
            return set(sub.partitions)
        found: set[TopicPartition] = self._run(lambda c: c.partitions(sub))
        return found

    def topic_ids(self, topics: Iterable[str]) -> dict[str, Any]:
        """Topic ids where the broker reports real ones (a recreated topic gets a new id)."""
        names = sorted(set(topics))
        found: dict[str, Any] = self._run(lambda c: c.topic_ids(names))
        return found

    def earliest(self, tps: Iterable[TopicPartition]) -> PartitionOffsets:
        return self._list(tps, EARLIEST)

    def latest(self, tps: Iterable[TopicPartition]) -> PartitionOffsets:
        """High watermarks, or last stable offsets with kafka.isolation.level=read_committed."""
        return self._list(tps, LATEST)

    def _list(self, tps: Iterable[TopicPartition], spec: int) -> PartitionOffsets:
        wanted = sorted(set(tps))
        if not wanted:
            return {}
        rc = self.options.read_committed
        found: Mapping[TopicPartition, int | None]
        if spec == LATEST:
            found = self._run(lambda c: c.latest_offsets(wanted, rc))
        else:
            found = self._run(lambda c: c.list_offsets(wanted, spec, rc))
        missing = [tp for tp in wanted if found.get(tp) is None]
        if missing:
            raise KafkaError(f"the brokers gave no {'earliest' if spec == EARLIEST else 'latest'} offset "
                             f"for {missing}")
        return {tp: int(found[tp]) for tp in wanted}  # type: ignore[arg-type]

    def for_times(self, times: Mapping[TopicPartition, int]) -> dict[TopicPartition, int | None]:
        """The first offset whose timestamp is >= the given one, per partition (None: no such record)."""
        out: dict[TopicPartition, int | None] = {}
        rc = self.options.read_committed
        by_ts: dict[int, list[TopicPartition]] = {}
        for tp, ts in times.items():
            by_ts.setdefault(ts, []).append(tp)
        for ts, group in sorted(by_ts.items()):
            out.update(self._run(lambda c, g=group, t=ts: c.offsets_for_time(
                sorted(g), t, rc, self.options.poll_timeout_ms)))
        return out

    # -- specifications -------------------------------------------------------------------------

    def resolve(self, spec: OffsetSpec, tps: set[TopicPartition], *, which: str) -> PartitionOffsets:
        """Concrete offsets for ``tps`` from a starting/ending specification.

        ``which`` is "starting" or "ending" (for messages and the timestamp fallbacks): a timestamp with
        no matching record resolves to the latest offset when ending, and when starting either fails
        or resolves to latest as startingOffsetsByTimestampStrategy says.
        """
        if not tps:
            return {}
        if spec.kind == "earliest":
            return self.earliest(tps)
        if spec.kind == "latest":
            return self.latest(tps)
        if spec.kind == "specific":
            return self._resolve_specific(spec.partition_values(), tps, which)
        if spec.kind == "timestamp":
            assert spec.timestamp_ms is not None
            times = {tp: spec.timestamp_ms for tp in tps}
        else:
            given = spec.partition_values()
            self._check_covers(given, tps, f"{which}OffsetsByTimestamp")
            times = {tp: given[tp] for tp in tps}
        found = self.for_times(times)
        unmatched = sorted(tp for tp, off in found.items() if off is None)
        if unmatched:
            if which == "starting" and self.options.starting_by_timestamp_strategy == "error":
                raise ConfigError(
                    f"no record at or after the starting timestamp in {unmatched}; set "
                    "startingOffsetsByTimestampStrategy=latest to start those partitions at their end")
            latest = self.latest(unmatched)
            found.update(latest)
        return {tp: int(off) for tp, off in found.items()}  # type: ignore[arg-type]

    @staticmethod
    def _check_covers(given: Mapping[TopicPartition, int], tps: set[TopicPartition], option: str) -> None:
        missing = tps - set(given)
        if missing:
            raise ConfigError(
                f"option {option!r} names specific partitions, so it must name all of them; missing "
                f"{sorted(missing)} (use -2 for earliest, -1 for latest). Specified: {sorted(given)}; "
                f"subscribed: {sorted(tps)}")

    def _resolve_specific(self, given: Mapping[TopicPartition, int], tps: set[TopicPartition],
                          which: str) -> PartitionOffsets:
        self._check_covers(given, tps, f"{which}Offsets")
        earliest = self.earliest(tps)
        latest = self.latest(tps)
        out: PartitionOffsets = {}
        for tp in sorted(tps):
            want = given[tp]
            if want == EARLIEST:
                out[tp] = earliest[tp]
            elif want == LATEST:
                out[tp] = latest[tp]
            elif want < earliest[tp]:
                report_data_loss(self.options.fail_on_data_loss,
                                 f"{which}Offsets asks for {tp.topic}-{tp.partition} at {want}, but the "
                                 f"earliest available offset is {earliest[tp]}.")
                out[tp] = earliest[tp]
            elif want > latest[tp]:
                report_data_loss(self.options.fail_on_data_loss,
                                 f"{which}Offsets asks for {tp.topic}-{tp.partition} at {want}, beyond its "
                                 f"latest offset {latest[tp]}.")
                out[tp] = latest[tp]
            else:
                out[tp] = want
        return out

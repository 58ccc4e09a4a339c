"""Admission control: how far one micro-batch may advance (maxOffsetsPerTrigger, minOffsetsPerTrigger).

Spark asks the source for the end of the next micro-batch with a ``ReadLimit``. The math lives here,
free of I/O, so it can be checked exhaustively:

* ``ReadMaxRows(n)`` (``maxOffsetsPerTrigger``): the batch advances at most ``n`` offsets in total,
  split across partitions in proportion to their lag. Unlike Spark's own source (which rounds small
  shares *up* and can overshoot), the split never exceeds ``n``; every lagging partition gets at least
  one offset when ``n`` allows it, so no partition starves behind busier ones.
* ``ReadMinRows(m)`` / ``minOffsetsPerTrigger`` with ``maxTriggerDelay``: the batch is skipped (the
  end equals the start) while fewer than ``m`` offsets are waiting, until ``maxTriggerDelay`` has passed
  since the last batch. Spark's Python API cannot combine limits, so when both options are set the
  default limit is ``ReadMaxRows`` and the minimum is applied from the options on top of it.
* ``ReadAllAvailable``: everything, whatever the options say (Spark's contract; it passes this for
  ``Trigger.Once``).

Offsets are not rows: compaction and transaction markers leave gaps, so a batch holds *at most* as many
rows as offsets it advances.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, ReadMinRows

from ..structs import TopicPartition
from .offsets import PartitionOffsets

__all__ = ["TriggerPacer", "admit", "apportion", "total_lag"]


def total_lag(start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int]) -> int:
    """Offsets waiting between ``start`` and ``latest`` (partitions missing from start count from 0)."""
    return sum(max(0, end - start.get(tp, 0)) for tp, end in latest.items())


def apportion(start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int],
              max_offsets: int) -> PartitionOffsets:
    """End offsets advancing at most ``max_offsets`` in total, in proportion to each partition's lag.

    ``start`` must hold every partition of ``latest`` (new partitions at their earliest offset).
    """
    if max_offsets < 0:
        raise ValueError(f"max_offsets must be >= 0, got {max_offsets}")
    lags = {tp: max(0, end - start[tp]) for tp, end in latest.items()}
    total = sum(lags.values())
    if total <= max_offsets:
        return dict(latest)
    # Partitions that are ahead of "latest" (it can move backwards after data loss) keep their start.
    out: PartitionOffsets = {tp: (latest[tp] if lags[tp] == 0 else start[tp]) for tp in latest}
    lagging = sorted((tp for tp, lag in lags.items() if lag > 0), key=lambda tp: (-lags[tp], tp))
    grant: dict[TopicPartition, int]
    if max_offsets < len(lagging):
        # Fewer offsets than lagging partitions: the most-lagging partitions get one each.
        grant = {tp: 1 for tp in lagging[:max_offsets]}
    else:
        shares = {tp: max_offsets * lags[tp] / total for tp in lagging}
        # Every lagging partition gets at least one offset, so none is starved behind busier ones.
        grant = {tp: max(1, min(lags[tp], int(shares[tp]))) for tp in lagging}
        left = max_offsets - sum(grant.values())
        while left < 0:  # the minimum of one overshot: take back from the biggest grants
            tp = max(lagging, key=lambda t: (grant[t], t))
            grant[tp] -= 1
            left += 1
        # Largest remainder: leftover offsets go to the biggest fractional shares, one each.
        for tp in sorted(lagging, key=lambda t: (-(shares[t] - int(shares[t])), t)):
            if left <= 0:
                break
            if grant[tp] < lags[tp]:
                grant[tp] += 1
                left -= 1
        for tp in lagging:  # anything still left (shares capped by lag) goes where there is room
            extra = min(left, lags[tp] - grant[tp])
            grant[tp] += extra
            left -= extra
    for tp, n in grant.items():
        out[tp] = start[tp] + n
    return out


@dataclass
class TriggerPacer:
    """minOffsetsPerTrigger / maxTriggerDelay: hold a batch back until enough data or enough time.

    Lives in the driver's long-lived stream reader; like Spark's source it starts with no previous
    trigger, so the first batch of a run is never held back.
    """

    max_delay_ms: int
    last_trigger_ms: float = 0.0

    def hold(self, waiting: int, minimum: int, now_ms: float | None = None) -> bool:
        """True when the batch should wait; False (and the clock restarts) when it should run."""
        now = time.time() * 1000.0 if now_ms is None else now_ms
        if waiting < minimum and now - self.last_trigger_ms < self.max_delay_ms:
            return True
        self.last_trigger_ms = now
        return False


def admit(start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int], limit: ReadLimit,
          *, min_offsets_option: int | None, pacer: TriggerPacer | None,
          now_ms: float | None = None) -> PartitionOffsets | None:
    """The end of the next micro-batch, from ``start``, the broker's ``latest`` and Spark's limit.

    ``start`` must cover every partition of ``latest``. None means "hold the batch back" (the caller
    answers Spark with the unchanged start offset). ``min_offsets_option`` is minOffsetsPerTrigger,
    applied under ``ReadMaxRows`` because the Python API has no composite limit; pass None to disable
    it (as with ``Trigger.AvailableNow``, which must finish).
    """
    if isinstance(limit, ReadAllAvailable):
        return dict(latest)
    waiting = total_lag(start, latest)
    minimum: int | None = None
    if isinstance(limit, ReadMinRows):
        minimum = limit.min_rows
    elif min_offsets_option is not None:
        minimum = min_offsets_option
    if minimum is not None and pacer is not None and waiting > 0 and pacer.hold(waiting, minimum, now_ms):
        return None
    if isinstance(limit, ReadMaxRows):
        return apportion(start, latest, limit.max_rows)
    return dict(latest)

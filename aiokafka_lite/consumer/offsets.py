"""The consumer's ListOffsets lookups: earliest / latest / by timestamp (net/list_offsets.py asks).

Used to reset positions (``auto_offset_reset``, ``seek_to_beginning/end``) and by ``beginning_offsets``,
``end_offsets`` and ``offsets_for_times``. A consumer may be subscribed ahead of the topic's creation, so a
topic the cluster does not know yet is waited for until the deadline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from .. import errors as Errors
from ..net.list_offsets import EARLIEST, LATEST, ListedOffset, list_offsets
from ..structs import TopicPartition
from .cluster_view import ConsumerClient

__all__ = ["EARLIEST", "LATEST", "OffsetAndTimestamp", "OffsetLookup", "first_error"]


class OffsetAndTimestamp(NamedTuple):
    """What ``offsets_for_times`` returns per partition (as aiokafka's)."""

    offset: int
    timestamp: int
    leader_epoch: int = -1


class OffsetLookup:
    """The consumer's settings for ListOffsets, and its reading of the answers."""

    def __init__(self, client: ConsumerClient, isolation_level: str, retry_backoff_ms: int,
                 retry_backoff_max_ms: int = 1000) -> None:
        self._client = client
        self._read_committed = isolation_level == "read_committed"
        self._backoff = (retry_backoff_ms, retry_backoff_max_ms)

    async def lookup(self, timestamps: Mapping[TopicPartition, int], timeout: float
                     ) -> tuple[dict[TopicPartition, OffsetAndTimestamp | None], dict[TopicPartition,
                                                                                    Errors.KafkaError]]:
        """Each partition's answer (None where no offset exists), and apart, each failed partition's error
        (a final broker error, or KafkaTimeoutError for one still unanswered at the deadline). One
        partition's failure never hides the others' answers."""
        outcomes = await list_offsets(
            self._client, timestamps, timeout=timeout, read_committed=self._read_committed,
            retry_backoff_ms=self._backoff[0], retry_backoff_max_ms=self._backoff[1])
        found = {tp: _read(o) for tp, o in outcomes.items() if isinstance(o, ListedOffset)}
        failed = {tp: o for tp, o in sorted(outcomes.items()) if isinstance(o, Errors.KafkaError)}
        return found, failed

    async def list_offsets(self, timestamps: Mapping[TopicPartition, int],
                           timeout: float) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """Offset per partition for each timestamp (EARLIEST, LATEST or ms); None where none exists.

        For a call that asked for these partitions (beginning_offsets, ...): raises the first failed
        partition's error (see :func:`first_error`).
        """
        found, failed = await self.lookup(timestamps, timeout)
        if failed:
            raise first_error(failed)
        return found


def first_error(failed: Mapping[TopicPartition, Errors.KafkaError]) -> Errors.KafkaError:
    """The first partition's error, its message counting the other failed partitions."""
    ordered = sorted(failed.items())
    error = ordered[0][1]
    if len(ordered) > 1 and error.args:
        error.args = (f"{error.args[0]} (and {len(ordered) - 1} more partitions)", *error.args[1:])
    return error


def _read(answer: ListedOffset) -> OffsetAndTimestamp | None:
    return None if answer.offset < 0 else OffsetAndTimestamp(*answer)

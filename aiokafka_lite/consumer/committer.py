"""Committed offsets: OffsetCommit and OffsetFetch against the group coordinator, with their retries.

Retriable failures (coordinator moved or loading, timeouts, connection loss, and in a KIP-848 group a
stale member epoch) are retried until the deadline, backing off on the one helper (net/retry.py). In a
KIP-848 group the generation id sent is the member epoch (OffsetCommit v9). A commit refused because this
member's generation is over (the group rebalanced without us) raises :class:`CommitFailedError` and tells
the membership logic, which then treats the partitions as lost and rejoins, as the Java client does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .. import errors as Errors
from ..net.retry import ExponentialBackoff, Retry
from ..protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from ..protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from ..structs import OffsetAndMetadata, TopicPartition
from . import cluster_view as cv
from .group_rules import membership_over
from .metrics import ConsumerMetrics

log = logging.getLogger(__name__)

#: v10 of both names topics by id; v9 carries everything else we use.
_MAX_COMMIT_VERSION = 9
_MAX_FETCH_VERSION = 9

_RETRY_ERRORS = frozenset({Errors.CoordinatorLoadInProgressError.errno, Errors.RequestTimedOutError.errno,
                           Errors.UnstableOffsetCommitError.errno, Errors.NetworkError.errno})


class CommitterHost(Protocol):
    """What the committer asks of the group membership (the classic and KIP-848 coordinators), as
    :class:`.heartbeat.HeartbeatHost` is for the heartbeat: nothing else of the coordinator is touched."""

    group_instance_id: str | None
    metrics: ConsumerMetrics

    async def ensure_coordinator(self, deadline: float) -> int:
        """The coordinator's node id, looked up if unknown; raises KafkaTimeoutError at ``deadline``."""

    def commit_identity(self) -> tuple[int, str]:
        """(generation or member epoch, member id) to commit with; (-1, "") outside a group."""

    def coordinator_dead(self, reason: BaseException) -> None:
        """The coordinator moved or its connection failed: look it up again."""

    def member_error(self, code: int) -> None:
        """The commit found the membership over (:func:`.group_rules.membership_over`): partitions lost."""

    def request_rejoin(self, reason: str) -> None:
        """The group is rebalancing: the membership should rejoin."""


def _same(request: Any) -> Callable[[int], Any]:
    """A request that is the same at every version."""
    return lambda _version: request


class Committer:
    """Commits and reads offsets for one group, through the coordinator that ``membership`` tracks."""

    def __init__(self, client: cv.ConsumerClient, membership: CommitterHost, group_id: str,
                 require_stable: bool, retry_backoff_ms: int,
                 retry_backoff_max_ms: int | None = None) -> None:
        self._client = client
        self._m = membership
        self._group_id = group_id
        self._require_stable = require_stable
        self._backoff = ExponentialBackoff(retry_backoff_ms, retry_backoff_max_ms or retry_backoff_ms)

    async def commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata], timeout: float,
                     before_each: Callable[[], None] | None = None) -> None:
        """Commit ``offsets`` (positions of the next records to read) within ``timeout`` seconds.
        ``before_each`` runs before every attempt and may refuse it (a retry after a rebalance would carry
        the new generation, which the broker accepts, for partitions that may have moved meanwhile)."""
        if not offsets:
            return
        retry = Retry("commit", timeout, self._backoff, wait_out=True)
        started = time.monotonic()
        while True:
            node = await self._m.ensure_coordinator(retry.deadline)
            # The check and the identity it vouches for are read together, after the coordinator lookup's
            # await: a rebalance during that lookup (when one is likely) must be seen by the check, not
            # only carried by the new generation. Do not put an await between these two lines.
            if before_each is not None:
                before_each()
            generation, member_id = self._m.commit_identity()
            by_topic: dict[str, list[OffsetCommitRequestPartition]] = {}
            for tp, om in offsets.items():
                by_topic.setdefault(tp.topic, []).append(OffsetCommitRequestPartition(
                    partition_index=tp.partition, committed_offset=om.offset,
                    committed_leader_epoch=om.leader_epoch, committed_metadata=om.metadata))
            req = OffsetCommitRequest(
                group_id=self._group_id, generation_id_or_member_epoch=generation, member_id=member_id,
                group_instance_id=self._m.group_instance_id, retention_time_ms=-1,
                topics=[OffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in by_topic.items()])
            answer = await self._round_trip(node, OffsetCommitRequest, _same(req), _MAX_COMMIT_VERSION, retry)
            if answer is None:
                continue
            resp = answer[1]
            again: BaseException | None = None
            for t in resp.topics:
                for p in t.partitions:
                    code = p.error_code
                    if code == 0:
                        continue
                    tp = TopicPartition(t.name, p.partition_index)
                    if Errors.coordinator_moved(code):
                        self._m.coordinator_dead(Errors.for_code(code)())
                        again = Errors.for_code(code)()
                    elif code in _RETRY_ERRORS or Errors.for_code(code).member_epoch_stale:
                        # STALE_MEMBER_EPOCH (KIP-848): the next heartbeat brings the epoch; retry with it.
                        again = Errors.for_code(code)()
                    elif membership_over(code):
                        self._m.member_error(code)
                        raise Errors.CommitFailedError(
                            f"commit of {tp.topic}[{tp.partition}] failed: {Errors.for_code(code).message}; "
                            "the group rebalanced and these partitions may belong to another member now")
                    elif code == Errors.RebalanceInProgressError.errno:
                        self._m.request_rejoin("a commit found a rebalance in progress")
                        raise Errors.CommitFailedError(
                            "commit failed: the group is rebalancing; poll() to finish it, then commit again")
                    else:
                        raise Errors.for_code(code)(f"commit of {tp.topic}[{tp.partition}]")
            if again is None:
                self._m.metrics.commits += 1
                self._m.metrics.commit_latency.record(time.monotonic() - started)
                return
            await self._pause(retry, again)

    async def fetch(self, partitions: set[TopicPartition],
                    timeout: float) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The group's committed offsets for ``partitions`` (None where nothing is committed)."""
        if not partitions:
            return {}
        retry = Retry("fetching committed offsets", timeout, self._backoff, wait_out=True)
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(partitions):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        while True:
            node = await self._m.ensure_coordinator(retry.deadline)
            answer = await self._round_trip(node, OffsetFetchRequest,
                                            lambda v: self._fetch_request(v, by_topic), _MAX_FETCH_VERSION,
                                            retry)
            if answer is None:
                continue
            version, resp = answer
            out, again = self._fetched(resp, version)
            if again is None:
                for tp in partitions:
                    out.setdefault(tp, None)
                return out
            await self._pause(retry, again)

    def _fetch_request(self, version: int, by_topic: dict[str, list[int]]) -> OffsetFetchRequest:
        if version >= 8:
            return OffsetFetchRequest(groups=[OffsetFetchRequestGroup(
                group_id=self._group_id, member_id=None, member_epoch=-1,
                topics=[OffsetFetchRequestTopics(name=t, partition_indexes=ps)
                        for t, ps in by_topic.items()])], require_stable=self._require_stable)
        return OffsetFetchRequest(group_id=self._group_id, topics=[
            OffsetFetchRequestTopic(name=t, partition_indexes=ps) for t, ps in by_topic.items()],
            require_stable=self._require_stable and version >= 7)

    def _fetched(self, resp: Any, version: int
                 ) -> tuple[dict[TopicPartition, OffsetAndMetadata | None], BaseException | None]:
        """An OffsetFetch answer as (offsets found, the error to retry after, if any); raises the rest."""
        if version >= 8:
            group = resp.groups[0] if resp.groups else None
            top_code = group.error_code if group is not None else 0
            topics = group.topics if group is not None else []
        else:
            top_code, topics = resp.error_code, resp.topics
        out: dict[TopicPartition, OffsetAndMetadata | None] = {}
        if top_code:
            if Errors.coordinator_moved(top_code):
                self._m.coordinator_dead(Errors.for_code(top_code)())
            elif top_code not in _RETRY_ERRORS:
                raise Errors.for_code(top_code)(f"fetching committed offsets of group {self._group_id!r}")
            return out, Errors.for_code(top_code)()
        retry: BaseException | None = None
        for t in topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                code = p.error_code
                if code in _RETRY_ERRORS or Errors.coordinator_moved(code):
                    retry = Errors.for_code(code)()
                elif code == Errors.UnknownTopicOrPartitionError.errno or (
                        code == 0 and p.committed_offset < 0):
                    out[tp] = None
                elif code:
                    raise Errors.for_code(code)(f"committed offset of {tp.topic}[{tp.partition}]")
                else:
                    out[tp] = OffsetAndMetadata(p.committed_offset, p.metadata or "",
                                                p.committed_leader_epoch)
        return out, retry

    async def _round_trip(self, node: int, request_cls: type, build: Callable[[int], Any], max_version: int,
                          retry: Retry) -> tuple[int, Any] | None:
        """Send ``build(version)`` to the coordinator ``node``: (version, answer), or None after a lost
        connection or a retriable failure (the coordinator is looked up again, after the backoff)."""
        try:
            version = await cv.api_version(self._client, node, request_cls, max_version)
            return version, await cv.send(self._client, node, build(version), version,
                                          timeout_ms=max(1.0, retry.remaining() * 1000))
        except Errors.KafkaError as exc:
            if not (exc.retriable or isinstance(exc, Errors.KafkaConnectionError)):
                raise
            self._m.coordinator_dead(exc)
            await self._pause(retry, exc)
            return None

    async def _pause(self, retry: Retry, exc: BaseException) -> None:
        """The backoff before the next attempt (net/retry.py); KafkaTimeoutError naming the group and the
        last error when none can start before the deadline."""
        log.debug("%s: %s; retrying", retry.what, exc)
        if not await retry.pause():
            raise Errors.KafkaTimeoutError(
                f"{retry.what} for group {self._group_id!r} timed out; last error: {exc}") from exc

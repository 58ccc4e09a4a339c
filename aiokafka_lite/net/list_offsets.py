"""The one ListOffsets client: the consumer, the admin client and the Spark source look offsets up here.

They used to have three, with three retry policies (issue 13). A lookup sends one request per partition
leader, in parallel, and sorts each partition's answer by what its error class says: an answer, a final
error, or "ask again" (retriable; with fresh metadata when the error says the routing was stale). Partitions
are asked again, with exponential backoff, until the deadline (net/retry.py's ``retry_each``); then the
caller gets a KafkaTimeoutError carrying the last error.
What differs between callers is a choice, not a copy: whether a topic the cluster does not know is final
(the admin client: the broker just said so) or worth waiting for (a consumer subscribed ahead of a producer).

:func:`latest_offsets` is the one answer to "where does each partition end" for the tools that must not
stop short (the CLI, the Spark source): Tansu 0.6 answers ListOffsets(latest) with the *base* offset of the
partition's last batch plus one, so the answer is raised to the high watermark (or last stable offset) a
one-byte Fetch reports. Kafka and noida-db answer both alike, so there the Fetch changes nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .. import errors as Errors
from ..protocol.messages.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from ..structs import TopicPartition
from ._timeout import run_with_timeout
from .fetch_request import high_watermarks
from .retry import ExponentialBackoff, Retry, retry_each

__all__ = ["EARLIEST", "LATEST", "MAX_TIMESTAMP", "ListedOffset", "latest_offsets", "list_offsets"]

EARLIEST = -2
LATEST = -1
MAX_TIMESTAMP = -3


class ListedOffset(NamedTuple):
    """A partition's answer. ``offset`` is -1 when there is none (a time after every record, or a topic whose
    message format has no timestamps)."""

    offset: int
    timestamp: int = -1
    leader_epoch: int = -1


Outcome = ListedOffset | Errors.KafkaError


def _describe(tp: TopicPartition) -> str:
    return f"{tp.topic}[{tp.partition}]"


async def list_offsets(client: Any, wanted: Mapping[TopicPartition, int], *, timeout: float,
                       read_committed: bool = False, missing_topics_final: bool = False,
                       max_disconnects: int | None = None, retry_backoff_ms: float = 100.0,
                       retry_backoff_max_ms: float = 1000.0) -> dict[TopicPartition, Outcome]:
    """Each partition's offset for its spec (EARLIEST, LATEST, MAX_TIMESTAMP or a time in ms), or its error.

    Never raises for one partition's sake: a final error, or KafkaTimeoutError (the last error as its
    cause) for a partition still unanswered after ``timeout`` seconds, is that partition's outcome.
    ``missing_topics_final``: a topic that fresh metadata does not list fails at once instead of being
    waited for. ``max_disconnects``: after that many rounds in which a broker dropped the connection, a lost
    connection is final (a broker that drops it on this request will drop it again); None waits out a
    restarting broker until the deadline.
    """
    retry = Retry("ListOffsets", timeout, ExponentialBackoff(retry_backoff_ms, retry_backoff_max_ms))

    async def attempt(pending: list[TopicPartition]) -> dict[TopicPartition, Outcome]:
        out, by_leader = await _route(client, pending, missing_topics_final, retry)
        answers = await asyncio.gather(
            *(_ask(client, node, {tp: wanted[tp] for tp in tps}, read_committed, retry.deadline)
              for node, tps in by_leader.items()),
            return_exceptions=True)
        for tps, answer in zip(by_leader.values(), answers, strict=True):
            if isinstance(answer, BaseException):
                if not isinstance(answer, Errors.KafkaError):
                    raise answer
                answer = {tp: answer for tp in tps}
            out.update(answer)
        return out

    done = await retry_each(wanted, attempt, retry, retriable=_worth_retrying,
                            max_disconnects=max_disconnects, describe=_describe,
                            reroute=client.request_metadata_update)
    return {tp: done[tp] for tp in wanted}


async def latest_offsets(client: Any, tps: Iterable[TopicPartition], *, timeout: float,
                         read_committed: bool = False, **options: Any) -> dict[TopicPartition, Outcome]:
    """Each partition's true end (:func:`list_offsets` of LATEST, raised to what a Fetch reports), or its
    error. ``options`` go to :func:`list_offsets`. A failed Fetch leaves ListOffsets's answer standing."""
    outcomes = await list_offsets(client, dict.fromkeys(sorted(set(tps)), LATEST), timeout=timeout,
                                  read_committed=read_committed, **options)
    by_node: dict[int, dict[TopicPartition, int]] = {}
    for tp, answer in outcomes.items():
        leader = client.cluster.leader_for(tp)
        if isinstance(answer, ListedOffset) and answer.offset >= 0 and not _leaderless(leader):
            by_node.setdefault(leader, {})[tp] = answer.offset
    ends = await asyncio.gather(*(high_watermarks(client, node, at, read_committed)
                                  for node, at in by_node.items()), return_exceptions=True)
    for end in ends:
        if isinstance(end, Errors.KafkaError):
            continue  # ListOffsets's answer stands; the next call asks again
        if isinstance(end, BaseException):
            raise end
        for tp, offset in end.items():
            listed = outcomes[tp]
            if isinstance(listed, ListedOffset) and offset > listed.offset:
                outcomes[tp] = listed._replace(offset=offset)
    return outcomes


def _leaderless(leader: int | None) -> bool:
    return leader is None or leader < 0


def _worth_retrying(error: BaseException) -> bool:
    """Ask again when waiting may help, or when fresh metadata may route the partition elsewhere."""
    return isinstance(error, Errors.KafkaError) and bool(error.retriable or error.invalid_metadata)


async def _route(client: Any, pending: list[TopicPartition], missing_final: bool, retry: Retry
                 ) -> tuple[dict[TopicPartition, Outcome], dict[int, list[TopicPartition]]]:
    """Pending partitions by leader, and apart the errors of those without one (retriable: they wait for
    the next round; final: a topic the cluster does not know, when ``missing_final``)."""
    cluster = client.cluster
    out: dict[TopicPartition, Outcome] = {}
    if cluster.need_update or any(_leaderless(cluster.leader_for(tp)) for tp in pending):
        try:
            await run_with_timeout(client.refresh_metadata({tp.topic for tp in pending}),
                                   max(0.001, retry.remaining()))
        except (Errors.KafkaError, asyncio.TimeoutError) as exc:
            failure = (exc if isinstance(exc, Errors.KafkaError)
                       else Errors.KafkaTimeoutError("metadata refresh took too long"))
            return {tp: failure for tp in pending}, {}
        cluster = client.cluster
    by_leader: dict[int, list[TopicPartition]] = {}
    for tp in pending:
        leader = cluster.leader_for(tp)
        if leader is not None and leader >= 0:
            by_leader.setdefault(leader, []).append(tp)
            continue
        code = cluster.topic_error(tp.topic)
        if leader is None and missing_final:
            parts = cluster.partitions_for(tp.topic)
            if code and code != Errors.UnknownTopicOrPartitionError.errno:
                error: Errors.KafkaError = Errors.for_code(code)(f"topic {tp.topic!r}")
            else:
                error = Errors.UnknownTopicOrPartitionError(
                    f"{_describe(tp)} does not exist (partitions 0..{max(parts)} do)" if parts
                    else f"topic {tp.topic!r} does not exist")
            # Final: the cluster just said so; waiting will not create it, nor will fresh metadata.
            error.retriable = error.invalid_metadata = False
            out[tp] = error
        else:
            out[tp] = (Errors.for_code(code)(f"topic {tp.topic!r}") if code
                       else Errors.LeaderNotAvailableError(f"no leader known for {_describe(tp)}"))
    return out, by_leader


async def _ask(client: Any, node: int, specs: Mapping[TopicPartition, int], read_committed: bool,
               deadline: float) -> dict[TopicPartition, Outcome]:
    await client.ready(node)
    version = client.api_version(node, ListOffsetsRequest)
    if read_committed and version < 2:
        raise Errors.UnsupportedVersionError(
            f"node {node} answers ListOffsets up to v{version}; read_committed offsets need v2+")
    topics: dict[str, list[ListOffsetsPartition]] = {}
    for tp, spec in specs.items():
        topics.setdefault(tp.topic, []).append(ListOffsetsPartition(
            partition_index=tp.partition, current_leader_epoch=client.cluster.leader_epoch(tp),
            timestamp=spec, max_num_offsets=1))
    request = ListOffsetsRequest(
        replica_id=-1, isolation_level=1 if read_committed else 0,
        topics=[ListOffsetsTopic(name=t, partitions=ps) for t, ps in topics.items()],
        timeout_ms=max(1, int((deadline - time.monotonic()) * 1000)))
    response = await client.send(node, request, version=version)
    out: dict[TopicPartition, Outcome] = {}
    for topic in response.topics:
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            if tp not in specs:
                continue
            if p.error_code == Errors.UnsupportedForMessageFormatError.errno:
                out[tp] = ListedOffset(-1)  # this topic's message format has no timestamps
            elif p.error_code:
                out[tp] = Errors.for_code(p.error_code)(f"ListOffsets for {_describe(tp)} on node {node}")
            else:
                offset = p.offset
                if version == 0:
                    offset = p.old_style_offsets[0] if p.old_style_offsets else -1
                out[tp] = ListedOffset(offset, p.timestamp, p.leader_epoch)
    for tp in specs:
        out.setdefault(tp, Errors.ProtocolError(f"node {node}'s ListOffsets answer left out {_describe(tp)}"))
    return out

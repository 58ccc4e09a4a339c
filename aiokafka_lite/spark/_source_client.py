"""The broker requests the readers make: Metadata, ListOffsets, and single-partition Fetch.

The readers need no consumer group, no subscription state and no fetch buffer: they ask for exact
offsets and exact ranges. So they talk to the network client (``aiokafka_lite.net.KafkaClient``)
directly, one request per question, and decode the fetched bytes themselves (``fetch.py``). One client
per configuration is kept on the process's worker loop (``_client_cache``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .. import errors as Errors
from ..config import COMMON, Config
from ..net.fetch_request import REFRESH_METADATA, FetchAt, build_fetch, fetch_version
from ..net.list_offsets import latest_offsets, list_offsets
from ..net.retry import ExponentialBackoff, Retry, call_with_retries
from ..protocol.messages.fetch import FetchRequest
from ..structs import TopicPartition
from ._client_cache import config_key, worker_loop
from .options import Subscription
from .porting import bootstrap_text, live_settings

__all__ = ["FetchedPartition", "SourceClient"]

T = TypeVar("T")
log = logging.getLogger("aiokafka_lite.spark")

_ZERO_UUID = uuid.UUID(int=0)
_COMMON_NAMES = frozenset(s.name for s in COMMON)

#: Ceiling of the exponential backoff between retries that wait out an unreachable broker.
_MAX_BACKOFF_S = 1.0


def _backoff(first_s: float) -> ExponentialBackoff:
    """Doubling from ``retry_backoff_ms`` up to 1 s, with jitter (net/retry.py)."""
    return ExponentialBackoff(max(first_s, 0.01) * 1000, _MAX_BACKOFF_S * 1000)


async def retry_until(what: str, timeout_ms: int, backoff_s: float, attempt: Callable[[], Awaitable[T]],
                      bound: str = "kafkaConsumer.pollTimeoutMs") -> T:
    """``attempt()`` again after retriable Kafka errors, with exponential backoff, for up to
    ``timeout_ms`` (named ``bound`` in the error); non-retriable errors pass at once."""
    retry = Retry(what, timeout_ms / 1000.0, _backoff(backoff_s), wait_out=True,
                  clock=asyncio.get_running_loop().time)
    try:
        return await call_with_retries(attempt, retry)
    except Errors.KafkaTimeoutError as exc:  # the deadline (an attempt's own timeout is retried)
        raise Errors.KafkaTimeoutError(
            f"{what} failed for {timeout_ms} ms ({bound}) after {retry.failures} retries; last "
            f"error: {exc.__cause__!r}") from exc.__cause__


@dataclass
class FetchedPartition:
    """One partition's part of a Fetch response."""

    error_code: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    aborted_transactions: list[tuple[int, int]] | None
    records: bytes | None


class SourceClient:
    """Metadata, offsets and fetches for the readers, over one network client."""

    def __init__(self, client: Any, settings: Mapping[str, Any]) -> None:
        self.client = client
        self.request_timeout_ms = int(settings.get("request_timeout_ms", 30000))
        self.retry_backoff_s = int(settings.get("retry_backoff_ms", 100)) / 1000.0
        self.bootstrap = bootstrap_text(settings.get("bootstrap_servers"))

    @classmethod
    async def get(cls, settings: Mapping[str, Any], timeout_ms: int = 0) -> SourceClient:
        """The process's client for these settings (created and bootstrapped on first use). A new
        client waits out unreachable bootstrap servers (a broker restarting) for up to ``timeout_ms``."""
        if timeout_ms > 0:
            return await retry_until(
                f"connecting to {bootstrap_text(settings.get('bootstrap_servers'))}", timeout_ms,
                int(settings.get("retry_backoff_ms", 100)) / 1000.0, lambda: cls.get(settings))
        key = config_key("source", {k: v for k, v in settings.items()
                                    if k in _COMMON_NAMES or k.startswith("_ssl_")})

        async def make() -> SourceClient:
            from ..net import KafkaClient

            common = {k: v for k, v in live_settings(settings).items() if k in _COMMON_NAMES}
            client = KafkaClient(Config(COMMON, common))
            try:
                await client.start()
            except BaseException:
                await client.close()
                raise
            return cls(client, settings)

        async def close(sc: SourceClient) -> None:
            await sc.client.close()

        return await worker_loop().client(key, make, close)

    async def retrying(self, what: str, timeout_ms: int, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt()`` again after retriable failures (a broker restarting, a moved leader or
        coordinator), with exponential backoff, for up to ``timeout_ms``; then fail naming what was
        asked, the bootstrap servers and the last error."""
        return await retry_until(f"{what} (bootstrap {self.bootstrap})", timeout_ms, self.retry_backoff_s,
                                 attempt)

    # -- metadata ----------------------------------------------------------------------------------

    async def _refresh(self, topics: Iterable[str] | None) -> None:
        """Fresh metadata for ``topics`` (None: every topic, for pattern subscriptions)."""
        if topics is None:
            self.client.track_all_topics(True)
        wanted = None if topics is None else sorted(set(topics))
        try:
            await asyncio.wait_for(self.client.refresh_metadata(wanted), self.request_timeout_ms / 1000.0)
        except asyncio.TimeoutError:
            raise Errors.KafkaTimeoutError(
                f"metadata refresh took over {self.request_timeout_ms} ms") from None

    async def _version(self, node: int, request_cls: Any) -> int:
        await self.client.ready(node, request_cls)
        return int(self.client.api_version(node, request_cls))

    async def partitions(self, sub: Subscription) -> set[TopicPartition]:
        """The existing partitions of the subscribed topics (or of the topics matching the pattern)."""
        if sub.kind == "subscribe":
            await self._refresh(sub.topics)
            names: Iterable[str] = sub.topics
        else:
            await self._refresh(None)
            names = [t for t in self.client.cluster.topics(exclude_internal=True) if sub.matches(t)]
        out: set[TopicPartition] = set()
        for topic in names:
            parts = self.client.cluster.partitions_for(topic)
            if parts:
                out.update(TopicPartition(topic, p) for p in parts)
        return out

    async def topic_ids(self, topics: Iterable[str]) -> dict[str, uuid.UUID]:
        """Fresh topic ids (Metadata v10+) of the topics that have one; brokers that report all-zero
        ids (noida-db 0.2) give none."""
        wanted = sorted(set(topics))
        if not wanted:
            return {}
        await self._refresh(wanted)
        out: dict[str, uuid.UUID] = {}
        for topic in wanted:
            tid = self.client.cluster.topic_id(topic)
            if tid is not None and tid != _ZERO_UUID:
                out[topic] = tid
        return out

    async def _leaders(self, tps: Iterable[TopicPartition]) -> dict[int, list[TopicPartition]]:
        """Group partitions by leader, refreshing metadata for any whose leader is unknown."""
        wanted = list(tps)
        cluster = self.client.cluster
        if any(cluster.leader_for(tp) in (None, -1) for tp in wanted):
            await self._refresh({tp.topic for tp in wanted})
        by_node: dict[int, list[TopicPartition]] = {}
        for tp in wanted:
            leader = cluster.leader_for(tp)
            if leader is None or leader < 0:
                raise Errors.LeaderNotAvailableError(f"no leader known for {tp.topic}-{tp.partition}")
            by_node.setdefault(leader, []).append(tp)
        return by_node

    # -- ListOffsets -------------------------------------------------------------------------------

    async def list_offsets(self, tps: Iterable[TopicPartition], spec: int,
                           read_committed: bool) -> dict[TopicPartition, int | None]:
        """Offsets for -2 (earliest), -1 (latest; the last stable offset when read_committed) or a
        timestamp in ms (first offset with a timestamp >= it; None when there is none). One request
        timeout's worth of retries here (net/list_offsets.py); the callers' ``retrying`` goes on."""
        wanted = dict.fromkeys(sorted(set(tps)), spec)
        return self._offsets(await list_offsets(self.client, wanted, read_committed=read_committed,
                                                **self._list_options()))

    def _list_options(self) -> dict[str, Any]:
        return {"timeout": self.request_timeout_ms / 1000.0,
                "retry_backoff_ms": self.retry_backoff_s * 1000.0}

    @staticmethod
    def _offsets(outcomes: Mapping[TopicPartition, Any]) -> dict[TopicPartition, int | None]:
        """The offsets of a lookup's answers (None: there is none); its first error raised."""
        out: dict[TopicPartition, int | None] = {}
        for tp, answer in outcomes.items():
            if isinstance(answer, Errors.KafkaError):
                raise answer
            out[tp] = None if answer.offset < 0 else answer.offset
        return out

    async def offsets_for_time(self, tps: Iterable[TopicPartition], timestamp_ms: int, read_committed: bool,
                               timeout_ms: int = 120_000) -> dict[TopicPartition, int | None]:
        """The first offset whose record timestamp is >= ``timestamp_ms`` (None: no such record, i.e.
        the time is after every record; Kafka answers offset -1 then).

        Each answer is checked against the record it points at: Tansu 0.6 answers offset 0 whatever
        the time (shared/brokers.md), which would make a starting timestamp after every record read
        the whole partition. When the record at the answer is older than ``timestamp_ms``, the
        partition is scanned forward from there for the first record that is not (one fetch when the
        broker is right, as Kafka and noida-db are).
        """
        found = await self.list_offsets(tps, timestamp_ms, read_committed)
        for tp, off in sorted(found.items()):
            if off is not None:
                found[tp] = await self._check_time_answer(tp, timestamp_ms, off, timeout_ms)
        return found

    async def _check_time_answer(self, tp: TopicPartition, timestamp_ms: int, answer: int,
                                 timeout_ms: int) -> int | None:
        from ..records import read_batches

        position = answer
        while True:
            got = await self.fetch(tp, position, max_bytes=1 << 20, max_wait_ms=10, read_committed=False,
                                   timeout_ms=timeout_ms)
            if got.error_code:
                return answer  # can't check (e.g. retention moved the log start): trust the broker
            batches = read_batches(got.records, check_crcs=False) if got.records else []
            if not batches:
                # Nothing at or after ``position``: past the end. The broker's own answer stands only
                # if it pointed there itself (a record may have just been deleted).
                return None if position > answer or position >= got.high_watermark >= 0 else answer
            for batch in batches:
                if batch.is_control or batch.next_offset <= position or batch.max_timestamp < timestamp_ms:
                    continue
                for rec in batch.records:
                    if rec.offset >= position and rec.timestamp >= timestamp_ms:
                        if rec.offset != answer:
                            log.info("ListOffsets(timestamp=%d) for %s-%d answered %d; the first record "
                                     "at or after that time is at offset %d", timestamp_ms, tp.topic,
                                     tp.partition, answer, rec.offset)
                        return rec.offset
            advanced = batches[-1].next_offset
            if advanced <= position:
                return answer  # a batch larger than the fetch: can't check, trust the broker
            position = advanced
            if got.high_watermark >= 0 and position >= got.high_watermark:
                log.info("ListOffsets(timestamp=%d) for %s-%d answered %d, but no record is that recent",
                         timestamp_ms, tp.topic, tp.partition, answer)
                return None

    async def latest_offsets(self, tps: Iterable[TopicPartition],
                             read_committed: bool) -> dict[TopicPartition, int | None]:
        """End offsets (the last stable offset when read_committed) that a read must not stop short of:
        net/list_offsets.py's ``latest_offsets`` (it corrects Tansu's short ListOffsets answer)."""
        return self._offsets(await latest_offsets(self.client, tps, read_committed=read_committed,
                                                  **self._list_options()))

    def _topic_id(self, topic: str) -> uuid.UUID:
        return self.client.cluster.topic_id(topic) or _ZERO_UUID

    # -- Fetch -------------------------------------------------------------------------------------

    async def fetch(self, tp: TopicPartition, offset: int, *, max_bytes: int, max_wait_ms: int,
                    read_committed: bool, timeout_ms: int = 120_000) -> FetchedPartition:
        """One Fetch of one partition at ``offset`` (no fetch session: each request stands alone).

        Broken connections (a broker restarting), leader moves and unknown topics are retried here,
        after a metadata refresh, with exponential backoff, until ``timeout_ms`` (Spark's
        ``kafkaConsumer.pollTimeoutMs``) has passed; then the error names the broker and the partition.
        Any other partition error is returned for the caller to judge (OFFSET_OUT_OF_RANGE means data
        loss).
        """
        what = f"fetching {tp.topic}-{tp.partition} at offset {offset}"
        retry = Retry(what, timeout_ms / 1000.0, _backoff(self.retry_backoff_s), wait_out=True,
                      clock=asyncio.get_running_loop().time)
        node: int | None = None

        async def attempt() -> FetchedPartition:
            nonlocal node
            if retry.failures:
                await self._refresh([tp.topic])
            node = (await self._leaders([tp])).popitem()[0]
            got = await self._fetch_on(node, tp, offset, max_bytes, max_wait_ms, read_committed)
            if got.error_code in REFRESH_METADATA:
                raise Errors.for_code(got.error_code)(what)
            return got

        try:
            return await call_with_retries(attempt, retry)
        except Errors.KafkaTimeoutError as exc:  # the deadline (an attempt's own timeout is retried)
            raise Errors.KafkaTimeoutError(
                f"{what} from {self._describe(node)} failed for {timeout_ms} ms "
                f"(kafkaConsumer.pollTimeoutMs) after {retry.failures} retries; "
                f"last error: {exc.__cause__!r}") from exc.__cause__

    def _describe(self, node: int | None) -> str:
        """``broker 111 (127.0.0.1:9092)``, or the bootstrap servers while no leader is known."""
        if node is None:
            return f"the cluster (bootstrap {self.bootstrap}; no leader known)"
        info = self.client.cluster.broker(node)
        where = f" ({info.host}:{info.port})" if info is not None else ""
        return f"broker {node}{where}"

    async def _fetch_on(self, node: int, tp: TopicPartition, offset: int, max_bytes: int, max_wait_ms: int,
                        read_committed: bool) -> FetchedPartition:
        version = fetch_version(await self._version(node, FetchRequest), (self._topic_id(tp.topic),))
        if read_committed and version < 4:
            raise Errors.UnsupportedVersionError("read_committed fetches need Fetch v4+")
        req = build_fetch(version, {tp: FetchAt(offset, max_bytes)}, self._topic_id, max_wait_ms=max_wait_ms,
                          min_bytes=1, max_bytes=max(max_bytes, 1), isolation=1 if read_committed else 0)
        resp = await self.client.send(node, req, version=version,
                                      timeout_ms=self.request_timeout_ms + max_wait_ms)
        if resp.error_code:
            raise Errors.for_code(resp.error_code)(f"Fetch from node {node}")
        for topic in resp.responses:
            for p in topic.partitions:
                if p.partition_index != tp.partition:
                    continue
                aborted = None
                if p.aborted_transactions is not None:
                    aborted = [(a.producer_id, a.first_offset) for a in p.aborted_transactions]
                return FetchedPartition(p.error_code, p.high_watermark, p.last_stable_offset,
                                        p.log_start_offset, aborted, p.records)
        raise Errors.UnknownTopicOrPartitionError(f"the Fetch response holds no {tp.topic}-{tp.partition}")

"""The public ShareConsumer: a member of a share group (KIP-932, "queues for Kafka").

In a share group the broker hands each record to one member at a time, for a while (the acquisition
lock), and the member acknowledges it: accepted, released (delivered again, perhaps to another member,
with ``delivery_count`` raised) or rejected (never again). Members may share partitions, so there are no
positions, no offsets to commit and no rebalances to live through. ``poll()`` returns records like the
Consumer's; with ``acknowledgement_mode="implicit"`` (the default) everything a poll handed out is accepted
at the next ``poll()`` or ``commit()``, with ``"explicit"`` the application calls :meth:`acknowledge`.
See docs/consumer.md, "Share groups".
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, Literal

from .. import errors as Errors
from .._lifecycle import AsyncClient
from ..config import SHARE_CONSUMER, Config
from ..records import decode_arrow, decode_records
from ..structs import KT, VT, ConsumerRecord, TopicPartition, check_topic_name
from . import cluster_view as cv
from ._consumer_args import _make_client
from .share_acks import ACK_TYPES, AckBook
from .share_fetcher import AckCallback, ShareFetch, ShareFetcher
from .share_group import ShareGroupDriver
from .share_member import ShareGroupMember

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .._settings import ShareConsumerBaseSettings
    from ..net import KafkaClient

log = logging.getLogger(__name__)

AckType = Literal["accept", "release", "reject"]


class ShareConsumer(AsyncClient, Generic[KT, VT]):
    """An asyncio member of a Kafka share group.

    ``ShareConsumer("topic", group_id="q", bootstrap_servers="127.0.0.1:9092")`` subscribes to the topics
    given positionally. Needs brokers with share groups (ShareGroupHeartbeat, ShareFetch and
    ShareAcknowledge v1: Kafka 4.1+); ``start()`` raises UnsupportedVersionError naming the broker otherwise.
    """

    def __init__(self, *topics: str, client: KafkaClient | None = None,
                 key_deserializer: Callable[[bytes], KT] | None = None,
                 value_deserializer: Callable[[bytes], VT] | None = None,
                 acknowledgement_commit_callback: AckCallback | None = None,
                 **settings: Unpack[ShareConsumerBaseSettings]) -> None:
        given: dict[str, Any] = dict(settings)
        if key_deserializer is not None:
            given["key_deserializer"] = key_deserializer
        if value_deserializer is not None:
            given["value_deserializer"] = value_deserializer
        self._config = cfg = Config(SHARE_CONSUMER, given)
        if not cfg.group_id:
            raise Errors.ConfigError("ShareConsumer needs a group_id (the share group to join)")
        for name in ("key_deserializer", "value_deserializer"):
            fn = getattr(cfg, name)
            if fn is not None and not callable(fn):
                raise Errors.ConfigError(f"setting {name!r} must be callable, got {type(fn).__name__}")
        for t in topics:
            check_topic_name(t)
        self._explicit = cfg.acknowledgement_mode == "explicit"
        self._client = client if client is not None else _make_client(cfg)
        self._owns_client = client is None
        self._book = AckBook()
        self._member = ShareGroupMember(cfg.group_id, rack_id=cfg.client_rack)
        self._user_callback = acknowledgement_commit_callback
        self._ack_errors: dict[TopicPartition, Errors.KafkaError] = {}
        self._fetcher = ShareFetcher(self._client, cfg, cfg.group_id, self._member.member_id, self._book,
                                     self._acknowledged)
        self._group = ShareGroupDriver(self._client, self._member, cfg, self._assigned)
        self._initial_topics = tuple(topics)
        self._started = False
        self._closed = False
        self._stopping: asyncio.Future[None] | None = None

    @property
    def config(self) -> Config:
        return self._config

    @property
    def member_id(self) -> str:
        return self._member.member_id

    # -- lifecycle ---------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect, check that the brokers have share groups, and join (with the topics given)."""
        if self._closed:  # before _started: a closed member stays started-and-closed
            raise Errors.ConsumerStoppedError("a closed ShareConsumer cannot be started again")
        if self._started:
            return
        if self._owns_client:
            await self._client.start()
        try:
            await self._check_brokers()
        except BaseException:
            self._closed = True
            if self._owns_client:
                await self._client.close()
            raise
        self._started = True
        self._fetcher.start()
        self._group.start()
        if self._initial_topics:
            self.subscribe(self._initial_topics)

    async def _check_brokers(self) -> None:
        """A broker without the share APIs fails start() with a clear error, never a silent hang."""
        from ..protocol.messages.share_fetch import ShareFetchRequest

        timeout = self._config.request_timeout_ms / 1000.0
        node = await self._client.any_ready_node()
        try:
            await cv.api_version(self._client, node, ShareFetchRequest)
        except Errors.UnsupportedVersionError as exc:
            raise Errors.UnsupportedVersionError(
                f"ShareConsumer needs ShareFetch v1 (KIP-932 share groups, Kafka 4.1 or later), but "
                f"{cv.node_name(self._client, node)} does not offer it ({exc})") from None
        coordinator = await self._group.find_coordinator(time.monotonic() + timeout)
        await self._group.heartbeat_version(coordinator)

    async def close(self) -> None:
        """Acknowledge what is due (implicit mode: what the last poll handed out), close the share sessions
        (the broker releases what this member still holds), leave the group, close connections."""
        if self._stopping is None:
            if self._closed:  # start() failed and closed what it had opened
                return
            self._closed = True
            self._fetcher.data_ready.set()  # a waiting poll() wakes and raises ConsumerStoppedError
            self._stopping = asyncio.ensure_future(self._close())
        await asyncio.shield(self._stopping)  # every close() returns once closed; a cancel does not stop it

    async def _close(self) -> None:
        try:
            if self._started:
                if not self._explicit:
                    self._book.accept_delivered()
                await self._fetcher.close()
                await self._group.close()
        finally:
            if self._owns_client:
                await self._client.close()

    stop = close

    def __aiter__(self) -> ShareConsumer[KT, VT]:
        return self

    async def __anext__(self) -> ConsumerRecord[KT, VT]:
        """One record at a time (implicit mode accepts each when the next is asked for)."""
        while True:
            if self._closed:
                raise StopAsyncIteration
            try:
                got = await self.poll(timeout_ms=1000, max_records=1)
            except Errors.ConsumerStoppedError:
                raise StopAsyncIteration from None
            for records in got.values():
                return records[0]

    # -- subscription --------------------------------------------------------------------------------------
    def subscribe(self, topics: Iterable[str]) -> None:
        names = tuple(topics)
        for t in names:
            check_topic_name(t)
        self._member.subscribe(names)
        cv.track_topics(self._client, names)
        self._group.wake()

    def unsubscribe(self) -> None:
        self._member.subscribe(())
        self._group.wake()

    def subscription(self) -> set[str]:
        return set(self._member.subscription)

    def assignment(self) -> set[TopicPartition]:
        """The partitions the group assigned this member (other members may share them)."""
        return set(self._fetcher.assigned)

    def _assigned(self, tps: set[TopicPartition]) -> None:
        self._fetcher.assigned = tps
        self._fetcher.wake()

    # -- records -------------------------------------------------------------------------------------------
    def _check(self) -> None:
        if not self._started:
            raise Errors.IllegalStateError("await start() (or use `async with`) before poll()")
        if self._closed:
            raise Errors.ConsumerStoppedError("the ShareConsumer is closed")
        for failure in (self._group.failure, self._member.fatal_error):
            if failure is not None:
                raise failure
        self._fetcher.raise_if_failed()

    def _settle_last_poll(self) -> None:
        if self._explicit:
            n = self._book.unacknowledged()
            if n:
                raise Errors.IllegalStateError(
                    f"acknowledgement_mode='explicit': {n} record(s) of the last poll() are not "
                    f"acknowledged; call acknowledge(record, 'accept' | 'release' | 'reject') for each "
                    f"before polling again")
        else:
            self._book.accept_delivered()
        if self._book.has_pending():
            self._fetcher.wake()

    async def poll(self, timeout_ms: int = 0, max_records: int | None = None
                   ) -> dict[TopicPartition, list[ConsumerRecord[KT, VT]]]:
        """Records by partition, at most ``max_records`` (default ``max_poll_records``), waiting up to
        ``timeout_ms`` for some. Each record carries ``delivery_count``."""
        raw = await self._poll(timeout_ms, max_records, arrow=False)
        return self._deserialize(raw)

    async def poll_arrow(self, timeout_ms: int = 0, max_records: int | None = None
                         ) -> dict[TopicPartition, Any]:
        """Like :meth:`poll`, as one ``pyarrow.RecordBatch`` per partition with a ``delivery_count`` column
        (raw bytes; deserializers are not applied). Acknowledge rows with :meth:`acknowledge_offsets`."""
        return await self._poll(timeout_ms, max_records, arrow=True)

    async def _poll(self, timeout_ms: int, max_records: int | None, arrow: bool) -> dict[TopicPartition, Any]:
        self._check()
        self._settle_last_poll()
        limit = self._config.max_poll_records if max_records is None else max_records
        if limit < 1:
            raise Errors.IllegalArgumentError(f"max_records must be >= 1, got {limit}")
        deadline = time.monotonic() + max(timeout_ms, 0) / 1000.0
        while True:
            if self._fetcher.start_head():
                # Before taking (a cancellation here loses nothing): the fetcher sends the next ShareFetch
                # now rather than once the application awaits again, as librdkafka's broker thread does;
                # a member that asks later gets what the others left.
                await asyncio.sleep(0)
                self._check()
            out = self._take(limit, arrow)
            if out:
                self._fetcher.wake()
                return out
            left = deadline - time.monotonic()
            if left <= 0:
                return {}
            self._fetcher.data_ready.clear()
            try:
                await asyncio.wait_for(self._fetcher.data_ready.wait(), left)
            except asyncio.TimeoutError:
                return {}
            self._check()

    def _take(self, limit: int, arrow: bool) -> dict[TopicPartition, Any]:
        out: dict[TopicPartition, Any] = {}
        buf = self._fetcher.buffer
        while buf and limit > 0:
            f = buf[0]
            if arrow:
                if f.arrow is None:
                    if f.records is not None:  # switched from poll(): only what it left
                        f.fresh = {r.offset: f.fresh[r.offset] for r in f.records[f.index:]}
                        f.records = None
                    f.arrow, f.index, f.started = self._decode_arrow(f), 0, True
                    self._fetcher.wake()
                taken = f.arrow.slice(f.index, limit)
                f.index += taken.num_rows
                if f.index >= f.arrow.num_rows:
                    buf.popleft()
                if taken.num_rows:
                    prev = out.get(f.tp)
                    out[f.tp] = taken if prev is None else _concat(prev, taken)
                    self._book.delivered(f.tp, taken.column("offset").to_pylist())
                    limit -= taken.num_rows
                continue
            if f.arrow is not None:  # switched from poll_arrow(): only what it left
                left = set(f.arrow.slice(f.index).column("offset").to_pylist())
                f.fresh = {o: c for o, c in f.fresh.items() if o in left}
                f.arrow = None
            if f.records is None:
                f.records = self._decode(f)
                f.index, f.started = 0, True
                self._fetcher.wake()  # started on this answer: the next may be fetched
            chunk = f.records[f.index:f.index + limit]
            f.index += len(chunk)
            if f.index >= len(f.records):
                buf.popleft()
            if chunk:
                out.setdefault(f.tp, []).extend(chunk)
                self._book.delivered(f.tp, (r.offset for r in chunk))
                limit -= len(chunk)
        return out

    def _decode(self, f: ShareFetch) -> list[ConsumerRecord[Any, Any]]:
        """The fresh acquisitions of a fetch, with their delivery counts; acquired offsets with no record
        (control records, compaction) are acknowledged as gaps."""
        tp, fresh = f.tp, f.fresh
        out: list[ConsumerRecord[Any, Any]] = []
        seen: set[int] = set()
        make = ConsumerRecord._make
        for data in f.chunks:
            res = decode_records(data, tp.topic, tp.partition, check_crcs=self._config.check_crcs,
                                 start_offset=min(fresh))
            for r in res.records:
                count = fresh.get(r.offset)
                if count is not None and r.offset not in seen:
                    seen.add(r.offset)
                    out.append(make((*r[:11], count)))
        self._book.gaps(tp, (o for o in fresh if o not in seen))
        return out

    def _decode_arrow(self, f: ShareFetch) -> Any:
        import pyarrow as pa

        tp, fresh = f.tp, f.fresh
        parts = []
        seen: set[int] = set()
        for data in f.chunks:
            batch = decode_arrow(data, tp.topic, tp.partition, check_crcs=self._config.check_crcs,
                                 start_offset=min(fresh)).batch
            keep = []
            for off in batch.column("offset").to_pylist():
                ok = off in fresh and off not in seen
                keep.append(ok)
                if ok:
                    seen.add(off)
            parts.append(batch.filter(pa.array(keep, pa.bool_())))
        self._book.gaps(tp, (o for o in fresh if o not in seen))
        batch = parts[0] if len(parts) == 1 else _concat(*parts)
        counts = pa.array([fresh[o] for o in batch.column("offset").to_pylist()], pa.int16())
        return batch.append_column("delivery_count", counts)

    def _deserialize(self, raw: dict[TopicPartition, list[ConsumerRecord[Any, Any]]]
                     ) -> dict[TopicPartition, list[ConsumerRecord[KT, VT]]]:
        kd, vd = self._config.key_deserializer, self._config.value_deserializer
        if kd is None and vd is None:
            return raw
        out: dict[TopicPartition, list[ConsumerRecord[KT, VT]]] = {}
        for tp, records in raw.items():
            converted = []
            for r in records:
                try:
                    key = kd(r.key) if kd is not None and r.key is not None else r.key
                    converted.append(r._replace(key=key, value=vd(r.value) if vd is not None else r.value))
                except Exception as exc:
                    # Nothing of this poll is delivered: all of it goes back to the group for redelivery.
                    for tp2, recs in raw.items():
                        for r2 in recs:
                            self._book.acknowledge(tp2, r2.offset, ACK_TYPES["release"])
                    self._fetcher.wake()
                    raise Errors.SerializationError(
                        f"deserializing the record at {tp.topic}[{tp.partition}] offset {r.offset} failed: "
                        f"{exc!r}; this poll's records were released for redelivery") from exc
            out[tp] = converted
        return out

    # -- acknowledgements --------------------------------------------------------------------------------
    def acknowledge(self, record: ConsumerRecord[Any, Any], type: AckType = "accept") -> None:
        """Acknowledge one record of the last poll (explicit mode): ``"accept"`` (processed),
        ``"release"`` (deliver it again) or ``"reject"`` (never deliver it again). Sent with the next
        fetch, or at once by :meth:`commit`."""
        self.acknowledge_offsets(TopicPartition(record.topic, record.partition), [record.offset], type)

    def acknowledge_offsets(self, tp: TopicPartition, offsets: Iterable[int], type: AckType = "accept"
                            ) -> None:
        """Acknowledge records by offset (for :meth:`poll_arrow`'s rows); see :meth:`acknowledge`."""
        if not self._explicit:
            raise Errors.IllegalStateError("acknowledge() needs acknowledgement_mode='explicit'; in implicit "
                                           "mode every record handed out is accepted at the next poll()")
        code = ACK_TYPES.get(type)
        if code is None:
            raise Errors.IllegalArgumentError(
                f"acknowledgement type must be 'accept', 'release' or 'reject', got {type!r}")
        for off in offsets:
            self._book.acknowledge(tp, off, code)

    async def commit(self) -> dict[TopicPartition, Errors.KafkaError]:
        """Send every due acknowledgement now (ShareAcknowledge) and wait for the answers; implicit mode
        first accepts what the last poll handed out. Returns the partitions whose acknowledgements failed
        since the last commit, with the error (empty when all went through)."""
        self._check()
        if not self._explicit:
            self._book.accept_delivered()
        await self._fetcher.acknowledge()
        errors, self._ack_errors = self._ack_errors, {}
        return errors

    def _acknowledged(self, tp: TopicPartition, acks: dict[int, int],
                      error: Errors.KafkaError | None) -> None:
        if error is not None:
            log.warning("share group %r: acknowledging %d record(s) of %s[%d] failed: %s",
                        self._config.group_id, len(acks), tp.topic, tp.partition, error)
            self._ack_errors[tp] = error
        if self._user_callback is not None:
            try:
                self._user_callback(tp, acks, error)
            except Exception:
                log.exception("acknowledgement_commit_callback raised")


def _concat(*batches: Any) -> Any:
    import pyarrow as pa

    table = pa.Table.from_batches(list(batches))
    return table.combine_chunks().to_batches()[0]

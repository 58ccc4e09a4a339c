"""A sans-I/O fake of the client the producer's Sender talks to, a virtual clock, and a rig that builds
the real producer internals (RecordAccumulator, IdempotenceState, TransactionManager, Sender) around them.

The fake answers nothing by itself: every request the Sender (or the TransactionManager) sends becomes a
:class:`Call` whose future the test resolves -- a response, a per-partition error code, a connection error
(the outcome stays unknown to the producer), or nothing yet. Requests and responses go through the real
protocol codecs on the way (encoded and decoded at the version the client would use), and the record
batches inside a ProduceRequest are read back with the real record reader, so a test sees the producer id,
epoch and base sequence exactly as a broker would.

Time: :class:`VirtualLoop` wraps the running loop; ``time()``, ``call_later()`` and ``call_at()`` run on a
clock that only moves when :meth:`Rig.until` finds nothing left to do in the current instant and jumps to
the next timer (as trio's autojump clock does). So a test never sleeps on the wall clock, and how much
virtual time a scenario took says whether something waited for a timeout.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from aiokafka_lite.errors import KafkaConnectionError, KafkaError
from aiokafka_lite.producer.accumulator import RecordAccumulator
from aiokafka_lite.producer.batch import ProducerBatch
from aiokafka_lite.producer.idempotence import IdempotenceState
from aiokafka_lite.producer.memory import MemoryPool
from aiokafka_lite.producer.metrics import ProducerMetrics
from aiokafka_lite.producer.sender import Sender
from aiokafka_lite.producer.transaction import TransactionManager
from aiokafka_lite.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopicResult,
)
from aiokafka_lite.protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from aiokafka_lite.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)
from aiokafka_lite.records import Batch, read_batches
from aiokafka_lite.structs import TopicPartition

T = TypeVar("T")

#: Consecutive idle loop iterations after which :meth:`Rig.until` lets virtual time move on.
IDLE_SPINS = 25


# -- virtual clock ------------------------------------------------------------------------------------


class _Timer:
    __slots__ = ("args", "callback", "cancelled", "context", "when")

    def __init__(self, when: float, callback: Callable[..., Any], args: tuple[Any, ...],
                 context: Any) -> None:
        self.when = when
        self.callback = callback
        self.args = args
        self.context = context
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class VirtualLoop:
    """The running loop, except that its clock and timers are virtual (see the module docstring)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._now = loop.time()
        self.start = self._now
        self._timers: list[tuple[float, int, _Timer]] = []
        self._seq = itertools.count()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loop, name)

    def time(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any,
                   context: Any = None) -> _Timer:
        return self.call_at(self._now + max(delay, 0.0), callback, *args, context=context)

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any, context: Any = None) -> _Timer:
        timer = _Timer(when, callback, args, context)
        heapq.heappush(self._timers, (when, next(self._seq), timer))
        return timer

    def next_deadline(self) -> float | None:
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0][0] if self._timers else None

    def advance_to(self, when: float) -> None:
        """Move the clock to ``when`` and run (through the real loop) every timer due by then."""
        self._now = max(self._now, when)
        while self._timers and self._timers[0][0] <= self._now:
            _, _, timer = heapq.heappop(self._timers)
            if not timer.cancelled:
                self._loop.call_soon(timer.callback, *timer.args, context=timer.context)

    @property
    def elapsed(self) -> float:
        return self._now - self.start


# -- the fake client ----------------------------------------------------------------------------------


class Call:
    """One request the client was asked to send; the test decides its fate."""

    def __init__(self, client: FakeClient, node: int, request: Any, version: int,
                 future: asyncio.Future[Any]) -> None:
        self.client = client
        self.node = node
        self.request = request
        self.version = version
        self.future = future

    @property
    def kind(self) -> type:
        return type(self.request)

    def __repr__(self) -> str:
        return f"<Call {self.kind.__name__} v{self.version} to node {self.node}>"

    # -- answering ---------------------------------------------------------------------------------

    def reply(self, response: Any) -> None:
        """Answer with ``response`` (encoded and decoded at the request's version first)."""
        assert not self.future.done(), f"{self} was already resolved or cancelled"
        decoded = type(response).decode(response.encode(self.version), self.version)
        self.future.set_result(decoded)

    def fail(self, error: BaseException | None = None) -> None:
        """No answer: the connection broke (the producer cannot know whether the broker acted)."""
        assert not self.future.done(), f"{self} was already resolved or cancelled"
        self.future.set_exception(error if error is not None else KafkaConnectionError(
            f"connection to node {self.node} broke with the request in flight"))

    # -- produce -----------------------------------------------------------------------------------

    @property
    def batches(self) -> dict[TopicPartition, Batch]:
        """The record batch for each partition of a ProduceRequest, as the broker would read it."""
        assert isinstance(self.request, ProduceRequest), self
        out: dict[TopicPartition, Batch] = {}
        for topic in self.request.topic_data:
            for part in topic.partition_data:
                assert part.records is not None
                batches = read_batches(bytes(part.records))
                assert len(batches) == 1, "the Sender puts one batch per partition in a request"
                out[TopicPartition(topic.name, part.index)] = batches[0]
        return out

    def values(self, tp: TopicPartition) -> list[bytes | None]:
        return [r.value for r in self.batches[tp].records]

    def state(self, tp: TopicPartition) -> tuple[int, int, int]:
        """``(producer_id, producer_epoch, base_sequence)`` of ``tp``'s batch."""
        b = self.batches[tp]
        return b.producer_id, b.producer_epoch, b.base_sequence

    def answer(self, errors: dict[TopicPartition, int] | None = None) -> None:
        """Answer a ProduceRequest: partitions in ``errors`` get that error code, the rest are appended to
        the fake log (base offset = the log's end) and succeed."""
        errors = errors or {}
        by_topic: dict[str, list[PartitionProduceResponse]] = {}
        for tp, batch in self.batches.items():
            code = errors.get(tp, 0)
            offset = -1
            if code == 0:
                offset = self.client.append(tp, batch)
            by_topic.setdefault(tp.topic, []).append(
                PartitionProduceResponse(index=tp.partition, error_code=code, base_offset=offset))
        self.reply(ProduceResponse(responses=[TopicProduceResponse(name=t, partition_responses=p)
                                              for t, p in by_topic.items()]))

    def lose_answer(self) -> None:
        """The broker wrote every batch, then the connection broke before the answer came."""
        for tp, batch in self.batches.items():
            self.client.append(tp, batch)
        self.fail()


class _Conn:
    """What the Sender reads of a connection: whether its writes are paused (the test pauses a node with
    ``FakeClient.paused`` and ends it with ``FakeClient.resume``), and when that ends."""

    def __init__(self, client: FakeClient, node: int) -> None:
        self.client = client
        self.node = node

    @property
    def write_paused(self) -> bool:
        return self.node in self.client.paused

    def drained(self) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.write_paused:
            self.client.drain_waiters.append(fut)
        else:
            fut.set_result(None)
        return fut


class FakeCluster:
    def __init__(self, leaders: dict[TopicPartition, int]) -> None:
        self.leaders = dict(leaders)

    def leader_for(self, tp: TopicPartition) -> int | None:
        return self.leaders.get(tp)


class FakeClient:
    """The part of :class:`aiokafka_lite.net.KafkaClient` the Sender and TransactionManager use."""

    def __init__(self, leaders: dict[TopicPartition, int], *, coordinator: int | None = None) -> None:
        self.cluster = FakeCluster(leaders)
        self.nodes = sorted(set(leaders.values()))
        self.coordinator = coordinator if coordinator is not None else self.nodes[0]
        #: Nodes that refuse connections (``ready`` and ``send`` raise KafkaConnectionError).
        self.down: set[int] = set()
        #: A closed client's error: ``unusable_error()`` answers it, ``ready`` raises it and metadata
        #: updates fail with it at once, as KafkaClient's do.
        self.unusable: KafkaError | None = None
        self.calls: list[Call] = []
        self.unclaimed: list[Call] = []
        #: What the fake broker has written, per partition: (producer_id, epoch, base_sequence, values).
        self.log: dict[TopicPartition, list[tuple[int, int, int, list[bytes | None]]]] = {}
        self.metadata_requests = 0
        self.topics: set[str] = set()
        self.connect_attempts = 0
        #: Nodes whose connection holds more unsent bytes than its high-water mark (write_paused).
        self.paused: set[int] = set()
        self.drain_waiters: list[asyncio.Future[None]] = []

    # -- the broker side ---------------------------------------------------------------------------

    def append(self, tp: TopicPartition, batch: Batch) -> int:
        entries = self.log.setdefault(tp, [])
        offset = sum(len(e[3]) for e in entries)
        entries.append((batch.producer_id, batch.producer_epoch, batch.base_sequence,
                        [r.value for r in batch.records]))
        return offset

    def written(self, tp: TopicPartition) -> list[bytes | None]:
        return [v for e in self.log.get(tp, []) for v in e[3]]

    def take(self, kind: type, node: int | None = None) -> Call | None:
        for i, call in enumerate(self.unclaimed):
            if call.kind is kind and (node is None or call.node == node):
                return self.unclaimed.pop(i)
        return None

    def pending(self, kind: type) -> list[Call]:
        """Calls of ``kind`` the test has not taken yet."""
        return [c for c in self.unclaimed if c.kind is kind]

    def calls_of(self, kind: type) -> list[Call]:
        """Every call of ``kind`` so far, taken or not."""
        return [c for c in self.calls if c.kind is kind]

    # -- the client interface ----------------------------------------------------------------------

    def connection(self, node: int, request_cls: Any = None) -> _Conn | None:
        return None if node in self.down or self.unusable is not None else _Conn(self, node)

    def resume(self, node: int) -> None:
        """``node``'s connection takes writes again (see ``paused``)."""
        self.paused.discard(node)
        waiters, self.drain_waiters = self.drain_waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def unusable_error(self) -> KafkaError | None:
        return self.unusable

    async def ready(self, node: int, request_cls: Any = None) -> None:
        self.connect_attempts += 1
        if self.unusable is not None:
            raise self.unusable
        if node in self.down:
            raise KafkaConnectionError(f"connect to node {node} failed: connection refused")

    async def any_ready_node(self) -> int:
        for node in self.nodes:
            if node not in self.down:
                return node
        raise KafkaConnectionError(f"no broker reachable (tried {self.nodes})")

    def api_version(self, node: int, request_cls: Any, max_version: int | None = None) -> int:
        top = int(request_cls.MAX_VERSION)
        return top if max_version is None else min(top, max_version)

    def request_metadata_update(self) -> asyncio.Future[Any]:
        self.metadata_requests += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.unusable is not None:
            fut.set_exception(self.unusable)
        else:
            fut.set_result(self.cluster)
        return fut

    def add_topics(self, topics: Iterable[str]) -> bool:
        new = set(topics) - self.topics
        self.topics |= new
        return bool(new)

    async def find_coordinator(self, key: str, key_type: int = 0, *, timeout_ms: int | None = None) -> int:
        return self.coordinator

    async def send(self, node: int, request: Any, *, version: int | None = None,
                   max_version: int | None = None, expect_response: bool = True,
                   timeout_ms: int | None = None) -> Any:
        if node in self.down:
            raise KafkaConnectionError(f"node {node} is unreachable")
        if version is None:
            version = self.api_version(node, type(request), max_version)
        # Through the real codec, as a broker would read it.
        request = type(request).decode(request.encode(version), version)
        call = Call(self, node, request, version, asyncio.get_running_loop().create_future())
        self.calls.append(call)
        self.unclaimed.append(call)
        if not expect_response:
            return None
        return await call.future


# -- the rig ------------------------------------------------------------------------------------------


class Rig:
    """Real producer internals on the fake client (built inside a running loop); ``async with`` ends the
    Sender task on the way out."""

    def __init__(self, leaders: dict[TopicPartition, int], *, virtual: bool = True,
                 retry_backoff_ms: int = 100, retry_backoff_max_ms: int = 1000,
                 delivery_timeout_ms: int = 120_000, request_timeout_ms: int = 30_000,
                 max_in_flight: int = 5, retries: int = 2**31 - 1,
                 transactional_id: str | None = None, idempotent: bool = True) -> None:
        real = asyncio.get_running_loop()
        self.clock = VirtualLoop(real) if virtual else None
        loop: Any = self.clock if self.clock is not None else real
        self.loop = loop
        self.client = FakeClient(leaders)
        transactional = transactional_id is not None
        self.idem = IdempotenceState(transactional=transactional)
        self.acc = RecordAccumulator(batch_size=1024, linger_ms=0, compression=0, pool=MemoryPool(1 << 20),
                                     loop=loop, delivery_timeout_ms=delivery_timeout_ms,
                                     transactional=transactional)
        self.txn: TransactionManager | None = None
        if transactional_id is not None:
            self.txn = TransactionManager(
                self.client, self.idem, transactional_id,  # type: ignore[arg-type]
                transaction_timeout_ms=60_000, retry_backoff_ms=retry_backoff_ms,
                request_timeout_ms=request_timeout_ms, wakeup=self.acc.bell.ring)
        self.fatal: list[BaseException] = []
        self.metrics = ProducerMetrics()
        self.sender = Sender(
            self.client, self.acc, acks=-1, max_request_size=1 << 20,  # type: ignore[arg-type]
            max_in_flight=max_in_flight, retries=retries, request_timeout_ms=request_timeout_ms,
            retry_backoff_ms=retry_backoff_ms, retry_backoff_max_ms=retry_backoff_max_ms,
            idempotence=self.idem if idempotent else None, transactions=self.txn, metrics=self.metrics,
            on_fatal=self.fatal.append)
        #: Event-loop iterations spent in :meth:`until` and :meth:`settle`, and virtual-clock jumps.
        self.steps = 0
        self.jumps = 0

    # -- records -----------------------------------------------------------------------------------

    def add(self, tp: TopicPartition, *values: bytes) -> ProducerBatch:
        """A new batch for ``tp`` holding one record per value (the partition's previous batch closes)."""
        assert self.acc.pool.try_reserve(self.acc.batch_size)
        batch = self.acc.new_batch(tp, self.acc.batch_size)
        assert batch.builder is not None
        for value in values:
            assert batch.builder.append(1_700_000_000_000, None, value, None) is not None
        return batch

    # -- driving -----------------------------------------------------------------------------------

    async def until(self, predicate: Callable[[], T | None], what: str, max_steps: int = 2000) -> T:
        """Run the loop until ``predicate()`` is truthy; when nothing moves for :data:`IDLE_SPINS`
        iterations, jump the virtual clock to the next timer. Fails after ``max_steps`` iterations."""
        idle = 0
        for _ in range(max_steps):
            result = predicate()
            if result:
                return result
            if self.sender.error is not None and not self.fatal:
                raise AssertionError(f"the sender failed: {self.sender.error!r}")
            await asyncio.sleep(0)
            self.steps += 1
            idle += 1
            if idle >= IDLE_SPINS and self.clock is not None:
                deadline = self.clock.next_deadline()
                if deadline is not None:
                    self.clock.advance_to(deadline)
                    self.jumps += 1
                idle = 0
        elapsed = f", virtual time {self.clock.elapsed:.3f} s" if self.clock is not None else ""
        raise AssertionError(f"{what}: not within {max_steps} loop iterations{elapsed}; "
                             f"unclaimed calls: {self.client.unclaimed}")

    async def settle(self, spins: int = 3 * IDLE_SPINS) -> None:
        """Let the loop run ``spins`` iterations without moving the clock."""
        for _ in range(spins):
            await asyncio.sleep(0)
            self.steps += 1

    async def next_call(self, kind: type, node: int | None = None) -> Call:
        return await self.until(lambda: self.client.take(kind, node), f"a {kind.__name__}")

    async def next_produce(self, node: int | None = None) -> Call:
        return await self.next_call(ProduceRequest, node)

    async def next_init(self) -> Call:
        return await self.next_call(InitProducerIdRequest)

    async def done(self, *batches: ProducerBatch) -> None:
        await self.until(lambda: all(b.result.done for b in batches), f"outcome of {batches}")

    async def start(self, producer_id: int = 1000, epoch: int = 0) -> None:
        """Start the Sender and answer its first InitProducerId (idempotent, not transactional)."""
        self.sender.start()
        call = await self.next_init()
        assert call.request.producer_id == -1 and call.request.transactional_id is None
        call.reply(InitProducerIdResponse(producer_id=producer_id, producer_epoch=epoch))
        await self.until(lambda: self.idem.has_pid, "the producer id")

    async def grant_bump(self, producer_id: int, old_epoch: int) -> Call:
        """Expect an epoch bump of ``producer_id``/``old_epoch`` (KIP-360) and grant ``old_epoch + 1``."""
        call = await self.next_init()
        req = call.request
        assert (req.producer_id, req.producer_epoch) == (producer_id, old_epoch), req
        call.reply(InitProducerIdResponse(producer_id=producer_id, producer_epoch=old_epoch + 1))
        return call

    async def add_partitions(self, *tps: TopicPartition) -> Call:
        """Expect AddPartitionsToTxn and accept every partition in it."""
        call = await self.next_call(AddPartitionsToTxnRequest)
        asked = {TopicPartition(t.name, p) for t in call.request.v3_and_below_topics for p in t.partitions}
        assert asked == set(tps), asked
        by_topic: dict[str, list[AddPartitionsToTxnPartitionResult]] = {}
        for tp in sorted(asked):
            by_topic.setdefault(tp.topic, []).append(AddPartitionsToTxnPartitionResult(
                partition_index=tp.partition, partition_error_code=0))
        call.reply(AddPartitionsToTxnResponse(results_by_topic_v3_and_below=[
            AddPartitionsToTxnTopicResult(name=t, results_by_partition=r) for t, r in by_topic.items()]))
        return call

    def produce_calls(self, tp: TopicPartition) -> list[Call]:
        """Every ProduceRequest so far that carried ``tp``."""
        return [c for c in self.client.calls if isinstance(c.request, ProduceRequest) and tp in c.batches]

    async def __aenter__(self) -> Rig:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def stop(self) -> None:
        """End the Sender task now (test teardown)."""
        self.sender.force_close(KafkaError("test over"))
        task = self.sender._task
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

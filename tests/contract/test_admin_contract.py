"""The contract of every public async call of ``Admin`` (docs/contract.md), on Tansu and noida-db: each
call on the broker(s) that offer its API (docs/admin.md, "Broker notes").

Every admin call waits for a broker's answer, so each is made to wait by a broker that stopped
answering (``wait="frozen"``). A call whose API no broker here offers (ElectLeaders, quotas, the share
group views, ...) fails with UnsupportedVersionError before sending, once the client knows the broker's
versions; it is made to wait on what it must learn first (``wait="reconnect"``: its connections were
closed, as an idle connection is, so it waits for the frozen broker's ApiVersions answer, or for the
coordinator's address).

``Admin`` documents no error of its own for a stopped client: a call waiting when ``stop()`` runs raises
``ClientClosedError`` (the class every stopped client's calls raise), a call after ``stop()``
``IllegalStateError``.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from _contract import (
    CANCEL_POINTS,
    LIFECYCLE,
    REQUEST_TIMEOUT_MS,
    STOPPERS,
    cancel_at,
    cancel_waiting,
    cancelled_stop_then_stop,
    frozen,
    raises_at_once,
    stop_wakes,
    stopper_after_stop_returns,
    within,
)

from aiokafka_lite import Admin, NewTopic, TopicPartition
from aiokafka_lite.admin import (
    AbortTransactionSpec,
    AclBinding,
    AclBindingFilter,
    ConfigResource,
    QuotaFilterComponent,
    UserScramCredentialUpsertion,
)
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.errors import BrokerResponseError, ClientClosedError, IllegalStateError, ProtocolError

_names = itertools.count()


@dataclass
class Ctx:
    broker: EmbeddedBroker
    topic: str

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, 0)

    def fresh(self) -> str:
        return f"{self.topic}-{next(_names)}"


async def _delete_topics(a: Admin, ctx: Ctx) -> Any:
    name = ctx.fresh()
    await a.create_topics([NewTopic(name, num_partitions=1, replication_factor=1)])
    return await a.delete_topics([name])


@dataclass(frozen=True)
class Row:
    name: str
    call: Callable[[Admin, Ctx], Awaitable[Any]]
    brokers: tuple[str, ...] = ("tansu", "noida")
    wait: str = "frozen"  # "frozen" | "reconnect" (see the module's docstring)
    #: What counts as the broker's answer (to a cancelled call or a repeated one): an error code, or, for
    #: Tansu's null SCRAM answer, the ProtocolError it is reported as (docs/admin.md).
    answers: tuple[type[BaseException], ...] = (BrokerResponseError,)

    def __str__(self) -> str:
        return self.name


ROWS = [
    Row("create_topics", lambda a, c: a.create_topics([NewTopic(c.fresh(), num_partitions=1,
                                                                replication_factor=1)])),
    Row("delete_topics", _delete_topics),
    Row("create_partitions", lambda a, c: a.create_partitions({c.topic: 8}), ("noida",)),
    Row("delete_records", lambda a, c: a.delete_records({c.tp: 0}), ("noida",)),
    Row("describe_configs", lambda a, c: a.describe_configs([("topic", c.topic)])),
    Row("incremental_alter_configs",
        lambda a, c: a.incremental_alter_configs({("topic", c.topic): {"retention.ms": "86400000"}}),
        ("noida",)),
    Row("describe_groups", lambda a, c: a.describe_groups([f"{c.topic}-g"])),
    Row("delete_groups", lambda a, c: a.delete_groups([f"{c.topic}-g"])),
    Row("list_consumer_group_offsets", lambda a, c: a.list_consumer_group_offsets(f"{c.topic}-g")),
    Row("list_groups", lambda a, c: a.list_groups()),
    Row("list_offsets", lambda a, c: a.list_offsets({c.tp: "latest"})),
    Row("list_topics", lambda a, c: a.list_topics()),
    Row("describe_topics", lambda a, c: a.describe_topics([c.topic])),
    Row("describe_cluster", lambda a, c: a.describe_cluster()),
    Row("describe_features", lambda a, c: a.describe_features()),
    Row("alter_configs",
        lambda a, c: a.alter_configs({ConfigResource("topic", c.topic): {"retention.ms": "86400000"}}),
        ("noida",)),
    Row("describe_consumer_groups", lambda a, c: a.describe_consumer_groups([f"{c.topic}-g"])),
    Row("alter_consumer_group_offsets",
        lambda a, c: a.alter_consumer_group_offsets(f"{c.topic}-g", {c.tp: 0})),
    Row("delete_consumer_group_offsets", lambda a, c: a.delete_consumer_group_offsets(f"{c.topic}-g", [c.tp]),
        ("noida",)),
    Row("remove_members_from_consumer_group",
        lambda a, c: a.remove_members_from_consumer_group(f"{c.topic}-g", [f"{c.topic}-static"])),
    # ACLs: noida-db answers SECURITY_DISABLED (Tansu's CreateAcls answer does not parse; no DeleteAcls).
    Row("create_acls", lambda a, c: a.create_acls([AclBinding("topic", c.topic, "User:alice", "read")]),
        ("noida",)),
    Row("describe_acls", lambda a, c: a.describe_acls(AclBindingFilter("topic", c.topic)), ("noida",)),
    Row("delete_acls", lambda a, c: a.delete_acls([AclBindingFilter("topic", c.topic)]), ("noida",)),
    Row("describe_user_scram_credentials", lambda a, c: a.describe_user_scram_credentials([f"{c.topic}-u"]),
        ("tansu",), answers=(BrokerResponseError, ProtocolError)),
    Row("alter_user_scram_credentials",
        lambda a, c: a.alter_user_scram_credentials([UserScramCredentialUpsertion(f"{c.topic}-u", "pw")]),
        ("tansu",)),
    Row("describe_producers", lambda a, c: a.describe_producers([c.tp]), ("noida",)),
    Row("list_transactions", lambda a, c: a.list_transactions(), ("noida",)),
    Row("describe_transactions", lambda a, c: a.describe_transactions([f"{c.topic}-txn"]), ("noida",)),
    Row("fence_producers", lambda a, c: a.fence_producers([f"{c.topic}-txn"])),
    Row("describe_log_dirs", lambda a, c: a.describe_log_dirs(), ("noida",)),
    Row("list_partition_reassignments", lambda a, c: a.list_partition_reassignments([c.tp]), ("tansu",)),
    # No broker here offers these APIs (docs/admin.md): each waits for what it must learn before sending.
    Row("abort_transaction", lambda a, c: a.abort_transaction(AbortTransactionSpec(c.tp, 1, 0, 0)),
        wait="reconnect"),
    Row("alter_partition_reassignments", lambda a, c: a.alter_partition_reassignments({c.tp: [1]}),
        wait="reconnect"),
    Row("elect_leaders", lambda a, c: a.elect_leaders([c.tp]), wait="reconnect"),
    Row("describe_client_quotas",
        lambda a, c: a.describe_client_quotas([QuotaFilterComponent("user", f"{c.topic}-u")]),
        wait="reconnect"),
    Row("alter_client_quotas",
        lambda a, c: a.alter_client_quotas({(("user", f"{c.topic}-u"),): {"producer_byte_rate": 1024.0}}),
        wait="reconnect"),
    Row("describe_share_groups", lambda a, c: a.describe_share_groups([f"{c.topic}-sg"])),
    Row("list_share_group_offsets", lambda a, c: a.list_share_group_offsets(f"{c.topic}-sg")),
    Row("alter_share_group_offsets", lambda a, c: a.alter_share_group_offsets(f"{c.topic}-sg", {c.tp: 0})),
    Row("delete_share_group_offsets", lambda a, c: a.delete_share_group_offsets(f"{c.topic}-sg", [c.topic])),
]
CASES = [pytest.param(kind, row, id=f"{kind}-{row}") for row in ROWS for kind in row.brokers]
#: The calls this module holds to the contract (tests/contract/test_coverage.py checks none is missing).
COVERED = frozenset(r.name for r in ROWS) | LIFECYCLE


@pytest.fixture
def ctx(request: pytest.FixtureRequest, new_topic: Callable[..., str]) -> Ctx:
    kind = request.node.callspec.params["kind"]
    return Ctx(request.getfixturevalue(kind), new_topic())


async def _started(ctx: Ctx) -> Admin:
    a = Admin(bootstrap_servers=ctx.broker.bootstrap, request_timeout_ms=REQUEST_TIMEOUT_MS)
    await within(a.start(), "start()")
    await within(a.create_topics([NewTopic(ctx.topic, num_partitions=1, replication_factor=1)]),
                 "create_topics")
    return a


def _waiting(a: Admin, ctx: Ctx, row: Row) -> contextlib.AbstractContextManager[None]:
    """The broker stops answering; for a ``reconnect`` row the admin's connections are closed first, so
    the call waits for a new connection's ApiVersions answer (or the coordinator's address)."""
    if row.wait == "reconnect":
        for broker in a.client.cluster.brokers():
            a.client.close_connection(broker.node_id)
    return frozen(ctx.broker.pid)


async def _usable(a: Admin, ctx: Ctx, row: Row) -> None:
    """The same call gets the broker's answer (an error code is an answer: the client works)."""
    try:
        await within(row.call(a, ctx), f"{row} after the cancel")
    except row.answers:
        pass
    assert ctx.topic in await within(a.list_topics(), "list_topics")


@pytest.mark.parametrize("point", CANCEL_POINTS)
@pytest.mark.parametrize(("kind", "row"), CASES)
async def test_cancelled_call_leaves_the_admin_usable(ctx: Ctx, kind: str, row: Row, point: str) -> None:
    a = await _started(ctx)
    try:
        await cancel_at(lambda: row.call(a, ctx), point, row.answers)
        await _usable(a, ctx, row)
    finally:
        await within(a.stop(), "stop()")


@pytest.mark.parametrize(("kind", "row"), CASES)
async def test_call_cancelled_while_waiting_leaves_the_admin_usable(ctx: Ctx, kind: str, row: Row) -> None:
    a = await _started(ctx)
    try:
        with _waiting(a, ctx, row):
            await cancel_waiting(lambda: row.call(a, ctx))
        await _usable(a, ctx, row)
    finally:
        await within(a.stop(), "stop()")


@pytest.mark.parametrize(("kind", "row"), CASES)
async def test_stop_wakes_a_waiting_call(ctx: Ctx, kind: str, row: Row) -> None:
    a = await _started(ctx)
    with _waiting(a, ctx, row):
        await stop_wakes(lambda: row.call(a, ctx), a.stop, ClientClosedError)


@pytest.mark.parametrize(("kind", "row"), CASES)
async def test_call_after_stop_raises_at_once(ctx: Ctx, kind: str, row: Row) -> None:
    a = await _started(ctx)
    await within(a.stop(), "stop()")
    await raises_at_once(lambda: row.call(a, ctx), IllegalStateError)


async def test_stop_wakes_a_call_in_its_retry_backoff(tansu: EmbeddedBroker, new_topic: Callable[..., str]
                                                     ) -> None:
    """A call waiting out ``retry_backoff_ms`` between two attempts when stop() runs raises
    ClientClosedError, not the "not started" of a call made after stop(), and at once: stop() wakes the
    backoff (a minute here, far past the bound). Tansu closes the connection on DeleteRecords
    (docs/admin.md), a retriable failure, so the call backs off for real."""
    ctx = Ctx(tansu, new_topic())
    a = Admin(bootstrap_servers=tansu.bootstrap, request_timeout_ms=120_000, retry_backoff_ms=60_000,
              retry_backoff_max_ms=60_000)
    await within(a.start(), "start()")
    await within(a.create_topics([NewTopic(ctx.topic, num_partitions=1, replication_factor=1)]),
                 "create_topics")
    await stop_wakes(lambda: a.delete_records({ctx.tp: 0}), a.stop, ClientClosedError)


# --- the lifecycle calls ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_stop_wakes_a_start_waiting_for_the_broker(ctx: Ctx, kind: str) -> None:
    a = Admin(bootstrap_servers=ctx.broker.bootstrap, request_timeout_ms=REQUEST_TIMEOUT_MS)
    with frozen(ctx.broker.pid):
        await stop_wakes(a.start, a.stop, ClientClosedError)


@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_cancelled_start_leaves_an_admin_that_starts(ctx: Ctx, kind: str) -> None:
    a = Admin(bootstrap_servers=ctx.broker.bootstrap, request_timeout_ms=REQUEST_TIMEOUT_MS)
    with frozen(ctx.broker.pid):
        await cancel_waiting(a.start)
    await within(a.start(), "start() after a cancelled start()")
    try:
        await within(a.list_topics(), "list_topics")
    finally:
        await within(a.stop(), "stop()")


@pytest.mark.parametrize("point", CANCEL_POINTS)
@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_cancelled_stop_then_stop_again_stops(ctx: Ctx, kind: str, point: str) -> None:
    a = await _started(ctx)
    await cancelled_stop_then_stop(a, point, a.list_topics, IllegalStateError)


@pytest.mark.parametrize("name", STOPPERS)
@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_stop_after_stop_returns_at_once(ctx: Ctx, kind: str, name: str) -> None:
    await stopper_after_stop_returns(await _started(ctx), name)


@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_start_after_stop_starts_again(ctx: Ctx, kind: str) -> None:
    """Admin holds no state worth keeping across a stop (unlike a producer's or a consumer's): as before
    this contract, start() after stop() connects again."""
    a = await _started(ctx)
    await within(a.stop(), "stop()")
    async with a:
        assert ctx.topic in await within(a.list_topics(), "list_topics after a restart")

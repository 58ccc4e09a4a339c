"""SASL re-authentication (KIP-368) through a SASL front whose sessions last 2 s, in front of Tansu.

The front returns the session lifetime in SaslAuthenticate v1+, answers SaslHandshake and
SaslAuthenticate on authenticated connections, counts re-authentications per connection, and closes
a connection whose session ended when its next request arrives (as Kafka's SocketServer does).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from _net_fakes import USERS

from aiokafka_lite.config import Config
from aiokafka_lite.consumer import Consumer
from aiokafka_lite.errors import AuthenticationFailedError, KafkaConnectionError
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.net.connection import BrokerConnection
from aiokafka_lite.net.reauth import Reauthenticator
from aiokafka_lite.producer import Producer
from aiokafka_lite.protocol.messages.metadata import MetadataRequest
from aiokafka_lite.testing._jwt_validator import JwtValidator
from aiokafka_lite.testing.oauth_server import OAuthServer
from aiokafka_lite.testing.sasl_front import SaslBroker, _Session

LIFETIME_MS = 2000


@pytest.fixture(scope="module")
def reauth_broker() -> Iterator[SaslBroker]:
    with SaslBroker(USERS, session_lifetime_ms=LIFETIME_MS) as broker:
        yield broker


def _sasl(mechanism: str) -> dict[str, Any]:
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "bob",
        "sasl_plain_password": USERS["bob"],
    }


def _check_counts(sessions: list[_Session], now: float, lifetime: float) -> int:
    """Each connection re-authenticated as often as its life and the session lifetime say.

    A re-authentication starts 85-95 % into the session (Java's window), and may wait for requests
    already in flight (a Fetch long poll: up to 0.5 s) before it goes out.
    """
    total = 0
    for s in sessions:
        life = (s.closed or now) - s.opened
        low, high = int(life / (lifetime * 0.95 + 0.7)) - 1, int(life / (lifetime * 0.85)) + 1
        assert low <= s.reauths <= high, (
            f"{s.reauths} re-authentications in {life:.1f} s (expected {low}-{high})"
        )
        total += s.reauths
    return total


async def _busy_metadata(client: KafkaClient, node: int, seconds: float) -> int:
    """Metadata requests back to back from 8 tasks for ``seconds``: the connection always has
    requests in flight (up to max_in_flight) and more waiting, so a re-authentication interleaved
    with them, or one that waits for a quiet moment that never comes, fails."""
    done = 0
    deadline = time.monotonic() + seconds

    async def worker() -> None:
        nonlocal done
        while time.monotonic() < deadline:
            response = await client.send(node, MetadataRequest(topics=[]))
            assert response.cluster_id == "tansu_cluster"
            done += 1

    await asyncio.gather(*(worker() for _ in range(8)))
    return done


@contextlib.asynccontextmanager
async def _connected(config: Config) -> AsyncIterator[tuple[KafkaClient, int, BrokerConnection]]:
    """A client, its one broker's node id and the connection a first request opened to it."""
    async with KafkaClient(config) as client:
        (broker,) = client.cluster.brokers()
        await client.send(broker.node_id, MetadataRequest(topics=[]))
        conn = client.connection(broker.node_id)
        assert conn is not None
        yield client, broker.node_id, conn


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_reauth_keeps_the_connection(
    reauth_broker: SaslBroker, make_config: Callable[..., Config], mechanism: str
) -> None:
    front = reauth_broker.front
    first, expired = len(front.sessions), front.expired
    async with _connected(make_config(reauth_broker.bootstrap, **_sasl(mechanism))) as (client, node, conn):
        await _busy_metadata(client, node, 3.0)
        assert client.connection(node) is conn and not conn.closed
        assert conn.reauth.count >= 1
    sessions = front.sessions[first:]
    assert front.expired == expired  # (the front is shared by this module's tests)
    assert _check_counts(sessions, asyncio.get_running_loop().time(), LIFETIME_MS / 1000) >= 1


async def test_a_late_loop_reauthenticates_before_its_next_request(
    reauth_broker: SaslBroker, make_config: Callable[..., Config]
) -> None:
    """The loop ran late, past the session's end (a starved process): the next request finds the
    re-authentication due and waits for it. A late loop runs what it was doing before its timers, so
    without that check the request went out first, on an ended session, and the broker closed the
    connection (Kafka accepts a SaslHandshake after the end, as the front does)."""
    front = reauth_broker.front
    expired = front.expired
    async with _connected(make_config(reauth_broker.bootstrap, **_sasl("PLAIN"))) as (client, node, conn):
        assert conn.reauth.count == 0
        time.sleep(LIFETIME_MS / 1000 + 0.3)  # noqa: ASYNC251 (the point: the loop is blocked past the end)
        response = await client.send(node, MetadataRequest(topics=[]))
        assert response.cluster_id == "tansu_cluster"
        assert client.connection(node) is conn and not conn.closed
        assert conn.reauth.count == 1
    assert front.expired == expired


async def test_a_late_answer_does_not_push_reauthentication_past_the_session_end(
    reauth_broker: SaslBroker, make_config: Callable[..., Config]
) -> None:
    """The broker's answer that grants a session comes a quarter of the session late (a loaded broker or
    link). The broker counts the session from when it granted it, so the client counts from when it
    wrote the request: counted from the answer, re-authentication came after the session had ended,
    and the requests between the two made the broker close the connection."""
    front = reauth_broker.front
    expired = front.expired
    front.answer_delay = LIFETIME_MS / 1000 / 4
    try:
        async with _connected(make_config(reauth_broker.bootstrap, **_sasl("PLAIN"))) as (client, node, conn):
            await _busy_metadata(client, node, 2.5)
            assert client.connection(node) is conn and not conn.closed
            assert conn.reauth.count >= 1
    finally:
        front.answer_delay = 0.0
    assert front.expired == expired


async def test_without_reauth_the_session_end_kills_the_connection(
    reauth_broker: SaslBroker, make_config: Callable[..., Config], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same traffic with the re-authentication scheduler off: the front closes the connection."""
    monkeypatch.setattr(Reauthenticator, "schedule", lambda self, lifetime_ms, since: None)
    front = reauth_broker.front
    expired = front.expired
    async with _connected(make_config(reauth_broker.bootstrap, **_sasl("PLAIN"))) as (client, node, conn):
        # The front's close reads as an orderly end or, with a request still unread, a reset (CI saw both).
        with pytest.raises(KafkaConnectionError, match=r"closed by the broker|reset by peer"):
            await _busy_metadata(client, node, 3.0)
        assert conn.closed
    assert front.expired > expired


async def test_oauthbearer_reauth_presents_fresh_tokens(make_config: Callable[..., Config]) -> None:
    """Sessions end with the token (3 s): each re-authentication needs the next token."""
    with OAuthServer({"app": {"secret": "app-secret", "lifetime": 3}}) as server:
        validator = JwtValidator(server.jwks_url, issuer=server.issuer)
        async with SaslBroker(USERS, oauth=validator) as broker:
            config = make_config(
                broker.bootstrap,
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="OAUTHBEARER",
                sasl_oauthbearer_token_endpoint_url=server.token_url,
                sasl_oauthbearer_client_id="app",
                sasl_oauthbearer_client_secret="app-secret",
            )
            async with KafkaClient(config) as client:
                (node,) = client.cluster.brokers()
                await client.send(node.node_id, MetadataRequest(topics=[]))
                conn = client.connection(node.node_id)
                await _busy_metadata(client, node.node_id, 6.5)
                assert client.connection(node.node_id) is conn
                assert conn is not None and conn.reauth.count >= 2
                cache = client._settings.sasl_oauth
                assert cache is not None and cache.fetches >= 3
            assert broker.front.expired == 0 and broker.front.refusals == []
            assert broker.front.reauthenticated >= 2


async def test_produce_and_group_consume_across_reauthentications(
    reauth_broker: SaslBroker, new_topic: Any
) -> None:
    """Idempotent produce and a group consume for 20 s of 2 s sessions: every record once, in order."""
    front = reauth_broker.front
    first, expired = len(front.sessions), front.expired
    topic = new_topic()
    common = {"bootstrap_servers": reauth_broker.bootstrap, **_sasl("SCRAM-SHA-256")}
    partitions, total, seconds = 4, 2000, 20.0
    got: dict[int, list[int]] = {p: [] for p in range(partitions)}
    async with Producer(enable_idempotence=True, linger_ms=2, **common) as producer:
        await producer.send_and_wait(topic, b"-1", partition=0)  # creates the topic (Tansu: 4 partitions)
        async with Consumer(
            group_id=f"g-{topic}",
            auto_offset_reset="earliest",
            heartbeat_interval_ms=300,
            session_timeout_ms=6000,
            **common,
        ) as consumer:
            consumer.subscribe([topic])

            produced_at: list[float] = []

            async def consume() -> None:
                # Until every record came, or 30 s after the last was acknowledged (the producing itself
                # takes longer on a loaded machine: its pace is set by sleeps).
                while sum(map(len, got.values())) < total + 1 and (
                        not produced_at or time.monotonic() < produced_at[0] + 30):
                    for tp, records in (await consumer.poll(timeout_ms=200)).items():
                        got[tp.partition].extend(int(r.value) for r in records)

            consuming = asyncio.create_task(consume())
            futures = []
            for i in range(total):
                futures.append(await producer.send(topic, str(i).encode(), partition=i % partitions))
                await asyncio.sleep(seconds / total)
            await producer.flush()
            for fut in futures:
                await fut
            produced_at.append(time.monotonic())
            await asyncio.wait_for(consuming, 40)
    expected = {p: ([-1] if p == 0 else []) + list(range(p, total, partitions)) for p in range(partitions)}
    for p in range(partitions):  # nothing lost, duplicated or reordered
        missing = sorted(set(expected[p]) - set(got[p]))[:5]
        assert got[p] == expected[p], (p, len(got[p]), len(expected[p]), missing)
    sessions = front.sessions[first:]
    assert front.expired == expired  # (the front is shared by this module's tests)
    reauths = _check_counts(sessions, asyncio.get_running_loop().time(), LIFETIME_MS / 1000)
    print(f"{reauths} re-authentications on {len(sessions)} connections over {seconds:.0f} s")
    assert reauths >= 3 * int(seconds / 2.5)  # producer, consumer and coordinator connections at least


async def test_refused_reauthentication_reaches_the_caller(make_config: Callable[..., Config]) -> None:
    """The second token is already expired: the front refuses the re-authentication, the connection
    closes with the broker's reason, and the next request raises it (nothing dies silently)."""
    with OAuthServer(
        {"app": {"secret": "app-secret", "lifetime": 3}, "brief": {"secret": "b", "lifetime": 1}}
    ) as server:
        stale = _fetch_token(server, "brief", "b")
        await asyncio.sleep(1.1)  # the brief token has expired
        connected = False

        def provider() -> tuple[str, float]:  # good 3 s tokens until connected, then only the expired one
            return stale if connected else _fetch_token(server, "app", "app-secret")

        validator = JwtValidator(server.jwks_url, issuer=server.issuer)
        async with SaslBroker(USERS, oauth=validator) as broker:
            config = make_config(
                broker.bootstrap,
                security_protocol="SASL_PLAINTEXT",
                sasl_mechanism="OAUTHBEARER",
                sasl_oauth_token_provider=provider,
            )
            async with KafkaClient(config) as client:
                (node,) = client.cluster.brokers()
                await client.send(node.node_id, MetadataRequest(topics=[]))
                conn = client.connection(node.node_id)
                assert conn is not None
                connected = True  # (a loaded machine may have needed more than one token to get here)
                with pytest.raises(AuthenticationFailedError, match=r"invalid_token"):
                    await _busy_metadata(client, node.node_id, 6.0)
                assert conn.closed and isinstance(conn.close_reason, AuthenticationFailedError)
                assert "re-authentication" in str(conn.close_reason)
            assert broker.front.refusals and broker.front.expired == 0


def _fetch_token(server: OAuthServer, client_id: str, secret: str) -> tuple[str, float]:
    import base64
    import json
    import urllib.request

    request = urllib.request.Request(server.token_url, data=b"grant_type=client_credentials", method="POST")
    auth = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    request.add_header("Authorization", f"Basic {auth}")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    with urllib.request.urlopen(request, timeout=10) as answer:
        data = json.loads(answer.read())
    return data["access_token"], float(data["expires_in"])

"""SASL GSSAPI against a real MIT Kerberos KDC (krb5kdc on loopback, a throw-away realm) and a SASL
front whose GSSAPI side is MIT's acceptor (the gssapi package's SecurityContext in accept mode)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from aiokafka_lite import Consumer, Producer, TopicPartition
from aiokafka_lite.config import COMMON, Config
from aiokafka_lite.errors import AuthenticationFailedError
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.protocol.messages.metadata import MetadataRequest
from aiokafka_lite.testing.kdc import GssapiServer, Kdc
from aiokafka_lite.testing.sasl_front import SaslBroker

pytest.importorskip("gssapi", reason="the gssapi extra is part of dev: pip install -e '.[dev]'")


class Realm:
    """The KDC, its keytabs, and Tansu behind a SASL front that accepts GSSAPI."""

    def __init__(
        self, kdc: Kdc, broker: SaslBroker, keytabs: dict[str, str], servers: list[GssapiServer]
    ) -> None:
        self.kdc = kdc
        self.broker = broker
        self.keytabs = keytabs
        self.servers = servers  # one per GSSAPI exchange the front ran, in order
        self.layers = 1  # the security layers the front offers (RFC 4752 bitmask)


@pytest.fixture(scope="module")
def realm() -> Iterator[Realm]:
    with Kdc() as kdc, kdc.activate():
        service_keytab = kdc.add_principal("kafka/127.0.0.1")
        kdc.add_principal("kafka/broker.example", keytab=service_keytab)  # for sasl_kerberos_domain_name
        keytabs = {user: str(kdc.add_principal(user)) for user in ("alice", "bob", "carol", "dave", "erin")}
        kdc.kadmin(f"delprinc -force erin@{kdc.realm}")  # erin's keytab outlived her principal
        kdc.kadmin(f"cpw -randkey carol@{kdc.realm}")  # carol's keytab now holds stale keys
        servers: list[GssapiServer] = []

        def accept() -> GssapiServer:
            servers.append(GssapiServer(service_keytab, layers=realm.layers))
            return servers[-1]

        with SaslBroker({}, mechanisms=[], mechanism_servers={"GSSAPI": accept}) as broker:
            realm = Realm(kdc, broker, keytabs, servers)
            yield realm


def _settings(realm: Realm, user: str | None, **extra: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "bootstrap_servers": realm.broker.bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "GSSAPI",
        "socket_connection_setup_timeout_ms": 30000,  # errors must come from Kerberos, not this
    }
    if user is not None:
        settings.update(sasl_kerberos_principal=user, sasl_kerberos_keytab=realm.keytabs[user])
    settings.update(extra)
    return settings


async def _start_fails(settings: dict[str, Any]) -> str:
    client = KafkaClient(Config(COMMON, settings))
    with pytest.raises(AuthenticationFailedError) as info:
        await client.start()
    await client.close()
    return str(info.value)


async def test_gssapi_produce_consume(realm: Realm) -> None:
    before = realm.broker.front.authenticated
    settings = _settings(realm, "alice")
    topic = "gssapi-topic"
    async with Producer(**settings) as producer:
        for i in range(10):
            await producer.send(topic, b"v%d" % i, partition=0)
        await producer.flush()
    tp = TopicPartition(topic, 0)
    async with Consumer(**settings, auto_offset_reset="earliest") as consumer:
        consumer.assign([tp])
        got: list[bytes] = []
        for _ in range(50):
            batch = await consumer.poll(timeout_ms=500)
            got += [r.value for r in batch.get(tp, [])]
            if len(got) >= 10:
                break
    assert got == [b"v%d" % i for i in range(10)]
    assert {s.principal for s in realm.servers} == {f"alice@{realm.kdc.realm}"}
    assert {s.authzid for s in realm.servers} == {f"alice@{realm.kdc.realm}"}  # as Kafka's Java client
    assert realm.broker.front.authenticated >= before + 4  # bootstrap + node, for each client


async def test_gssapi_default_credential_cache(realm: Realm, make_config: Callable[..., Config]) -> None:
    """No keytab setting: the ticket comes from KRB5CCNAME (filled by kinit, as a user would)."""
    await asyncio.to_thread(realm.kdc.kinit, "dave", realm.keytabs["dave"])
    config = make_config(realm.broker.bootstrap, security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI")
    async with KafkaClient(config) as client:
        (broker,) = client.cluster.brokers()
        await client.send(broker.node_id, MetadataRequest(topics=[]))
    assert realm.servers[-1].principal == f"dave@{realm.kdc.realm}"


async def test_gssapi_domain_name_override(realm: Realm) -> None:
    override = _settings(realm, "alice", sasl_kerberos_domain_name="broker.example")
    async with KafkaClient(Config(COMMON, override)):
        pass
    message = await _start_fails(_settings(realm, "alice", sasl_kerberos_domain_name="elsewhere.example"))
    assert "kafka@elsewhere.example" in message and "not found in Kerberos database" in message


async def test_gssapi_wrong_service_name(realm: Realm) -> None:
    message = await _start_fails(_settings(realm, "alice", sasl_kerberos_service_name="zookeeper"))
    assert "principal 'alice'" in message and "zookeeper@127.0.0.1" in message
    assert "not found in Kerberos database" in message


async def test_gssapi_unknown_principal(realm: Realm) -> None:
    message = await _start_fails(_settings(realm, "alice", sasl_kerberos_principal="mallory"))
    assert "principal 'mallory'" in message and realm.keytabs["alice"] in message
    assert "the keytab holds no key for this principal" in message


async def test_gssapi_principal_unknown_to_kdc(realm: Realm) -> None:
    message = await _start_fails(_settings(realm, "erin"))
    assert "principal 'erin'" in message and "not found in Kerberos database" in message
    assert "the KDC does not know this principal" in message


async def test_gssapi_stale_keytab(realm: Realm) -> None:
    message = await _start_fails(_settings(realm, "carol"))
    assert "principal 'carol'" in message and "not the principal's current keys" in message


async def test_gssapi_missing_keytab(realm: Realm) -> None:
    missing = realm.keytabs["alice"] + ".missing"
    message = await _start_fails(_settings(realm, "alice", sasl_kerberos_keytab=missing))
    assert "principal 'alice'" in message and missing in message and "not a readable file" in message


async def test_gssapi_kdc_unreachable(realm: Realm) -> None:
    """A krb5.conf naming a port where no KDC listens: a clear error, not a hang."""
    dead = Kdc(realm.kdc.realm)  # same realm, never started: its port has no listener
    try:
        with dead.activate():
            message = await _start_fails(_settings(realm, "bob"))
    finally:
        dead.stop()
    assert "principal 'bob'" in message and "Cannot contact any KDC" in message
    assert "running and reachable" in message


async def test_gssapi_missing_package_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the optional gssapi package a GSSAPI client fails at construction, saying what to install."""
    import sys

    from aiokafka_lite.errors import ConfigError

    monkeypatch.setitem(sys.modules, "gssapi", None)  # makes `import gssapi` raise ImportError
    settings = {
        "bootstrap_servers": "127.0.0.1:9",
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "GSSAPI",
    }
    with pytest.raises(ConfigError, match=r"aiokafka-lite\[gssapi\]"):
        KafkaClient(Config(COMMON, settings))


async def test_gssapi_empty_default_cache(realm: Realm, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{realm.kdc.directory / 'no-such-ccache'}")
    message = await _start_fails(_settings(realm, None))
    assert "the default credential cache's principal" in message and "kinit" in message


async def test_gssapi_silent_kdc_is_bounded(realm: Realm) -> None:
    """A KDC port that accepts TCP but never answers: the connect timeout ends the wait."""
    import socket

    from aiokafka_lite.errors import KafkaConnectionError

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # connections complete in the backlog; nothing is ever read or answered
    dead = Kdc(realm.kdc.realm)
    dead._write_config(kdc_port=silent.getsockname()[1])
    try:
        with dead.activate():
            settings = _settings(realm, "bob", socket_connection_setup_timeout_ms=1500)
            client = KafkaClient(Config(COMMON, settings))
            with pytest.raises(KafkaConnectionError, match=r"timed out after 1500 ms .*Kerberos KDC"):
                await client.start()
            await client.close()
    finally:
        dead.stop()
        silent.close()


async def test_gssapi_over_tls(realm: Realm) -> None:
    """SASL_SSL: stunnel -> the front's GSSAPI -> Tansu, the CA given as ssl_cafile."""
    service_keytab = realm.kdc.directory / "kafka_127.0.0.1.keytab"
    servers = {"GSSAPI": lambda: GssapiServer(service_keytab)}
    async with SaslBroker({}, tls=True, mechanisms=[], mechanism_servers=servers) as broker:
        assert broker.tls is not None
        ca = str(broker.tls.certs.ca_cert)
        settings = _settings(realm, "alice", security_protocol="SASL_SSL", ssl_cafile=ca)
        settings["bootstrap_servers"] = broker.bootstrap
        async with KafkaClient(Config(COMMON, settings)) as client:
            (node,) = client.cluster.brokers()
            await client.send(node.node_id, MetadataRequest(topics=[]))
        assert broker.front.authenticated == 2


async def test_front_accepts_peer_clients(realm: Realm) -> None:
    """The front's GSSAPI side against two independent clients, aiokafka and kafka-python (both on the
    gssapi package, from the default credential cache): what it accepts is what real clients send."""
    import aiokafka
    import kafka

    await asyncio.to_thread(realm.kdc.kinit, "dave", realm.keytabs["dave"])
    before = len(realm.servers)
    common: dict[str, Any] = dict(
        bootstrap_servers=realm.broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="GSSAPI",
        sasl_kerberos_service_name="kafka",
    )
    producer = aiokafka.AIOKafkaProducer(**common)
    await producer.start()
    try:
        await producer.send_and_wait("gssapi-peers", b"from aiokafka", partition=0)
    finally:
        await producer.stop()

    def kafka_python_round_trip() -> None:
        peer = kafka.KafkaProducer(**common)
        try:
            peer.send("gssapi-peers", b"from kafka-python", partition=0).get(timeout=20)
        finally:
            peer.close()

    await asyncio.to_thread(kafka_python_round_trip)
    peers = realm.servers[before:]
    assert peers and all(s.principal == f"dave@{realm.kdc.realm}" for s in peers)
    assert {s.authzid for s in peers} == {"kafka@127.0.0.1"}  # both send the service as authorization id


async def test_gssapi_broker_demanding_a_security_layer(realm: Realm) -> None:
    """A broker offering only confidentiality (4): Kafka never does; the client says why it stops."""
    realm.layers = 4
    try:
        message = await _start_fails(_settings(realm, "alice"))
    finally:
        realm.layers = 1
    assert "principal 'alice@" in message and "demands a SASL security layer (offered mask 0x04)" in message


async def test_gssapi_reauthentication(realm: Realm) -> None:
    """KIP-368 with GSSAPI: 2 s sessions, a fresh GSS-API exchange on the live connection each time."""
    front = realm.broker.front
    front.session_lifetime_ms = 2000
    expired, reauths = front.expired, front.reauthenticated
    try:
        async with KafkaClient(Config(COMMON, _settings(realm, "alice"))) as client:
            (broker,) = client.cluster.brokers()
            await client.send(broker.node_id, MetadataRequest(topics=[]))
            conn = client.connection(broker.node_id)
            deadline = asyncio.get_running_loop().time() + 3.0

            async def worker() -> None:
                while asyncio.get_running_loop().time() < deadline:
                    await client.send(broker.node_id, MetadataRequest(topics=[]))

            await asyncio.gather(*(worker() for _ in range(4)))
            assert client.connection(broker.node_id) is conn and conn is not None and not conn.closed
            assert conn.reauth.count >= 1
    finally:
        front.session_lifetime_ms = 0
    assert front.expired == expired and front.reauthenticated > reauths
    assert realm.servers[-1].principal == f"alice@{realm.kdc.realm}"

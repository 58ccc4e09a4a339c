"""TLS through real terminators (stunnel4, socat) and SASL through an independent front (scramp)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from _net_fakes import USERS

from aiokafka_lite.config import Config
from aiokafka_lite.errors import AuthenticationFailedError, KafkaConnectionError
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.protocol.messages.api_versions import ApiVersionsRequest
from aiokafka_lite.protocol.messages.metadata import MetadataRequest, MetadataResponse
from aiokafka_lite.testing.sasl_front import SaslBroker
from aiokafka_lite.testing.tls import TlsBroker, make_certificates

MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


async def _round_trips(client: KafkaClient) -> None:
    """Metadata and ApiVersions to the broker's node id (a second connection, opened after metadata)."""
    (broker,) = client.cluster.brokers()
    response = await client.send(broker.node_id, MetadataRequest(topics=[]))
    assert isinstance(response, MetadataResponse)
    assert response.cluster_id == "tansu_cluster"
    versions = await client.send(broker.node_id, ApiVersionsRequest(), version=0)
    assert versions.error_code == 0 and versions.api_keys


async def test_tls_round_trips(tls_broker: TlsBroker, make_config: Callable[..., Config]) -> None:
    config = make_config(
        tls_broker.bootstrap, security_protocol="SSL", ssl_context=tls_broker.client_context()
    )
    async with KafkaClient(config) as client:
        (broker,) = client.cluster.brokers()
        assert (broker.host, broker.port) == (tls_broker.host, tls_broker.port)  # advertised: the terminator
        await _round_trips(client)
        conn = client.connection(broker.node_id)
        assert conn is not None and conn._transport is not None
        assert conn._transport.get_extra_info("ssl_object") is not None


async def test_tls_wrong_ca_fails_clearly(tls_broker: TlsBroker, make_config: Callable[..., Config]) -> None:
    other = make_certificates(tls_broker.directory, name="stranger")
    config = make_config(tls_broker.bootstrap, security_protocol="SSL", ssl_context=other.client_context())
    client = KafkaClient(config)
    with pytest.raises(
        AuthenticationFailedError, match=r"TLS handshake .* failed: .*CERTIFICATE_VERIFY_FAILED"
    ):
        await client.start()
    await client.close()


async def test_plaintext_to_tls_port_fails(tls_broker: TlsBroker, make_config: Callable[..., Config]) -> None:
    client = KafkaClient(make_config(tls_broker.bootstrap, socket_connection_setup_timeout_ms=2000))
    with pytest.raises(KafkaConnectionError, match=tls_broker.bootstrap):
        await client.start()
    await client.close()


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("user", sorted(USERS))
async def test_sasl_mechanisms(
    sasl_broker: SaslBroker, make_config: Callable[..., Config], mechanism: str, user: str
) -> None:
    before = sasl_broker.front.authenticated
    config = make_config(
        sasl_broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism=mechanism,
        sasl_plain_username=user,
        sasl_plain_password=USERS[user],
    )
    async with KafkaClient(config) as client:
        await _round_trips(client)
    assert sasl_broker.front.authenticated == before + 2  # the bootstrap and the node connection


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize(("user", "password"), [("alice", "wrong"), ("mallory", "alice-secret")])
async def test_sasl_wrong_credentials(
    sasl_broker: SaslBroker, make_config: Callable[..., Config], mechanism: str, user: str, password: str
) -> None:
    config = make_config(
        sasl_broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism=mechanism,
        sasl_plain_username=user,
        sasl_plain_password=password,
    )
    client = KafkaClient(config)
    with pytest.raises(AuthenticationFailedError, match=f"SASL {mechanism} authentication of user '{user}'"):
        await client.start()
    await client.close()


async def test_sasl_mechanism_not_enabled(make_config: Callable[..., Config]) -> None:
    async with SaslBroker(USERS, mechanisms=["PLAIN"]) as broker:
        config = make_config(
            broker.bootstrap,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-512",
            sasl_plain_username="alice",
            sasl_plain_password=USERS["alice"],
        )
        client = KafkaClient(config)
        with pytest.raises(
            AuthenticationFailedError, match=r"does not enable SASL mechanism SCRAM-SHA-512.*PLAIN"
        ):
            await client.start()
        await client.close()


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
async def test_sasl_ssl(
    sasl_ssl_broker: SaslBroker, make_config: Callable[..., Config], mechanism: str
) -> None:
    config = make_config(
        sasl_ssl_broker.bootstrap,
        security_protocol="SASL_SSL",
        sasl_mechanism=mechanism,
        ssl_context=sasl_ssl_broker.client_context(),
        sasl_plain_username="alice",
        sasl_plain_password=USERS["alice"],
    )
    async with KafkaClient(config) as client:
        await _round_trips(client)

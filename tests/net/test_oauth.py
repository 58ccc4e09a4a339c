"""SASL/OAUTHBEARER against a real OAuth 2 server (authlib, in a child process) and a SASL front
that checks each JWT with joserfc against that server's JWKS, in front of Tansu."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _net_fakes import USERS
from aiokafka.abc import AbstractTokenProvider

from aiokafka_lite.config import Config
from aiokafka_lite.errors import AuthenticationFailedError, ConfigError
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.net.sasl_oauth import OAuthBearerClient, OAuthBearerToken, TokenCache, parse_extensions
from aiokafka_lite.protocol.messages.metadata import MetadataRequest
from aiokafka_lite.testing._jwt_validator import JwtValidator, parse_client_first
from aiokafka_lite.testing.oauth_server import OAuthServer, make_rsa_key
from aiokafka_lite.testing.sasl_front import SaslBroker

KEY_PRIVATE, KEY_PUBLIC = make_rsa_key()
EC_PRIVATE, EC_PUBLIC = make_rsa_key("EC")
LOOPBACK = "127.0.0.1"


@pytest.fixture(scope="module")
def oauth_server() -> Iterator[OAuthServer]:
    clients = {
        "app": {"secret": "app-secret", "lifetime": 3600},
        "brief": {"secret": "brief-secret", "lifetime": 1},
        "svc": {"public_key": KEY_PUBLIC.decode(), "lifetime": 3600},
        "odd": {"secret": "p%41ss", "lifetime": 3600},
        "svc-ec": {"public_key": EC_PUBLIC.decode(), "lifetime": 3600},
    }
    with OAuthServer(clients) as server:
        yield server


@pytest.fixture(scope="module")
def oauth_broker(oauth_server: OAuthServer) -> Iterator[SaslBroker]:
    validator = JwtValidator(oauth_server.jwks_url, issuer=oauth_server.issuer)
    with SaslBroker(USERS, oauth=validator) as broker:
        yield broker


def _fetch_directly(server: OAuthServer, client_id: str, secret: str) -> dict[str, Any]:
    """A token from the server by plain urllib (not our fetcher), for token callbacks."""
    body = b"grant_type=client_credentials"
    request = urllib.request.Request(server.token_url, data=body, method="POST")
    request.add_header(
        "Authorization", "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    )
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    with urllib.request.urlopen(request, timeout=10) as answer:
        data: dict[str, Any] = json.loads(answer.read())
    return data


async def _metadata(config: Config) -> KafkaClient:
    client = KafkaClient(config)
    await asyncio.wait_for(client.start(), 20)
    (broker,) = client.cluster.brokers()
    response = await client.send(broker.node_id, MetadataRequest(topics=[]))
    assert response.cluster_id == "tansu_cluster"
    return client


def _oauth(make_config: Callable[..., Config], broker: SaslBroker, **settings: Any) -> Config:
    return make_config(
        broker.bootstrap, security_protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER", **settings
    )


# -- the message (sans-I/O) -----------------------------------------------------------------------


def test_client_first_message_matches_kafka() -> None:
    """Kafka's OAuthBearerClientInitialResponseTest vectors, and our front's parser reads ours back."""
    token = OAuthBearerToken("123.345.567", time.time() + 60)
    assert (
        OAuthBearerClient(token, {"nineteen": "42"}).first()
        == b"n,,\x01auth=Bearer 123.345.567\x01nineteen=42\x01\x01"
    )
    assert OAuthBearerClient(token).first() == b"n,,\x01auth=Bearer 123.345.567\x01\x01"
    assert OAuthBearerClient(token, authzid="myuser").first().startswith(b"n,a=myuser,\x01")
    assert parse_client_first(OAuthBearerClient(token, {"a": "b c"}).first()) == ("123.345.567", {"a": "b c"})
    client = OAuthBearerClient(token)
    client.first()
    assert client.step(b'{"status":"invalid_token"}') == b"\x01"  # RFC 7628 3.2.3
    assert client.server_error == '{"status":"invalid_token"}'
    with pytest.raises(ConfigError, match="extension name '19'"):
        OAuthBearerClient(token, {"19": "42"})
    with pytest.raises(ConfigError, match="'auth'"):
        parse_extensions("auth=x")
    assert parse_extensions("traceId=abc, logicalCluster=lkc-1") == {
        "traceId": "abc",
        "logicalCluster": "lkc-1",
    }
    with pytest.raises(AuthenticationFailedError, match="RFC 6750"):
        OAuthBearerClient(OAuthBearerToken("bad token!", 0))


async def test_token_cache_refreshes_at_the_window() -> None:
    """Refreshed once 80-85 % of the lifetime passed; one fetch for concurrent callers."""
    calls = 0

    async def provider() -> tuple[str, float]:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        return f"t{calls}", 1.0

    cache = TokenCache(provider)
    first = await asyncio.gather(*(cache.get() for _ in range(5)))
    assert {t.value for t in first} == {"t1"} and calls == 1
    await asyncio.sleep(0.7)
    assert (await cache.get()).value == "t1"  # 70 %: not due yet
    await asyncio.sleep(0.2)
    assert (await cache.get()).value == "t2"  # 90 %: past 0.8 + 0.05 jitter


# -- against the OAuth server and the front ----------------------------------------------------


async def test_client_credentials(
    oauth_server: OAuthServer, oauth_broker: SaslBroker, make_config: Callable[..., Config]
) -> None:
    front = oauth_broker.front
    before = front.authenticated
    config = _oauth(
        make_config,
        oauth_broker,
        sasl_oauthbearer_token_endpoint_url=oauth_server.token_url,
        sasl_oauthbearer_client_id="app",
        sasl_oauthbearer_client_secret="app-secret",
        sasl_oauthbearer_scope="kafka",
        sasl_oauthbearer_extensions="traceId=t1",
    )
    assert "app-secret" not in repr(config)
    client = await _metadata(config)
    assert client._settings.sasl_oauth is not None and client._settings.sasl_oauth.fetches == 1
    await client.close()
    assert front.authenticated >= before + 2  # bootstrap and node connections, one token
    assert front.principals[-1] == "app"


@pytest.mark.parametrize("kind", ["sync", "async", "aiokafka"])
async def test_token_callback(
    oauth_server: OAuthServer, oauth_broker: SaslBroker, make_config: Callable[..., Config], kind: str
) -> None:
    def sync() -> tuple[str, float]:
        data = _fetch_directly(oauth_server, "app", "app-secret")
        return data["access_token"], data["expires_in"]

    async def async_() -> OAuthBearerToken:
        data = await asyncio.to_thread(_fetch_directly, oauth_server, "app", "app-secret")
        return OAuthBearerToken.from_lifetime(data["access_token"], data["expires_in"])

    class AiokafkaStyle(AbstractTokenProvider):  # aiokafka's own base class: async token() -> str
        async def token(self) -> str:
            return str(
                (await asyncio.to_thread(_fetch_directly, oauth_server, "app", "app-secret"))["access_token"]
            )

        def extensions(self) -> dict[str, str]:
            return {"traceId": "x"}

    provider = {"sync": sync, "async": async_, "aiokafka": AiokafkaStyle()}[kind]
    client = await _metadata(_oauth(make_config, oauth_broker, sasl_oauth_token_provider=provider))
    await client.close()


@pytest.mark.parametrize("source", ["private_key", "private_key_es256", "assertion_file"])
async def test_jwt_bearer(
    oauth_server: OAuthServer,
    oauth_broker: SaslBroker,
    make_config: Callable[..., Config],
    tmp_path: Path,
    source: str,
) -> None:
    """KIP-1139: an assertion signed here (RS256 or ES256) or read from a file; authlib's RFC 7523
    grant checks it against the client's public key."""
    es = source == "private_key_es256"
    key_file = tmp_path / "key.pem"
    key_file.write_bytes(EC_PRIVATE if es else KEY_PRIVATE)
    claims = {
        "sasl_oauthbearer_assertion_claim_iss": "svc-ec" if es else "svc",
        "sasl_oauthbearer_assertion_claim_sub": "carol",
        "sasl_oauthbearer_assertion_claim_aud": oauth_server.token_url,
        "sasl_oauthbearer_assertion_claim_jti_include": True,
        "sasl_oauthbearer_assertion_algorithm": "ES256" if es else "RS256",
    }
    settings: dict[str, Any]
    if source.startswith("private_key"):
        settings = {"sasl_oauthbearer_assertion_private_key_file": str(key_file), **claims}
    else:
        from aiokafka_lite.net.oauth_assertion import AssertionSigner

        signer = AssertionSigner(KEY_PRIVATE, issuer="svc", subject="carol", audience=oauth_server.token_url)
        assertion = tmp_path / "assertion.jwt"
        assertion.write_text(signer())
        settings = {"sasl_oauthbearer_assertion_file": str(assertion)}
    client = await _metadata(
        _oauth(
            make_config, oauth_broker, sasl_oauthbearer_token_endpoint_url=oauth_server.token_url, **settings
        )
    )
    await client.close()
    assert oauth_broker.front.principals[-1] == "carol"


async def test_wrong_client_secret_names_the_endpoint_error(
    oauth_server: OAuthServer, oauth_broker: SaslBroker, make_config: Callable[..., Config]
) -> None:
    config = _oauth(
        make_config,
        oauth_broker,
        sasl_oauthbearer_token_endpoint_url=oauth_server.token_url,
        sasl_oauthbearer_client_id="app",
        sasl_oauthbearer_client_secret="not-the-secret",
    )
    client = KafkaClient(config)
    with pytest.raises(
        AuthenticationFailedError,
        match=r"refused the client_credentials token request: "
        r"HTTP 401 .*invalid_client",
    ) as info:
        await asyncio.wait_for(client.start(), 20)
    assert "not-the-secret" not in str(info.value)
    await client.close()


async def test_expired_token_gets_the_brokers_refusal(
    oauth_server: OAuthServer, oauth_broker: SaslBroker, make_config: Callable[..., Config]
) -> None:
    data = _fetch_directly(oauth_server, "brief", "brief-secret")  # a 1 s token
    await asyncio.sleep(2.1)
    refused = len(oauth_broker.front.refusals)
    config = _oauth(
        make_config,
        oauth_broker,
        sasl_oauth_token_provider=lambda: (data["access_token"], data["expires_in"]),
    )
    client = KafkaClient(config)
    with pytest.raises(
        AuthenticationFailedError,
        match=r"SASL OAUTHBEARER authentication with .* failed: \{\"status\":\"invalid_token\"\}; "
        r"the token had expired \d+ s before",
    ):
        await asyncio.wait_for(client.start(), 20)
    await client.close()
    assert oauth_broker.front.refusals[refused:] == ["the token has expired"]


async def test_unreachable_endpoint(oauth_broker: SaslBroker, make_config: Callable[..., Config]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = _oauth(
        make_config,
        oauth_broker,
        sasl_oauthbearer_token_endpoint_url=f"http://127.0.0.1:{port}/t",
        sasl_oauthbearer_client_id="app",
        sasl_oauthbearer_client_secret="x",
    )
    client = KafkaClient(config)
    with pytest.raises(
        AuthenticationFailedError,
        match=rf"cannot reach the OAuth token endpoint http://127.0.0.1:{port}/t: .*refused",
    ):
        await asyncio.wait_for(client.start(), 20)
    await client.close()


async def test_silent_endpoint_times_out(
    oauth_broker: SaslBroker, make_config: Callable[..., Config]
) -> None:
    """A server that accepts and never answers: the read timeout names itself."""

    async def mute(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # hold the connection until the client gives up
        writer.close()

    server = await asyncio.start_server(mute, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    config = _oauth(
        make_config,
        oauth_broker,
        sasl_oauthbearer_token_endpoint_url=f"http://127.0.0.1:{port}/t",
        sasl_oauthbearer_client_id="app",
        sasl_oauthbearer_client_secret="x",
        sasl_login_read_timeout_ms=300,
    )
    client = KafkaClient(config)
    with pytest.raises(
        AuthenticationFailedError, match=r"no complete answer within 300 ms \(sasl_login_read"
    ):
        await asyncio.wait_for(client.start(), 20)
    await client.close()
    server.close()
    await server.wait_closed()


def test_settings_need_a_token_source(make_config: Callable[..., Config]) -> None:
    with pytest.raises(ConfigError, match="sasl_oauth_token_provider"):
        KafkaClient(
            make_config("127.0.0.1:9", security_protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER")
        )


async def test_https_token_endpoint(
    oauth_server: OAuthServer, oauth_broker: SaslBroker, make_config: Callable[..., Config]
) -> None:
    """The token request over TLS (stunnel in front of the OAuth server): trusted with
    sasl_oauthbearer_ssl_context, refused with the system's trust store (naming the TLS failure)."""
    from aiokafka_lite.testing.tls import TlsBroker

    with TlsBroker(upstream=(LOOPBACK, oauth_server.port)) as tls:
        url = f"https://{tls.bootstrap}/token"
        creds = {"sasl_oauthbearer_client_id": "app", "sasl_oauthbearer_client_secret": "app-secret"}
        client = await _metadata(
            _oauth(
                make_config,
                oauth_broker,
                sasl_oauthbearer_token_endpoint_url=url,
                sasl_oauthbearer_ssl_context=tls.client_context(),
                **creds,
            )
        )
        await client.close()
        client = KafkaClient(
            _oauth(make_config, oauth_broker, sasl_oauthbearer_token_endpoint_url=url, **creds)
        )
        with pytest.raises(
            AuthenticationFailedError, match=r"cannot reach the OAuth token endpoint .*CERTIFICATE_VERIFY"
        ):
            await asyncio.wait_for(client.start(), 20)
        await client.close()


@pytest.mark.parametrize("urlencode", [True, False])
async def test_basic_header_urlencode(
    oauth_server: OAuthServer, oauth_broker: SaslBroker, make_config: Callable[..., Config], urlencode: bool
) -> None:
    """authlib reads the Basic header per RFC 6749 2.3.1 (form-decoded): a secret holding "%41" only
    gets through when sasl_oauthbearer_header_urlencode encodes it (Java's default sends it raw)."""
    config = _oauth(
        make_config,
        oauth_broker,
        sasl_oauthbearer_token_endpoint_url=oauth_server.token_url,
        sasl_oauthbearer_client_id="odd",
        sasl_oauthbearer_client_secret="p%41ss",
        sasl_oauthbearer_header_urlencode=urlencode,
    )
    if urlencode:
        await (await _metadata(config)).close()
    else:
        client = KafkaClient(config)
        with pytest.raises(AuthenticationFailedError, match="invalid_client"):
            await asyncio.wait_for(client.start(), 20)
        await client.close()


async def test_aiokafka_program_with_its_token_provider(
    oauth_server: OAuthServer, oauth_broker: SaslBroker, new_topic: Callable[..., str]
) -> None:
    """aiokafka code moved to compat keeps its sasl_oauth_token_provider (aiokafka's base class)."""
    from aiokafka_lite.compat import AIOKafkaProducer

    class Provider(AbstractTokenProvider):
        async def token(self) -> str:
            data = await asyncio.to_thread(_fetch_directly, oauth_server, "app", "app-secret")
            return str(data["access_token"])

    producer = AIOKafkaProducer(
        bootstrap_servers=oauth_broker.bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="OAUTHBEARER",
        sasl_oauth_token_provider=Provider(),
    )
    await producer.start()
    try:
        metadata = await producer.send_and_wait(new_topic(), b"v")
        assert metadata.offset == 0
    finally:
        await producer.stop()

"""The ssl_* settings against real TLS terminators: CA file / PEM text, client certificates (mutual TLS,
stunnel ``requireCert`` / socat ``verify=1``), host name checks, and secrets kept out of sight."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from aiokafka_lite.config import COMMON, Config
from aiokafka_lite.errors import AuthenticationFailedError, ConfigError, KafkaConnectionError
from aiokafka_lite.net import KafkaClient
from aiokafka_lite.protocol.messages.metadata import MetadataRequest
from aiokafka_lite.testing.tls import TlsBroker, make_certificates, make_client_certificate

PASSWORD = "key-pass-Zq81"
#: stunnel refuses a client certificate with a TLS alert (AuthenticationFailedError); socat resets the
#: connection without one, which cannot be told from a broken network (KafkaConnectionError, with a hint).
REFUSED = (AuthenticationFailedError, KafkaConnectionError)


@pytest.fixture(scope="module", params=["stunnel", "socat"])
def mtls_broker(request: pytest.FixtureRequest) -> Iterator[TlsBroker]:
    """Tansu behind a terminator that requires a client certificate signed by its CA."""
    with TlsBroker(request.param, require_client_cert=True) as broker:
        yield broker


@pytest.fixture(scope="module")
def misnamed_broker() -> Iterator[TlsBroker]:
    """A broker whose certificate names only broker.example, reached at 127.0.0.1."""
    with TlsBroker("stunnel", san="DNS:broker.example") as broker:
        yield broker


async def _metadata(config: Config) -> None:
    async with KafkaClient(config) as client:
        (broker,) = client.cluster.brokers()
        response = await client.send(broker.node_id, MetadataRequest(topics=[]))  # a second connection
        assert response.cluster_id == "tansu_cluster"


async def _fails(config: Config, errors: Any = AuthenticationFailedError) -> str:
    client = KafkaClient(config)
    with pytest.raises(errors) as info:
        await client.start()
    await client.close()
    return str(info.value)


async def test_cafile_and_cadata(tls_broker: TlsBroker, make_config: Callable[..., Config]) -> None:
    ca = tls_broker.certs.ca_cert
    await _metadata(make_config(tls_broker.bootstrap, security_protocol="SSL", ssl_cafile=str(ca)))
    await _metadata(make_config(tls_broker.bootstrap, security_protocol="SSL", ssl_cadata=ca.read_text()))


async def test_untrusted_broker_names_broker_and_setting(
    tls_broker: TlsBroker, make_config: Callable[..., Config]
) -> None:
    """No CA given: the system trust store, which does not know the test CA."""
    message = await _fails(make_config(tls_broker.bootstrap, security_protocol="SSL"))
    assert tls_broker.bootstrap in message and "CERTIFICATE_VERIFY_FAILED" in message
    assert "set ssl_cafile or ssl_cadata" in message


@pytest.mark.parametrize("encrypted", [False, True])
async def test_mtls(mtls_broker: TlsBroker, make_config: Callable[..., Config], encrypted: bool) -> None:
    name = f"client-{'enc' if encrypted else 'plain'}"
    cert, key = make_client_certificate(mtls_broker.certs, name, PASSWORD if encrypted else None)
    config = make_config(
        mtls_broker.bootstrap,
        security_protocol="SSL",
        ssl_cafile=str(mtls_broker.certs.ca_cert),
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
        ssl_password=PASSWORD if encrypted else None,
    )
    await _metadata(config)


async def test_mtls_without_client_certificate(
    mtls_broker: TlsBroker, make_config: Callable[..., Config]
) -> None:
    ca = str(mtls_broker.certs.ca_cert)
    config = make_config(mtls_broker.bootstrap, security_protocol="SSL", ssl_cafile=ca)
    message = await _fails(config, REFUSED)
    assert mtls_broker.bootstrap in message and "client certificate" in message


async def test_mtls_client_certificate_from_another_ca(
    mtls_broker: TlsBroker, make_config: Callable[..., Config], tmp_path: Path
) -> None:
    stranger = make_certificates(tmp_path, name="stranger")
    cert, key = make_client_certificate(stranger, "stranger-client")
    config = make_config(
        mtls_broker.bootstrap,
        security_protocol="SSL",
        ssl_cafile=str(mtls_broker.certs.ca_cert),
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
    )
    message = await _fails(config, REFUSED)
    assert mtls_broker.bootstrap in message and "client certificate" in message


async def test_hostname_mismatch(
    misnamed_broker: TlsBroker, make_config: Callable[..., Config], caplog: pytest.LogCaptureFixture
) -> None:
    ca = str(misnamed_broker.certs.ca_cert)
    message = await _fails(make_config(misnamed_broker.bootstrap, security_protocol="SSL", ssl_cafile=ca))
    assert misnamed_broker.bootstrap in message and "does not name '127.0.0.1'" in message
    assert "ssl_endpoint_identification_algorithm=''" in message

    caplog.set_level(logging.WARNING, logger="aiokafka_lite")
    unchecked = make_config(
        misnamed_broker.bootstrap,
        security_protocol="SSL",
        ssl_cafile=ca,
        ssl_endpoint_identification_algorithm="",
    )
    await _metadata(unchecked)  # two connections, one warning
    warnings = [r for r in caplog.records if "ssl_endpoint_identification_algorithm" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING


async def test_secrets_never_shown(
    mtls_broker: TlsBroker, make_config: Callable[..., Config], caplog: pytest.LogCaptureFixture
) -> None:
    cert, key = make_client_certificate(mtls_broker.certs, "client-secret", PASSWORD)
    key_body = "".join(key.read_text().splitlines()[1:-1])[:40]  # a slice of the encrypted key's base64
    settings = dict(
        security_protocol="SSL",
        ssl_cafile=str(mtls_broker.certs.ca_cert),
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
        ssl_password=PASSWORD,
    )
    caplog.set_level(logging.DEBUG)
    config = make_config(mtls_broker.bootstrap, **settings)
    shown = [repr(config), str(config.as_dict())]
    await _metadata(config)
    with pytest.raises(ConfigError) as wrong:  # a wrong password: OpenSSL's reason, not the password
        KafkaClient(config.replace(ssl_password="not-" + PASSWORD))
    assert "bad decrypt" in str(wrong.value) or "could not be loaded" in str(wrong.value)
    with pytest.raises(ConfigError) as bad_type:
        make_config(mtls_broker.bootstrap, **{**settings, "ssl_password": [PASSWORD]})
    shown += [str(wrong.value), str(bad_type.value), *(r.getMessage() for r in caplog.records)]
    for text in shown:
        assert PASSWORD not in text and key_body not in text
    assert config.as_dict()["ssl_password"] == "***"


def test_bad_settings_are_config_errors(tmp_path: Path) -> None:
    certs = make_certificates(tmp_path)
    base = {"bootstrap_servers": "127.0.0.1:9", "security_protocol": "SSL"}
    cases = [
        ({"ssl_cafile": str(tmp_path / "missing.pem")}, "ssl_cafile"),
        ({"ssl_cadata": "not a certificate"}, "ssl_cadata"),
        ({"ssl_keyfile": str(certs.server_key)}, "ssl_keyfile' needs ssl_certfile"),
        ({"ssl_certfile": str(certs.server_cert), "ssl_keyfile": str(certs.ca_key)}, "ssl_certfile"),
        ({"ssl_context": certs.client_context(), "ssl_cafile": str(certs.ca_cert)}, "ssl_context cannot"),
        ({"ssl_context": certs.client_context(), "ssl_endpoint_identification_algorithm": ""},
         "ssl_context cannot"),
        ({"ssl_endpoint_identification_algorithm": "ldaps"}, "ssl_endpoint_identification_algorithm"),
    ]
    for extra, match in cases:
        with pytest.raises(ConfigError, match=match):
            KafkaClient(Config(COMMON, {**base, **extra}))

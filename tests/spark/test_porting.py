"""Spark Kafka jobs written for format("kafka") keep their Java-client ``kafka.*`` options (issue 16).

Option translation is checked on the parsed options; the end-to-end test writes and reads through
Spark against a broker that needs SASL (SCRAM, PLAIN) over TLS with a private CA (Tansu behind this
project's SASL front and stunnel4, see aiokafka_lite/testing), configured only with Java option names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from aiokafka_lite.errors import ConfigError
from aiokafka_lite.spark.options import parse_sink_options, parse_source_options
from aiokafka_lite.spark.porting import live_settings
from aiokafka_lite.testing.sasl_front import SaslBroker

pytestmark = pytest.mark.timeout(240)

USERS = {"spark-user": "s3cret \"quoted\""}
PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="{u}" password="{p}";'
SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="{u}" password="{p}";'


def _jaas(template: str, user: str = "spark-user") -> str:
    return template.format(u=user, p=USERS[user].replace('"', '\\"'))


def src(**opts: str) -> Any:
    return parse_source_options({"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t", **opts},
                                streaming=True)


def test_jaas_configs_become_sasl_settings() -> None:
    c = src(**{"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "SCRAM-SHA-512",
               "kafka.sasl.jaas.config": _jaas(SCRAM)}).client
    assert (c["sasl_mechanism"], c["sasl_plain_username"], c["sasl_plain_password"]) == (
        "SCRAM-SHA-512", "spark-user", 's3cret "quoted"')
    c = src(**{"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.jaas.config": _jaas(PLAIN)}).client
    assert (c["sasl_mechanism"], c["sasl_plain_username"]) == ("PLAIN", "spark-user")
    with pytest.raises(ConfigError, match=r"kafka.sasl.jaas.config.*OAuthBearerLoginModule.*PLAIN"):
        src(**{"kafka.sasl.mechanism": "PLAIN", "kafka.sasl.jaas.config": OAUTH})
    with pytest.raises(ConfigError, match=r"kafka.sasl.jaas.config.*SCRAM login module.*PLAIN"):
        src(**{"kafka.sasl.mechanism": "PLAIN", "kafka.sasl.jaas.config": _jaas(SCRAM)})
    with pytest.raises(ConfigError, match=r"kafka.sasl.jaas.config"):
        src(**{"kafka.sasl.jaas.config": "not a jaas line"})
    with pytest.raises(ConfigError, match=r"kafka.sasl.jaas.config.*com.example.Login"):
        src(**{"kafka.sasl.jaas.config": "com.example.Login required;"})
    # Spark options about its consumer cache and group ids are accepted and unused (docs/spark.md)
    src(**{"groupIdPrefix": "spark-kafka-source", "kafkaConsumer.cacheCapacity": "64", "kafka.group.id": "g"})


OAUTH = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="app" '
         'clientSecret="s3" scope="kafka" extension_logicalCluster="lkc-1";')


def test_oauthbearer_options_become_oauth_settings() -> None:
    """Java's KIP-768 client setup (login module options, token endpoint, its login handler class)."""
    c = src(**{"kafka.security.protocol": "SASL_SSL", "kafka.sasl.jaas.config": OAUTH,
               "kafka.sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
               "kafka.sasl.login.callback.handler.class":
                   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
               "kafka.sasl.login.read.timeout.ms": "5000"}).client
    assert (c["sasl_mechanism"], c["sasl_oauthbearer_client_id"], c["sasl_oauthbearer_client_secret"],
            c["sasl_oauthbearer_scope"], c["sasl_oauthbearer_extensions"], c["sasl_login_read_timeout_ms"],
            c["sasl_oauthbearer_token_endpoint_url"]) == (
        "OAUTHBEARER", "app", "s3", "kafka", {"logicalCluster": "lkc-1"}, 5000, "https://idp.example/token")
    c = src(**{"kafka.sasl.mechanism": "OAUTHBEARER",
               "kafka.sasl.oauthbearer.client.credentials.client.id": "app",  # KIP-1139's names
               "kafka.sasl.oauthbearer.assertion.private.key.file": "/k.pem"}).client
    assert c["sasl_oauthbearer_client_id"] == "app"
    assert c["sasl_oauthbearer_assertion_private_key_file"] == "/k.pem"
    for opts, match in (
            ({"kafka.sasl.oauthbearer.jwks.endpoint.url": "https://idp/jwks"}, "jwks.endpoint.url.*broker"),
            ({"kafka.sasl.login.callback.handler.class": "com.example.Handler"}, "callback.handler.class"),
            ({"kafka.sasl.jaas.config": OAUTH.replace("clientId", "unsecuredLoginStringClaim_sub")},
             "unsecured"),
            ({"kafka.sasl.jaas.config": OAUTH.replace("scope", "colour")}, "'colour' is not supported")):
        with pytest.raises(ConfigError, match=match):
            src(**opts)


def test_truststores_and_partitioners(tmp_path: Path) -> None:
    from aiokafka_lite.testing.tls import make_certificates

    certs = make_certificates(tmp_path)
    pem = certs.ca_cert.read_text()
    c = src(**{"kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.certificates": pem,
               "kafka.ssl.endpoint.identification.algorithm": ""}).client
    ctx = live_settings(c)["ssl_context"]
    assert ctx.check_hostname is False and len(ctx.get_ca_certs()) == 1
    c = src(**{"kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": str(certs.ca_cert),
               "kafka.ssl.truststore.password": "ignored-for-pem"}).client
    ctx = live_settings(c)["ssl_context"]
    assert ctx.check_hostname is True and len(ctx.get_ca_certs()) == 1
    assert live_settings(c)["ssl_context"] is ctx  # one context per CA: one cached client
    for opts, match in (({"kafka.ssl.truststore.type": "JKS"}, "needs ssl.truststore.location"),
                        ({"kafka.ssl.truststore.type": "BCFKS"}, "kafka.ssl.truststore.type"),
                        ({"kafka.ssl.truststore.location": str(tmp_path / "missing.pem")},
                         "kafka.ssl.truststore.location"),
                        ({"kafka.ssl.truststore.certificates": "garbage"},
                         "kafka.ssl.truststore.certificates"),
                        ({"kafka.ssl.keystore.location": "/x.jks"}, "kafka.ssl.keystore.location"),
                        ({"kafka.ssl.endpoint.identification.algorithm": "ldaps"},
                         "kafka.ssl.endpoint.identification.algorithm")):
        with pytest.raises(ConfigError, match=match):
            src(**opts)
    sink = {"kafka.bootstrap.servers": "127.0.0.1:1", "topic": "t"}
    for java, ours in (("org.apache.kafka.clients.producer.internals.DefaultPartitioner", "default"),
                       ("org.apache.kafka.clients.producer.RoundRobinPartitioner", "round_robin"),
                       ("org.apache.kafka.clients.producer.UniformStickyPartitioner", "uniform_sticky")):
        assert parse_sink_options({**sink, "kafka.partitioner.class": java}).client["partitioner"] == ours
    with pytest.raises(ConfigError, match=r"kafka.partitioner.class"):
        parse_sink_options({**sink, "kafka.partitioner.class": "com.example.MyPartitioner"})


KRB5 = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
        'keyTab="/etc/security/keytabs/spark.keytab" principal="spark/host@EXAMPLE.COM";')


def test_kerberos_jaas_becomes_gssapi_settings() -> None:
    c = src(**{"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.jaas.config": KRB5,
               "kafka.sasl.kerberos.service.name": "kafka-svc",
               "kafka.sasl.kerberos.min.time.before.relogin": "60000"}).client  # Java's relogin thread
    assert (c["sasl_mechanism"], c["sasl_kerberos_keytab"], c["sasl_kerberos_principal"],
            c["sasl_kerberos_service_name"]) == (
        "GSSAPI", "/etc/security/keytabs/spark.keytab", "spark/host@EXAMPLE.COM", "kafka-svc")
    cache = src(**{"kafka.sasl.mechanism": "GSSAPI", "kafka.sasl.jaas.config":
                   "com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;"}).client
    assert cache["sasl_mechanism"] == "GSSAPI" and cache.get("sasl_kerberos_keytab") is None
    for jaas, match in ((KRB5.replace('keyTab="/etc/security/keytabs/spark.keytab" ', ""), "needs keyTab"),
                        (KRB5.replace("storeKey=true", "clearPass=true"), "'clearPass' is not supported"),
                        ("com.sun.security.auth.module.Krb5LoginModule required;", "useTicketCache")):
        with pytest.raises(ConfigError, match=match):
            src(**{"kafka.sasl.jaas.config": jaas})
    with pytest.raises(ConfigError, match=r"Krb5LoginModule.*'PLAIN'"):
        src(**{"kafka.sasl.mechanism": "PLAIN", "kafka.sasl.jaas.config": KRB5})


def _stores(certs: Any, tmp_path: Path) -> dict[str, Path]:
    """A client certificate signed by ``certs``' CA, and Java stores of the CA (trust.*) and of the client
    key with its chain (client.*): PKCS12 written by cryptography, JKS converted from it by keytool."""
    import subprocess

    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, load_pem_private_key
    from cryptography.hazmat.primitives.serialization.pkcs12 import serialize_key_and_certificates

    from aiokafka_lite.testing.tls import make_client_certificate

    cert_path, key_path = make_client_certificate(certs)
    ca = x509.load_pem_x509_certificate(certs.ca_cert.read_bytes())
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    key: Any = load_pem_private_key(key_path.read_bytes(), None)
    enc = BestAvailableEncryption(b"changeit")
    files = {"trust.p12": serialize_key_and_certificates(b"ca", None, None, [ca], enc),
             "client.p12": serialize_key_and_certificates(b"client", key, cert, [ca], enc)}
    out = {}
    for name, data in files.items():
        out[name] = tmp_path / name
        out[name].write_bytes(data)
    jks = {"trust.jks": ["-importcert", "-file", str(certs.ca_cert), "-alias", "ca"],
           "client.jks": ["-importkeystore", "-srckeystore", str(out["client.p12"]),
                          "-srcstoretype", "PKCS12", "-srcstorepass", "changeit"]}
    for name, args in jks.items():
        out[name] = tmp_path / name
        subprocess.run(["keytool", *args, "-noprompt", "-keystore" if "-importcert" in args else
                        "-destkeystore", str(out[name]), "-storetype" if "-importcert" in args else
                        "-deststoretype", "JKS", "-storepass" if "-importcert" in args else "-deststorepass",
                        "changeit"], check=True, capture_output=True)
    return out


async def test_pkcs12_and_jks_stores_for_mutual_tls(tmp_path: Path) -> None:
    from aiokafka_lite.admin import Admin
    from aiokafka_lite.testing.tls import TlsBroker

    with TlsBroker(require_client_cert=True) as broker:
        files = _stores(broker.certs, tmp_path)
        for kind, ext in (("PKCS12", ".p12"), ("JKS", ".jks")):
            c = src(**{"kafka.bootstrap.servers": broker.bootstrap, "kafka.security.protocol": "SSL",
                       "kafka.ssl.truststore.type": kind, "kafka.ssl.truststore.password": "changeit",
                       "kafka.ssl.truststore.location": str(files["trust" + ext]),
                       "kafka.ssl.keystore.type": kind, "kafka.ssl.keystore.password": "changeit",
                       "kafka.ssl.keystore.location": str(files["client" + ext])}).client
            live = live_settings(c)
            async with Admin(bootstrap_servers=broker.bootstrap, security_protocol="SSL",
                             ssl_context=live["ssl_context"]) as admin:  # the broker demands our certificate
                assert isinstance(await admin.list_topics(), (set, list, dict))
    with pytest.raises(ConfigError, match=r"kafka.ssl.keystore.location.*PKCS12"):
        src(**{"kafka.ssl.keystore.location": str(files["client.p12"]), "kafka.ssl.keystore.password": "no"})
    with pytest.raises(ConfigError, match=r"kafka.ssl.truststore.location.*keytool"):
        src(**{"kafka.ssl.truststore.location": str(files["trust.jks"]),
               "kafka.ssl.truststore.password": "no"})
    with pytest.raises(ConfigError, match=r"kafka.ssl.keystore.key.*certificate.chain"):
        src(**{"kafka.ssl.keystore.key": "-----BEGIN PRIVATE KEY-----"})


@pytest.fixture(scope="module")
def sasl_ssl() -> Iterator[SaslBroker]:
    with SaslBroker(USERS, tls=True) as broker:
        yield broker


def test_java_options_end_to_end(spark: Any, sasl_ssl: SaslBroker, new_topic: Callable[..., str],
                                 tmp_path: Path) -> None:
    assert sasl_ssl.tls is not None
    ca = sasl_ssl.tls.certs.ca_cert
    topic = new_topic()
    java_scram = {"kafka.bootstrap.servers": sasl_ssl.bootstrap, "kafka.security.protocol": "SASL_SSL",
                  "kafka.sasl.mechanism": "SCRAM-SHA-256", "kafka.sasl.jaas.config": _jaas(SCRAM),
                  "kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.certificates": ca.read_text()}
    rows = [(f"k{i}", f"v{i}") for i in range(300)]
    (spark.createDataFrame(rows, "key string, value string").write.format("aiokafka_lite")
     .options(**java_scram, **{"kafka.partitioner.class":
                               "org.apache.kafka.clients.producer.RoundRobinPartitioner"})
     .option("topic", topic).mode("append").save())
    java_plain = {"kafka.bootstrap.servers": sasl_ssl.bootstrap, "kafka.security.protocol": "SASL_SSL",
                  "kafka.sasl.mechanism": "PLAIN", "kafka.sasl.jaas.config": _jaas(PLAIN),
                  "kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": str(ca),
                  "kafka.ssl.endpoint.identification.algorithm": "https"}
    got = (spark.read.format("aiokafka_lite").options(**java_plain).option("subscribe", topic).load()
           .selectExpr("cast(key as string) k", "cast(value as string) v", "partition").collect())
    assert sorted((r.k, r.v) for r in got) == sorted(rows)
    assert len({r.partition for r in got}) > 1  # round robin spread the keyed rows (Tansu: 4 partitions)
    wrong = {**java_plain, "kafka.sasl.jaas.config": _jaas(PLAIN).replace("spark-user", "nobody")}
    with pytest.raises(Exception, match=r"(?i)auth"):
        spark.read.format("aiokafka_lite").options(**wrong).option("subscribe", topic).load().collect()

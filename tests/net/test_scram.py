"""The SCRAM and PLAIN clients, driven directly: RFC 5802 / RFC 7677 vectors and hostile servers."""

from __future__ import annotations

import base64

import pytest
from scramp import ScramMechanism

from aiokafka_lite.errors import AuthenticationFailedError, ConfigError
from aiokafka_lite.net.scram import PlainClient, ScramClient, make_sasl_client


def test_rfc5802_sha1_vector() -> None:
    client = ScramClient("SCRAM-SHA-1", "user", "pencil", nonce="fyko+d2lbbFgONRv9qkxdawL")
    assert client.first() == b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"
    final = client.step(b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096")
    assert final == b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="
    assert client.step(b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ=") is None
    assert client.done


def test_rfc7677_sha256_vector() -> None:
    client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert client.first() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    final = client.step(
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert final == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert client.step(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") is None
    assert client.done


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("user", ["alice", "we=ird,name"])
def test_against_scramp_server(mechanism: str, user: str) -> None:
    """An independent server implementation accepts our proofs and we accept its signature."""
    scram = ScramMechanism(mechanism)
    info = scram.make_auth_info("s3cret", iteration_count=4096)
    seen: list[str] = []

    def auth_fn(name: str) -> tuple[bytes, bytes, bytes, int]:
        seen.append(name)
        return info

    server = scram.make_server(auth_fn)
    client = ScramClient(mechanism, user, "s3cret")
    server.set_client_first(client.first().decode())
    final = client.step(server.get_server_first().encode())
    assert final is not None
    server.set_client_final(final.decode())
    assert client.step(server.get_server_final().encode()) is None
    assert seen == [user]  # escaping (=3D, =2C) undone by the server


def _server_first(client: ScramClient, suffix: str = "xyz", salt: bytes = b"salt", i: int = 4096) -> bytes:
    nonce = client.first().decode().split("r=", 1)[1]
    return f"r={nonce}{suffix},s={base64.b64encode(salt).decode()},i={i}".encode()


def test_wrong_server_signature_is_refused() -> None:
    client = ScramClient("SCRAM-SHA-256", "u", "p")
    assert client.step(_server_first(client)) is not None
    with pytest.raises(AuthenticationFailedError, match="signature is wrong"):
        client.step(b"v=" + base64.b64encode(b"\0" * 32))


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (b"e=unknown-user", "server refused: unknown-user"),
        (b"r=someone-elses-nonce,s=c2FsdA==,i=4096", "nonce"),
        (b"garbage", "malformed"),
        (b"s=c2FsdA==,i=4096", "lacks r, s or i"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_bad_server_first(message: bytes, match: str) -> None:
    client = ScramClient("SCRAM-SHA-512", "u", "p")
    client.first()
    with pytest.raises(AuthenticationFailedError, match=match):
        client.step(message)


@pytest.mark.parametrize("iterations", [1, 4095, 10_000_000])
def test_iteration_count_bounds(iterations: int) -> None:
    client = ScramClient("SCRAM-SHA-256", "u", "p")
    with pytest.raises(AuthenticationFailedError, match="iteration count"):
        client.step(_server_first(client, i=iterations))


def test_server_final_error() -> None:
    client = ScramClient("SCRAM-SHA-256", "u", "p")
    client.step(_server_first(client))
    with pytest.raises(AuthenticationFailedError, match="invalid-proof"):
        client.step(b"e=invalid-proof")


def test_plain_and_factory() -> None:
    assert PlainClient("u", "pw").first() == b"\0u\0pw"
    assert isinstance(make_sasl_client("SCRAM-SHA-512", "u", "p"), ScramClient)
    with pytest.raises(ConfigError, match="sasl_plain_username"):
        make_sasl_client("PLAIN", None, "x")
    with pytest.raises(AuthenticationFailedError, match="NUL"):
        PlainClient("u\0", "p")
    with pytest.raises(AuthenticationFailedError, match="unsupported SCRAM"):
        ScramClient("SCRAM-MD5", "u", "p")

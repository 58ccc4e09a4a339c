"""SCRAM users (KIP-554). Tansu 0.6 accepts AlterUserScramCredentials but answers
DescribeUserScramCredentials with a null result array (undecodable), and it cannot log a user in
without --authentication, where it closes every connection before one can create the first user
(shared/brokers.md); noida-db offers neither API. So the login round trip runs against an independent
SCRAM server (scramp) holding exactly what our request carried: the user created with
alter_user_scram_credentials then logs in with our SASL client."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections.abc import Callable

import pytest
from _admin_fake import NO_TAGS, carray, cstr, fake_admin, i8, i32, next_call, uvarint
from scramp import ScramException, ScramMechanism

from aiokafka_lite import TopicPartition, errors
from aiokafka_lite.admin import (
    Admin,
    ScramCredentialInfo,
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
)
from aiokafka_lite.embedded import EmbeddedBroker
from aiokafka_lite.net.scram import ScramClient
from aiokafka_lite.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    AlterUserScramCredentialsResult,
)
from aiokafka_lite.protocol.messages.describe_user_scram_credentials import (
    CredentialInfo,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    DescribeUserScramCredentialsResult,
)

TP = TopicPartition("t", 0)
SALT = b"0123456789abcdef0123456789abcdef"


def _cbytes(b: bytes) -> bytes:
    return uvarint(len(b) + 1) + b


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_user_created_then_logs_in(mechanism: str) -> None:
    admin, client = fake_admin({TP: 1})
    task = asyncio.ensure_future(admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion("alice", "s3cret", mechanism, iterations=8192)]))
    call = await next_call(client, AlterUserScramCredentialsRequest)
    (up,) = call.request.upsertions
    assert (up.name, up.iterations, len(up.salt)) == ("alice", 8192, 32)
    assert b"s3cret" not in call.request.encode(0)  # only the salted password travels
    call.reply(AlterUserScramCredentialsResponse(results=[
        AlterUserScramCredentialsResult(user="alice", error_code=0, error_message=None)]))
    await task

    # A server that stores what the broker would have stored (KIP-554: salt, iterations, salted password).
    digest = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}[mechanism]
    stored_key = digest(hmac.new(up.salted_password, b"Client Key", digest).digest()).digest()
    server_key = hmac.new(up.salted_password, b"Server Key", digest).digest()
    server = ScramMechanism(mechanism).make_server(lambda user: (up.salt, stored_key, server_key, 8192))
    login = ScramClient(mechanism, "alice", "s3cret")
    server.set_client_first(login.first().decode())
    final = login.step(server.get_server_first().encode())
    assert final is not None
    server.set_client_final(final.decode())  # raises if the proof does not match
    assert login.step(server.get_server_final().encode()) is None

    wrong = ScramClient(mechanism, "alice", "guess")
    server = ScramMechanism(mechanism).make_server(lambda user: (up.salt, stored_key, server_key, 8192))
    server.set_client_first(wrong.first().decode())
    wrong_final = wrong.step(server.get_server_first().encode())
    assert wrong_final is not None
    with pytest.raises(ScramException, match=r"(?i)proof|password|invalid"):
        server.set_client_final(wrong_final.decode())


async def test_alter_bytes_follow_the_spec() -> None:
    admin, client = fake_admin({TP: 1})
    task = asyncio.ensure_future(admin.alter_user_scram_credentials([
        UserScramCredentialDeletion("bob", "SCRAM-SHA-512"),
        UserScramCredentialUpsertion("alice", "pw", "SCRAM-SHA-256", 4096, salt=SALT)]))
    call = await next_call(client, AlterUserScramCredentialsRequest)
    salted = hashlib.pbkdf2_hmac("sha256", b"pw", SALT, 4096)
    # AlterUserScramCredentialsRequest.json v0 (flexible): deletions[compact name, int8 mechanism, tags],
    # upsertions[compact name, int8 mechanism, int32 iterations, compact bytes salt, compact bytes
    # salted password, tags], tags.
    assert call.request.encode(0) == (
        carray([cstr("bob") + i8(2) + NO_TAGS])
        + carray([cstr("alice") + i8(1) + i32(4096) + _cbytes(SALT) + _cbytes(salted) + NO_TAGS]) + NO_TAGS)
    call.reply(AlterUserScramCredentialsResponse(results=[
        AlterUserScramCredentialsResult(user="bob", error_code=0, error_message=None),
        AlterUserScramCredentialsResult(user="alice", error_code=errors.UnacceptableCredentialError.errno,
                                        error_message="too short")]))
    with pytest.raises(errors.UnacceptableCredentialError, match="user 'alice': too short"):
        await task


async def test_describe_users() -> None:
    admin, client = fake_admin({TP: 1})
    task = asyncio.ensure_future(admin.describe_user_scram_credentials(["alice", "carol"]))
    call = await next_call(client, DescribeUserScramCredentialsRequest)
    assert call.request.encode(0) == carray([cstr("alice") + NO_TAGS, cstr("carol") + NO_TAGS]) + NO_TAGS
    call.reply(DescribeUserScramCredentialsResponse(error_code=0, error_message=None, results=[
        DescribeUserScramCredentialsResult(user="alice", error_code=0, error_message=None, credential_infos=[
            CredentialInfo(mechanism=2, iterations=8192), CredentialInfo(mechanism=1, iterations=4096)]),
        DescribeUserScramCredentialsResult(user="carol", error_code=errors.ResourceNotFoundError.errno,
                                           error_message="no credentials", credential_infos=[])]))
    with pytest.raises(errors.ResourceNotFoundError, match="user 'carol'"):
        await task

    task = asyncio.ensure_future(admin.describe_user_scram_credentials())
    call = await next_call(client, DescribeUserScramCredentialsRequest)
    assert call.request.users is None
    call.reply(DescribeUserScramCredentialsResponse(error_code=0, error_message=None, results=[
        DescribeUserScramCredentialsResult(user="alice", error_code=0, error_message=None, credential_infos=[
            CredentialInfo(mechanism=1, iterations=4096)])]))
    assert await task == {"alice": UserScramCredentialsDescription(
        "alice", (ScramCredentialInfo("SCRAM-SHA-256", 4096),))}


async def test_bad_alterations_refused_before_sending() -> None:
    admin, client = fake_admin({TP: 1})
    with pytest.raises(errors.IllegalArgumentError, match="SCRAM-MD5"):
        await admin.alter_user_scram_credentials([UserScramCredentialUpsertion("a", "pw", "SCRAM-MD5")])
    with pytest.raises(errors.IllegalArgumentError, match=r"iterations must be 4096\.\.16384"):
        await admin.alter_user_scram_credentials([UserScramCredentialUpsertion("a", "pw", iterations=10)])
    assert client.calls == []


async def test_tansu_accepts_credentials_but_cannot_describe_them(tansu: EmbeddedBroker,
                                                                 new_topic: Callable[..., str]) -> None:
    user = new_topic("user")
    async with Admin(bootstrap_servers=tansu.bootstrap) as admin:
        await admin.alter_user_scram_credentials([UserScramCredentialUpsertion(user, "s3cret")])
        await admin.alter_user_scram_credentials([UserScramCredentialDeletion(user)])
        with pytest.raises(errors.ProtocolError, match="results is null"):
            await admin.describe_user_scram_credentials([user])

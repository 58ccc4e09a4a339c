"""SCRAM users (KIP-554): describe_user_scram_credentials and alter_user_scram_credentials. Kafka's
brokers forward both to the controller, so any broker is asked. The password never leaves the client:
it is salted and hashed here (PBKDF2, RFC 5802's Hi) and the broker stores the salted password."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from typing import Any

from .. import errors
from ..net.scram import MIN_ITERATIONS, SCRAM_HASHES
from ..protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)
from ..protocol.messages.describe_user_scram_credentials import DescribeUserScramCredentialsRequest, UserName
from ._core import AdminCore, broker_error
from .types import (
    SCRAM_MECHANISMS,
    ScramCredentialInfo,
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
)

__all__ = ["ScramOps", "salted_password"]

#: Kafka's bound on SCRAM iterations (ScramMechanism.maxIterations).
MAX_ITERATIONS = 16384
_SALT_BYTES = 32


def _mechanism(name: str) -> int:
    if name not in SCRAM_MECHANISMS:
        raise errors.IllegalArgumentError(
            f"unknown SCRAM mechanism {name!r}; expected {' or '.join(SCRAM_MECHANISMS)}")
    return SCRAM_MECHANISMS[name]


def _mechanism_name(code: int) -> str:
    return next((n for n, c in SCRAM_MECHANISMS.items() if c == code), str(code))


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """RFC 5802's SaltedPassword, Hi(password, salt, i), with the password's UTF-8 bytes as Kafka uses."""
    return hashlib.pbkdf2_hmac(SCRAM_HASHES[mechanism], password.encode(), salt, iterations)


def _check_user(user: Any) -> str:
    if not isinstance(user, str) or not user:
        raise errors.IllegalArgumentError(f"a user name must be a non-empty str, got {user!r}")
    return user


class ScramOps(AdminCore):
    """describe_user_scram_credentials, alter_user_scram_credentials."""

    async def describe_user_scram_credentials(self, users: Iterable[str] | None = None
                                              ) -> dict[str, UserScramCredentialsDescription]:
        """The SCRAM mechanisms and iteration counts of ``users`` (every user with a credential when
        None). A named user without credentials raises ResourceNotFoundError naming them."""
        names = None if users is None else list(dict.fromkeys(_check_user(u) for u in users))
        if names == []:
            return {}
        key = "*"

        async def attempt(pending: list[str]) -> dict[str, Any]:
            node = await self.client.any_ready_node()
            response = await self._send(node, DescribeUserScramCredentialsRequest(
                users=None if names is None else [UserName(name=n) for n in names]))
            if response.error_code:
                return {key: broker_error(response.error_code, "DescribeUserScramCredentials",
                                          response.error_message)}
            found: dict[str, Any] = {}
            for r in response.results:
                found[r.user] = (broker_error(r.error_code, f"user {r.user!r}", r.error_message)
                                 if r.error_code else UserScramCredentialsDescription(r.user, tuple(sorted(
                                     ScramCredentialInfo(_mechanism_name(c.mechanism), c.iterations)
                                     for c in r.credential_infos))))
            return {key: found}

        results = await self._retrying([key], attempt, what="DescribeUserScramCredentials")
        self._raise_first(results, [key])
        found: dict[str, Any] = results[key]
        order = names if names is not None else sorted(found)
        missing = [n for n in order if n not in found]
        if missing:
            raise errors.ProtocolError(f"DescribeUserScramCredentials left out {missing!r}")
        self._raise_first(found, order)
        return {n: found[n] for n in order}

    async def alter_user_scram_credentials(
        self, alterations: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion],
    ) -> None:
        """Create, replace or delete SCRAM credentials; raises the first user's error, naming them."""
        upserts: list[ScramCredentialUpsertion] = []
        deletes: list[ScramCredentialDeletion] = []
        users: list[str] = []
        for a in alterations:
            user = _check_user(a.user)
            if isinstance(a, UserScramCredentialUpsertion):
                if not isinstance(a.iterations, int) or not MIN_ITERATIONS <= a.iterations <= MAX_ITERATIONS:
                    raise errors.IllegalArgumentError(
                        f"user {user!r}: iterations must be {MIN_ITERATIONS}..{MAX_ITERATIONS}, "
                        f"got {a.iterations!r}")
                if not isinstance(a.password, str) or not a.password:
                    raise errors.IllegalArgumentError(f"user {user!r}: the password must be a non-empty str")
                salt = a.salt if a.salt is not None else os.urandom(_SALT_BYTES)
                upserts.append(ScramCredentialUpsertion(
                    name=user, mechanism=_mechanism(a.mechanism), iterations=a.iterations, salt=salt,
                    salted_password=salted_password(a.mechanism, a.password, salt, a.iterations)))
            elif isinstance(a, UserScramCredentialDeletion):
                deletes.append(ScramCredentialDeletion(name=user, mechanism=_mechanism(a.mechanism)))
            else:
                raise errors.IllegalArgumentError(
                    f"expected UserScramCredentialUpsertion or UserScramCredentialDeletion, got {a!r}")
            users.append(user)
        users = list(dict.fromkeys(users))
        if not users:
            return

        async def attempt(pending: list[str]) -> dict[str, Any]:
            node = await self.client.any_ready_node()
            response = await self._send(node, AlterUserScramCredentialsRequest(
                deletions=[d for d in deletes if d.name in pending],
                upsertions=[u for u in upserts if u.name in pending]))
            return {r.user: (broker_error(r.error_code, f"user {r.user!r}", r.error_message)
                             if r.error_code else None) for r in response.results}

        results = await self._retrying(users, attempt, what="AlterUserScramCredentials")
        self._raise_first(results, users)

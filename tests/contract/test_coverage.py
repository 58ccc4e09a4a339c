"""Every public coroutine of the four clients has its row in the contract suite: a new one without a row
fails here (introspected, so the tables cannot silently fall behind the API)."""

from __future__ import annotations

import inspect

import pytest
import test_admin_contract
import test_consumer_contract
import test_producer_contract
import test_share_contract

from aiokafka_lite import Admin, Consumer, Producer, ShareConsumer

#: The async protocol methods count as public calls too (``async with``, ``async for``).
PROTOCOL = ("__aenter__", "__aexit__", "__anext__")


def public_coroutines(cls: type) -> set[str]:
    names = set()
    for name in dir(cls):
        if name.startswith("_") and name not in PROTOCOL:
            continue
        if inspect.iscoroutinefunction(getattr(cls, name)):
            names.add(name)
    return names


@pytest.mark.parametrize(("cls", "covered"), [
    (Producer, test_producer_contract.COVERED),
    (Consumer, test_consumer_contract.COVERED),
    (ShareConsumer, test_share_contract.COVERED),
    (Admin, test_admin_contract.COVERED),
], ids=lambda v: v.__name__ if isinstance(v, type) else "")
def test_every_public_coroutine_has_a_contract_row(cls: type, covered: frozenset[str]) -> None:
    missing = public_coroutines(cls) - covered
    assert not missing, f"{cls.__name__}: no contract row for {sorted(missing)} (tests/contract/)"
    assert public_coroutines(cls) >= {"start", "stop", "__aenter__", "__aexit__"}

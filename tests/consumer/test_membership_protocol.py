"""Group membership by composition: the one membership (membership.GroupMembership) asks its protocol's
strategy (classic or KIP-848) only what the narrow GroupProtocol names, and both strategies offer all of
it (mypy checks the signatures where the consumer makes them)."""

from __future__ import annotations

import inspect
import re

from aiokafka_lite.consumer import membership
from aiokafka_lite.consumer.coordinator import ClassicProtocol
from aiokafka_lite.consumer.group848 import KIP848Protocol
from aiokafka_lite.consumer.membership import GroupProtocol


def test_the_membership_asks_its_protocol_only_through_group_protocol() -> None:
    used = set(re.findall(r"self\.protocol\.(\w+)", inspect.getsource(membership.GroupMembership)))
    allowed = {n for n in dir(GroupProtocol) if not n.startswith("_")} | set(GroupProtocol.__annotations__)
    assert used and used <= allowed, used - allowed
    for impl in (ClassicProtocol, KIP848Protocol):
        # generation and member_id are instance attributes, set in __init__
        assert allowed - {"generation", "member_id"} <= set(dir(impl)), impl
        assert not issubclass(impl, membership.GroupMembership), impl

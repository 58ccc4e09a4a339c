"""Group membership by composition: the one membership (membership.GroupMembership) asks its protocol's
strategy (classic or KIP-848) only what the narrow GroupProtocol names, and both strategies offer all of
it (mypy checks the signatures where the consumer makes them)."""

from __future__ import annotations

import inspect
import re

from aiokafka_lite.consumer import consumer, coordinator, group848, membership
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
        # The membership's ``protocol`` is the strategy, which has no ``protocol`` of its own (it read
        # as membership.protocol.protocol; the classic strategy's is rebalance_protocol).
        source = inspect.getsource(impl)
        assert not re.search(r"self\.protocol\b", source), impl
        # Settings the membership holds are read from it (self._m), not copied into each strategy.
        assert not re.search(r"self\.(_?request_timeout|group_instance_id)\b", source), impl


def test_the_consumer_asks_the_group_only_through_the_membership() -> None:
    """The consumer talks to its GroupMembership, never past it to the strategy (the start-time broker
    check is GroupProtocol.check_broker, a no-op for classic)."""
    source = inspect.getsource(consumer)
    assert "_coordinator." in source
    assert not re.search(r"_coordinator\.protocol\b", source)


def test_lost_partitions_change_only_through_the_membership() -> None:
    """One owner for the partitions waiting to be reported lost: the strategies mark, forget or hand them
    over through GroupMembership's methods (mark_lost, forget_lost, lose_partitions), never by assigning
    to the set."""
    lost = membership.GroupMembership.lost
    assert isinstance(lost, property) and lost.fset is None
    for module in (coordinator, group848):
        source = inspect.getsource(module)
        assert not re.search(r"\.lost\s*(\|=|-=|&=|=(?!=))|\._lost\b", source), module.__name__

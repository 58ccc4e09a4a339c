"""Partition assignors by protocol name, and the rebalance protocol a list of them implies."""

from __future__ import annotations

from collections.abc import Iterable

from ...errors import ConfigError
from .base import Assignor, GroupMember, RebalanceProtocol
from .range import RangeAssignor
from .roundrobin import RoundRobinAssignor
from .sticky import CooperativeStickyAssignor, StickyAssignor

ASSIGNORS: dict[str, type[Assignor]] = {
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "sticky": StickyAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
}
_ALIASES = {"round_robin": "roundrobin", "cooperative_sticky": "cooperative-sticky",
            "cooperativesticky": "cooperative-sticky"}


def make_assignors(strategies: Iterable[object]) -> list[Assignor]:
    """Instances for ``partition_assignment_strategy``: names, Assignor classes or instances."""
    out: list[Assignor] = []
    for s in strategies:
        if isinstance(s, Assignor):
            out.append(s)
        elif isinstance(s, type) and issubclass(s, Assignor):
            out.append(s())
        elif isinstance(s, str):
            key = s.strip().lower()
            key = _ALIASES.get(key, key)
            if key not in ASSIGNORS:
                raise ConfigError(f"setting 'partition_assignment_strategy': unknown assignor {s!r}; "
                                  f"choose from {sorted(ASSIGNORS)}")
            out.append(ASSIGNORS[key]())
        else:
            raise ConfigError(f"setting 'partition_assignment_strategy': {s!r} is not an assignor")
    if not out:
        raise ConfigError("setting 'partition_assignment_strategy' names no assignor")
    names = [a.name for a in out]
    if len(set(names)) != len(names):
        raise ConfigError(f"setting 'partition_assignment_strategy' repeats an assignor: {names}")
    return out


def rebalance_protocol(assignors: Iterable[Assignor]) -> RebalanceProtocol:
    """The newest protocol every configured assignor supports (as the Java client decides).

    The default ["range", "roundrobin", "cooperative-sticky"] therefore rebalances eagerly: that is the
    safe first step of a rolling upgrade to cooperative rebalancing; list only "cooperative-sticky"
    for KIP-429.
    """
    common: set[RebalanceProtocol] | None = None
    for a in assignors:
        s = set(a.supported_protocols)
        common = s if common is None else common & s
    if not common:
        raise ConfigError(
            "setting 'partition_assignment_strategy': the assignors share no rebalance protocol")
    return max(common)


__all__ = [
    "ASSIGNORS",
    "Assignor",
    "CooperativeStickyAssignor",
    "GroupMember",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "StickyAssignor",
    "make_assignors",
    "rebalance_protocol",
]

"""Where a config request goes: a broker's configs are that broker's own, so a broker resource (named by
its node id) is asked of that node; topic configs of any broker. Shared by DescribeConfigs and
IncrementalAlterConfigs."""

from __future__ import annotations

from collections.abc import Iterable

from .. import errors
from .types import ConfigResource

__all__ = ["by_node", "config_routes"]

_BROKER_TYPES = (4, 8)  # BROKER, BROKER_LOGGER


def config_routes(resources: Iterable[ConfigResource]) -> dict[ConfigResource, int | None]:
    """The node each resource must be asked of (None: any broker)."""
    routes: dict[ConfigResource, int | None] = {}
    for r in resources:
        routes[r] = None
        if r.type_code in _BROKER_TYPES and r.name:
            try:
                routes[r] = int(r.name)
            except ValueError:
                raise errors.IllegalArgumentError(
                    f"a broker resource is named by its node id, got {r.name!r}") from None
    return routes


def by_node(pending: Iterable[ConfigResource], routes: dict[ConfigResource, int | None]
            ) -> dict[int | None, list[ConfigResource]]:
    """``pending`` grouped by the node that must answer for them."""
    groups: dict[int | None, list[ConfigResource]] = {}
    for r in pending:
        groups.setdefault(routes[r], []).append(r)
    return groups

"""The consumer: subscription state, fetcher, group coordinator, assignors and the public Consumer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .assignors import (
    Assignor,
    CooperativeStickyAssignor,
    RangeAssignor,
    RebalanceProtocol,
    RoundRobinAssignor,
    StickyAssignor,
)
from .listener import ConsumerRebalanceListener

if TYPE_CHECKING:  # type checkers see the real class; at run time it is imported on first use
    from .consumer import Consumer

__all__ = [
    "Assignor",
    "Consumer",
    "ConsumerRebalanceListener",
    "CooperativeStickyAssignor",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "StickyAssignor",
]


def __getattr__(name: str) -> Any:
    # The Consumer pulls in the network layer; importing the assignors alone should not.
    if name == "Consumer":
        from .consumer import Consumer

        return Consumer
    raise AttributeError(f"module 'aiokafka_lite.consumer' has no attribute {name!r}")

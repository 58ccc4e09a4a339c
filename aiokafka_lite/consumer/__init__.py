"""The consumer: subscription state, fetcher, group coordinator, assignors and the public Consumer."""

from __future__ import annotations

from typing import Any

from .assignors import (
    Assignor,
    CooperativeStickyAssignor,
    RangeAssignor,
    RebalanceProtocol,
    RoundRobinAssignor,
    StickyAssignor,
)
from .listener import ConsumerRebalanceListener

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

"""Callbacks that do not keep their client alive.

A started client hands bound methods to what outlives a single call (its metrics task, its network
client's metadata listeners, its sender). Held strongly, they keep a client the user dropped without
``stop()`` alive until the loop ends, so it is neither collected nor warned about. Through
:func:`weak_method` the client is collected when the user drops it; the callback then does nothing.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import ParamSpec

P = ParamSpec("P")

__all__ = ["weak_method"]


def weak_method(method: Callable[P, None]) -> Callable[P, None]:
    """``method`` (a bound method returning None) called through a weak reference to its object."""
    ref = weakref.WeakMethod(method)

    def call(*args: P.args, **kwargs: P.kwargs) -> None:
        bound = ref()
        if bound is not None:
            bound(*args, **kwargs)

    return call

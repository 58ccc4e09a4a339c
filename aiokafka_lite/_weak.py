"""Callbacks that do not keep their client alive.

A started client hands bound methods to what outlives a single call (its metrics task, its network
client's metadata listeners, its sender). Held strongly, they keep a client the user dropped without
``stop()`` alive until the loop ends, so it is neither collected nor warned about. Through
:func:`weak_method` the client is collected when the user drops it; the callback then does nothing.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from types import MethodType
from typing import ParamSpec

P = ParamSpec("P")

__all__ = ["weak_method"]


def weak_method(method: Callable[P, None]) -> Callable[P, None]:
    """``method`` (a bound method returning None) called through a weak reference to its object.

    The object is held weakly, its function (a class attribute) strongly: unlike ``weakref.WeakMethod``,
    a call makes no bound method and runs no Python-level ``__call__`` (the producer calls one per batch).
    """
    if not isinstance(method, MethodType):
        raise TypeError(f"weak_method needs a bound method, not {method!r}")
    ref = weakref.ref(method.__self__)
    func = method.__func__

    def call(*args: P.args, **kwargs: P.kwargs) -> None:
        obj = ref()
        if obj is not None:
            func(obj, *args, **kwargs)

    return call

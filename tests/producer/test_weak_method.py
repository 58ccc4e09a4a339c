"""The producer's callbacks (``_weak.weak_method``: guard, on_fatal, on_ack, the metadata listener) reach
their object while it lives, with every argument, and neither keep it alive nor fail once it is gone."""

from __future__ import annotations

import gc
import weakref

import pytest

from aiokafka_lite._weak import weak_method


class _Target:
    def __init__(self) -> None:
        self.calls: list[tuple[object, object]] = []

    def hit(self, x: object, *, y: object = None) -> None:
        self.calls.append((x, y))


def test_a_weak_method_calls_its_object_and_lets_it_go() -> None:
    target = _Target()
    call = weak_method(target.hit)
    call(1, y=2)
    call("a")
    assert target.calls == [(1, 2), ("a", None)]
    ref = weakref.ref(target)
    del target
    gc.collect()
    assert ref() is None  # the callback held it only weakly
    call(3)  # and does nothing now


def test_a_weak_method_needs_a_bound_method() -> None:
    with pytest.raises(TypeError):
        weak_method(print)  # type: ignore[arg-type]

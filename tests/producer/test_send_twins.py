"""The compiled send fast path (_send.pyx) and its pure-Python twin (_send_py.py) hold the same state with
the same defaults and offer the same methods, so AIOKAFKA_LITE_PURE=1 exercises what users run."""
from __future__ import annotations

import importlib

import pytest

from aiokafka_lite.producer import _send_py

_FIELDS = ("_state", "_plain", "_topics", "_batches", "_key_hash", "_sticky_null", "_txn", "_size_fast_limit")
_INFO = ("topic", "partitions", "num_partitions", "available", "tps", "sticky_partition", "sticky_produced",
         "deques")


def _compiled() -> object:
    # The compiled module must be built in this tree (setup.py build_ext --inplace); no skip.
    return importlib.import_module("aiokafka_lite.producer._send")


def test_send_core_twins_agree() -> None:
    compiled = _compiled()
    cc, pc = compiled.SendCore(), _send_py.SendCore()  # type: ignore[attr-defined]
    for name in _FIELDS:
        assert getattr(cc, name) == getattr(pc, name), name
    for name in ("send", "_send_slow"):
        assert callable(getattr(cc, name)) and callable(getattr(pc, name)), name


@pytest.mark.parametrize(("partitions", "available"), [([0, 1, 2], [0, 2]), ([], []), ([3, 0], [3])])
def test_topic_info_twins_agree(partitions: list[int], available: list[int]) -> None:
    compiled = _compiled()
    ci = compiled.TopicInfo("t", partitions, available)  # type: ignore[attr-defined]
    pi = _send_py.TopicInfo("t", partitions, available)
    for name in _INFO:
        assert getattr(ci, name) == getattr(pi, name), name

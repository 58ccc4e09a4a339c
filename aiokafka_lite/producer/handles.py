"""Per-record handles and per-batch results (``_handles.py``): compiled when built, else run as Python.

``AIOKAFKA_LITE_PURE=1`` (or ``AIOKAFKA_LITE_NO_EXT=1``) runs the Python source everywhere (the
package's one switch, ``aiokafka_lite._native.PURE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._native import PURE, pure_module

if TYPE_CHECKING or not PURE:
    # Compiled when built (the import system prefers the extension), else the same source as Python.
    from ._handles import BatchResult, RecordFuture, failed_future, make_future
else:
    _impl = pure_module(f"{__package__}._handles")
    BatchResult, RecordFuture = _impl.BatchResult, _impl.RecordFuture
    failed_future, make_future = _impl.failed_future, _impl.make_future

__all__ = ["PURE", "BatchResult", "RecordFuture", "failed_future", "make_future"]

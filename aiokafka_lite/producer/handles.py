"""Per-record handles and per-batch results: the compiled module when built, else ``_handles_py``.

``AIOKAFKA_LITE_PURE=1`` (or ``AIOKAFKA_LITE_NO_EXT=1``) forces the pure-Python twins everywhere (the
package's one switch, ``aiokafka_lite._native.PURE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._native import PURE

if TYPE_CHECKING:
    from ._handles_py import BatchResult, RecordFuture, failed_future, make_future
elif PURE:
    from ._handles_py import BatchResult, RecordFuture, failed_future, make_future
else:
    try:
        from ._handles import BatchResult, RecordFuture, failed_future, make_future
    except ImportError:
        from ._handles_py import BatchResult, RecordFuture, failed_future, make_future

__all__ = ["PURE", "BatchResult", "RecordFuture", "failed_future", "make_future"]

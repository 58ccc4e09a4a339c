"""The send() fast path and TopicInfo (``_send.py``): compiled when built, else run as Python.

``AIOKAFKA_LITE_PURE=1`` (or ``AIOKAFKA_LITE_NO_EXT=1``) runs the Python source everywhere (the
package's one switch, ``aiokafka_lite._native.PURE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._native import PURE, is_compiled, pure_module

if TYPE_CHECKING or not PURE:
    # Compiled when built (the import system prefers the extension), else the same source as Python.
    from . import _send as _impl
    from ._send import RUNNING, YIELD_BYTES, BatchHead, SendCore, TopicInfo
else:
    _impl = pure_module(f"{__package__}._send")
    RUNNING, YIELD_BYTES = _impl.RUNNING, _impl.YIELD_BYTES
    BatchHead, SendCore, TopicInfo = _impl.BatchHead, _impl.SendCore, _impl.TopicInfo

#: True when the compiled fast path is in use.
COMPILED = is_compiled(_impl)

__all__ = ["COMPILED", "RUNNING", "YIELD_BYTES", "BatchHead", "SendCore", "TopicInfo"]

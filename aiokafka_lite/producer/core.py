"""The send() fast path and TopicInfo: the compiled module when built, else ``_send_py``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._native import PURE

if TYPE_CHECKING:
    from ._send_py import RUNNING, YIELD_BYTES, SendCore, TopicInfo
elif PURE:
    from ._send_py import RUNNING, YIELD_BYTES, SendCore, TopicInfo
else:
    try:
        from ._send import RUNNING, YIELD_BYTES, SendCore, TopicInfo
    except ImportError:
        from ._send_py import RUNNING, YIELD_BYTES, SendCore, TopicInfo

#: True when the compiled fast path is in use.
COMPILED = SendCore.__module__.rsplit(".", 1)[-1] == "_send"

__all__ = ["COMPILED", "RUNNING", "YIELD_BYTES", "SendCore", "TopicInfo"]

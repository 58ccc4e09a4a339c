"""The one switch between the compiled modules and their pure-Python forms.

``AIOKAFKA_LITE_PURE=1`` (or ``AIOKAFKA_LITE_NO_EXT=1``, which also makes ``setup.py`` skip building
them) makes every module that has a compiled form -- the records core, the send fast path, the record
handles, the key hashes -- use its pure-Python form. It is read once, when this module is first imported;
each of those modules asks :data:`PURE` and falls back to the pure form when the compiled one is not
built.
"""

from __future__ import annotations

import os

__all__ = ["PURE"]

PURE = (os.environ.get("AIOKAFKA_LITE_PURE", "").strip().lower() in ("1", "true", "yes")
        or bool(os.environ.get("AIOKAFKA_LITE_NO_EXT")))

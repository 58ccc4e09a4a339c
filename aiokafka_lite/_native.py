"""The one switch between the compiled modules and their pure-Python forms.

``AIOKAFKA_LITE_PURE=1`` (or ``AIOKAFKA_LITE_NO_EXT=1``, which also makes ``setup.py`` skip building
them) makes every module that has a compiled form -- the records core, the send fast path, the record
handles, the key hashes -- use its pure-Python form. It is read once, when this module is first imported;
each of those modules asks :data:`PURE` and falls back to the pure form when the compiled one is not
built. A module written once and compiled from its ``.py`` (``producer/_handles.py``) is loaded from
that source under the switch (:func:`pure_module`).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["PURE", "is_compiled", "pure_module"]

PURE = (os.environ.get("AIOKAFKA_LITE_PURE", "").strip().lower() in ("1", "true", "yes")
        or bool(os.environ.get("AIOKAFKA_LITE_NO_EXT")))


def pure_module(name: str) -> ModuleType:
    """Module ``name`` (``"aiokafka_lite.producer._handles"``) run as Python from its ``.py`` source, even
    where its compiled form is built (which the import system loads for ``name``). It is registered as
    ``name + "_py"``, so a compiled module that cimports ``name`` still finds the compiled form."""
    key = name + "_py"
    module = sys.modules.get(key)
    if module is not None:
        return module
    path = Path(__file__).parent.joinpath(*name.split(".")[1:]).with_suffix(".py")
    loader = importlib.machinery.SourceFileLoader(key, str(path))
    spec = importlib.util.spec_from_loader(key, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    try:
        loader.exec_module(module)
    except BaseException:
        del sys.modules[key]
        raise
    return module


def is_compiled(module: ModuleType) -> bool:
    """Whether ``module`` is a compiled extension (not run from Python source)."""
    return not str(getattr(module, "__file__", "") or "").endswith(".py")

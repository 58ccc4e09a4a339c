"""Make ``sys.modules["aiokafka"] = aiokafka_lite.compat`` enough for every ``import aiokafka.x.y``.

With only that alias, Python would look for ``aiokafka.admin`` in compat's directory and load
``compat/admin/__init__.py`` a second time under the name ``aiokafka.admin``: a second copy of every class,
so ``isinstance`` checks between the two copies fail. This finder answers ``aiokafka.<path>`` with the
already imported ``aiokafka_lite.compat.<path>`` module instead, and only while ``aiokafka`` is compat (a
real aiokafka installed beside us is left alone).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence

_PREFIX = "aiokafka."


def _ours(path: str) -> types.ModuleType | None:
    """compat's module for the dotted ``path``: an attribute (``errors`` is aiokafka_lite.errors) or a
    submodule."""
    module: object = sys.modules["aiokafka_lite.compat"]
    for part in path.split("."):
        child = getattr(module, part, None)
        if not isinstance(child, types.ModuleType):
            try:
                child = importlib.import_module(f"{module.__name__}.{part}")  # type: ignore[attr-defined]
            except ImportError:
                return None
        module = child
    return module  # type: ignore[return-value]


class _Loader(importlib.abc.Loader):
    def __init__(self, module: types.ModuleType) -> None:
        self.module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        return None  # already executed under its own name


class AliasFinder(importlib.abc.MetaPathFinder):
    """``aiokafka.<path>`` -> ``aiokafka_lite.compat.<path>`` while ``sys.modules["aiokafka"]`` is compat."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX) or sys.modules.get("aiokafka") is not sys.modules.get(
                "aiokafka_lite.compat"):
            return None
        module = _ours(fullname[len(_PREFIX):])
        if module is None:
            return None  # not a module compat has: the import fails as it would
        spec = importlib.machinery.ModuleSpec(fullname, _Loader(module),
                                              is_package=hasattr(module, "__path__"))
        return spec


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())

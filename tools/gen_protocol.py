#!/usr/bin/env python3
"""Generate ``aiokafka_lite/protocol/messages/`` from Kafka's JSON message specs.

Usage: ``python tools/gen_protocol.py [SPEC_DIR] [--out DIR]`` (SPEC_DIR defaults to
``../shared/kafka-protocol`` relative to the repository root). The output is committed; a test
regenerates it and compares.

The generator itself lives in the ``tools/protocol_gen`` package; this file stays the entry point (the
Makefile and the tests run or load it by path) and re-exports the package's names, so ``gen.load_spec``,
``gen.build_message``, ``gen.generate`` ... keep working for code that loads this file as a module.
"""

from __future__ import annotations

import json  # noqa: F401  (re-exported: tests parse with gen.json after gen.strip_comments)
import sys
from pathlib import Path

# Loaded by path (not as part of a package), so make the sibling package importable.
_TOOLS = str(Path(__file__).resolve().parent)
if _TOOLS not in sys.path:
    sys.path.insert(0, _TOOLS)

from protocol_gen.cli import (  # noqa: E402
    DEFAULT_OUT,
    DEFAULT_SPECS,
    EXTRA_SPECS,
    ROOT,
    SHARED_SPECS,
    generate,
    main,
    spec_files,
)
from protocol_gen.emit_base import BaseEmitter, Module, array_code, flexible_for  # noqa: E402
from protocol_gen.emit_classes import class_code  # noqa: E402
from protocol_gen.emit_decoders import DecoderEmitter  # noqa: E402
from protocol_gen.emit_encoders import EncoderEmitter  # noqa: E402
from protocol_gen.emit_modules import BANNER, Emitter, module_name, render_index, render_module  # noqa: E402
from protocol_gen.layout import WIDTH, doc_text, fit, version_range, vtext  # noqa: E402
from protocol_gen.spec import (  # noqa: E402
    EXTRA_LOW_VERSIONS,
    FIXED,
    MAX_VERSION,
    NONE,
    PRIMITIVES,
    FieldSpec,
    MessageSpec,
    StructSpec,
    Versions,
    build_message,
    load_spec,
    nested_names,
    snake,
    strip_comments,
)
from protocol_gen.values import default_expr, default_value, non_default, py_type  # noqa: E402

__all__ = [
    "BANNER",
    "DEFAULT_OUT",
    "DEFAULT_SPECS",
    "EXTRA_LOW_VERSIONS",
    "EXTRA_SPECS",
    "FIXED",
    "MAX_VERSION",
    "NONE",
    "PRIMITIVES",
    "ROOT",
    "SHARED_SPECS",
    "WIDTH",
    "BaseEmitter",
    "DecoderEmitter",
    "Emitter",
    "EncoderEmitter",
    "FieldSpec",
    "MessageSpec",
    "Module",
    "StructSpec",
    "Versions",
    "array_code",
    "build_message",
    "class_code",
    "default_expr",
    "default_value",
    "doc_text",
    "fit",
    "flexible_for",
    "generate",
    "load_spec",
    "main",
    "module_name",
    "nested_names",
    "non_default",
    "py_type",
    "render_index",
    "render_module",
    "snake",
    "spec_files",
    "strip_comments",
    "version_range",
    "vtext",
]

if __name__ == "__main__":
    sys.exit(main())

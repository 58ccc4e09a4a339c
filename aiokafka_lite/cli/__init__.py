"""The ``aiokafka-lite`` command line (also ``python -m aiokafka_lite``); see docs/cli.md."""

from ._app import build_parser, main

__all__ = ["build_parser", "main"]

"""Declaring commands: the shape every command with actions shares, written once.

A command such as ``groups`` takes an ACTION (``groups describe``); each action ends the same way: an
optional ``--json``, then the connection options every command takes, then the coroutine that runs it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

Common = Callable[[argparse.ArgumentParser], None]


def command_with_actions(sub: Any, name: str, *, help: str, description: str) -> Any:
    """Add command ``name`` whose first argument is a required ACTION; returns where to add the actions."""
    command = sub.add_parser(name, help=help, description=description)
    actions = command.add_subparsers(dest="action", metavar="ACTION", parser_class=type(command))
    actions.required = True
    return actions


def finish(p: argparse.ArgumentParser, common: Common, handler: Callable[..., Any], *,
           json: str | None = None) -> None:
    """End a command's declaration: ``--json`` (help ``json``) when given, the common options, the handler."""
    if json is not None:
        p.add_argument("--json", action="store_true", help=json)
    common(p)
    p.set_defaults(handler=handler)

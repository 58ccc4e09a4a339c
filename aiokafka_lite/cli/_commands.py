"""The command table: every command is declared as data here and built into argparse in one place.

A command module exports ``COMMANDS``: each entry is either an :class:`Action`, a command that runs a
coroutine (``consume``), or a :class:`Command`, whose first argument is a required ACTION
(``groups describe``) chosen among its own actions. Building them is :func:`add`'s job alone: each action
ends the same way (an optional ``--json``, the connection options every command takes, the handler), and
arguments several commands take are declared once, below.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._settings import ACKS, COMPRESSIONS

Common = Callable[[argparse.ArgumentParser], None]


@dataclass(frozen=True)
class Arg:
    """One ``add_argument`` call: its flags and its keywords."""

    flags: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)


def arg(*flags: str, **options: Any) -> Arg:
    return Arg(flags, options)


@dataclass(frozen=True)
class OneOf:
    """Arguments that exclude each other (``required``: exactly one must be given)."""

    args: tuple[Arg, ...]
    required: bool = False


@dataclass(frozen=True)
class Action:
    """A command (or a command's ACTION) that runs ``run(args)``; ``description`` defaults to ``help``
    as a sentence, ``json`` is the help of its ``--json`` option (None: it has none)."""

    name: str
    run: Callable[[argparse.Namespace], Any]
    help: str
    description: str | None = None
    args: Sequence[Arg | OneOf] = ()
    json: str | None = None
    #: False: ``run`` is a plain function, and the connection options do not apply (``broker``).
    is_async: bool = True


@dataclass(frozen=True)
class Command:
    """A command whose first argument is one of ``actions``."""

    name: str
    help: str
    description: str
    actions: Sequence[Action]


def add(sub: Any, entry: Action | Command, common: Common) -> None:
    """Build ``entry`` into the subparsers ``sub``."""
    if isinstance(entry, Command):
        command = sub.add_parser(entry.name, help=entry.help, description=entry.description)
        actions = command.add_subparsers(dest="action", metavar="ACTION", parser_class=type(command))
        actions.required = True
        for action in entry.actions:
            add(actions, action, common)
        return
    p = sub.add_parser(entry.name, help=entry.help,
                       description=entry.description or entry.help[:1].upper() + entry.help[1:] + ".")
    for a in entry.args:
        if isinstance(a, OneOf):
            group = p.add_mutually_exclusive_group(required=a.required)
            for one in a.args:
                group.add_argument(*one.flags, **one.options)
        else:
            p.add_argument(*a.flags, **a.options)
    if entry.json is not None:
        p.add_argument("--json", action="store_true", help=entry.json)
    if entry.is_async:
        common(p)
    p.set_defaults(handler=entry.run, is_async=entry.is_async)


# -- arguments several commands take ---------------------------------------------------------------

GROUP = arg("group", metavar="GROUP")
GROUPS = arg("groups", nargs="+", metavar="GROUP")
TOPICS = arg("topics", nargs="+", metavar="TOPIC")
#: ``--topic`` naming the topics an action changes (at least one).
TOPICS_GIVEN = arg("--topic", action="append", required=True, metavar="TOPIC", help="repeatable")
VALIDATE_ONLY = arg("--validate-only", action="store_true", help="ask the broker to check, not change")


def partitions(help: str = "only this partition of the topics; repeatable") -> Arg:
    """``-p/--partition``, repeatable."""
    return arg("-p", "--partition", type=int, action="append", default=None, help=help)


def load_options(records: int, records_help: str, *, partitions_help: str, timeout: float,
                 timeout_help: str) -> tuple[Arg, ...]:
    """What the commands that make load take (bench, smoke): how much, where to, how, how long."""
    return (
        arg("-n", "--num-records", type=int, default=records, help=f"{records_help} (default: {records})"),
        arg("-s", "--size", type=int, default=100, help="value size in bytes (default: 100)"),
        arg("--topic", help="use this topic (created if missing) instead of a temporary one"),
        arg("--partitions", type=int, default=3, help=f"{partitions_help} (default: 3)"),
        arg("-z", "--compression", choices=COMPRESSIONS, default=None),
        arg("-a", "--acks", choices=ACKS, default=None),
        arg("--timeout", type=float, default=timeout, help=timeout_help),
    )

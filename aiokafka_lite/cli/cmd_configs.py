"""``aiokafka-lite configs describe|alter|set|delete``: topic and broker configs (DescribeConfigs,
IncrementalAlterConfigs; AlterConfigs with ``set --replace-all``)."""

from __future__ import annotations

import argparse
import json

from ._clients import admin_for, started
from ._commands import VALIDATE_ONLY, Action, Command, arg
from ._runtime import CLIError
from ._settings import parse_pairs

TYPES = ("topic", "broker")


async def _describe(args: argparse.Namespace) -> int:
    from ..admin import ConfigResource

    resources = [ConfigResource(args.type, n) for n in dict.fromkeys(args.names)]
    async with started(admin_for(args), args, "admin") as admin:
        found = await admin.describe_configs(resources)
    for r in resources:
        entries = [e for _, e in sorted(found[r].items()) if args.all or not e.is_default]
        if args.json:
            print(json.dumps({"type": r.type, "name": r.name, "configs": {
                e.name: {"value": e.value, "source": e.source, "default": e.is_default,
                         "read_only": e.read_only, "sensitive": e.is_sensitive} for e in entries}}))
            continue
        print(f"Configs for {r.type} {r.name}:" + ("" if entries else " (none reported)"))
        for e in entries:
            value = "<sensitive>" if e.is_sensitive else e.value
            print(f"  {e.name}={value}\t({e.source}{', read-only' if e.read_only else ''})")
    return 0


async def _alter(args: argparse.Namespace) -> int:
    changes: dict[str, str | None] = dict(parse_pairs(args.set, what="--set", normalize=False))
    for name in args.delete:
        if name in changes:
            raise CLIError(f"{name!r} is both set and deleted", code=2)
        changes[name] = None
    if not changes:
        raise CLIError("nothing to change: give --set KEY=VALUE or --delete KEY", code=2)
    return await _change(args, list(dict.fromkeys(args.names)), changes)


async def _set(args: argparse.Namespace) -> int:
    changes: dict[str, str | None] = dict(parse_pairs(args.pairs, what="KEY=VALUE", normalize=False))
    return await _change(args, [args.name], changes, replace_all=args.replace_all)


async def _delete(args: argparse.Namespace) -> int:
    return await _change(args, [args.name], {k: None for k in dict.fromkeys(args.keys)})


async def _change(args: argparse.Namespace, names: list[str], changes: dict[str, str | None], *,
                  replace_all: bool = False) -> int:
    """Apply ``changes`` ({key: value, or None to reset}) to each named resource and say what changed."""
    from ..admin import ConfigResource

    resources = [ConfigResource(args.type, n) for n in names]
    async with started(admin_for(args), args, "admin") as admin:
        if replace_all:
            await admin.alter_configs({r: {k: v for k, v in changes.items() if v is not None}
                                       for r in resources}, validate_only=args.validate_only)
        else:
            await admin.incremental_alter_configs({r: changes for r in resources},
                                                  validate_only=args.validate_only)
    verb = "would change" if args.validate_only else "changed"
    for r in resources:
        if args.json:
            print(json.dumps({"type": r.type, "name": r.name, "validate_only": args.validate_only,
                              "replace_all": replace_all,
                              "set": {k: v for k, v in changes.items() if v is not None},
                              "deleted": [k for k, v in changes.items() if v is None]}))
        else:
            print(f"{verb} {', '.join(changes)} of {r.type} {r.name}" + (" (all others reset)" if replace_all
                                                                          else ""))
    return 0


_TYPE = arg("type", choices=TYPES)
_NAMES = arg("names", nargs="+", metavar="NAME", help="topic names or broker ids")
_NAME = arg("name", metavar="NAME", help="a topic name or broker id")

COMMANDS = (Command("configs", "describe or alter topic and broker configs", "Topic and broker configs.",
                    actions=(
    Action("describe", _describe, "show configs",
           "Show the configs of a topic or a broker (by node id). Tansu answers with none.",
           args=(_TYPE, _NAMES,
                 arg("--all", action="store_true", help="also configs left at their defaults")),
           json="one JSON object per resource"),
    Action("alter", _alter, "set or reset configs (only those named change)",
           "Set configs (--set name=value) or reset them to their default (--delete name); the others stay "
           "as they are.",
           args=(_TYPE, _NAMES,
                 arg("--set", action="append", default=[], metavar="KEY=VALUE", help="repeatable"),
                 arg("--delete", action="append", default=[], metavar="KEY", help="repeatable"),
                 VALIDATE_ONLY),
           json="one JSON object per resource"),
    Action("set", _set, "set configs (KEY=VALUE ...)",
           "Set configs of one topic or broker; the others stay as they are (with --replace-all, every "
           "config not given returns to its default: Kafka's legacy AlterConfigs).",
           args=(_TYPE, _NAME, arg("pairs", nargs="+", metavar="KEY=VALUE"),
                 arg("--replace-all", action="store_true",
                     help="replace the whole set (AlterConfigs); configs not given are reset"),
                 VALIDATE_ONLY),
           json="a JSON object for the change"),
    Action("delete", _delete, "reset configs to their defaults (KEY ...)",
           "Reset the named configs of one topic or broker to their defaults.",
           args=(_TYPE, _NAME, arg("keys", nargs="+", metavar="KEY"), VALIDATE_ONLY),
           json="a JSON object for the change"),
)),)

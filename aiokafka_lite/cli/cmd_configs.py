"""``aiokafka-lite configs describe|alter``: topic and broker configs (DescribeConfigs,
IncrementalAlterConfigs)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from ._clients import settings, started
from ._runtime import CLIError
from ._settings import ADMIN, parse_pairs

TYPES = ("topic", "broker")


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    configs = sub.add_parser("configs", help="describe or alter topic and broker configs",
                             description="Topic and broker configs.")
    actions = configs.add_subparsers(dest="action", metavar="ACTION", parser_class=type(configs))
    actions.required = True

    p = actions.add_parser("describe", help="show configs",
                           description="Show the configs of a topic or a broker (by node id). Tansu "
                                       "answers with none.")
    p.add_argument("type", choices=TYPES)
    p.add_argument("names", nargs="+", metavar="NAME", help="topic names or broker ids")
    p.add_argument("--all", action="store_true", help="also configs left at their defaults")
    p.add_argument("--json", action="store_true", help="one JSON object per resource")
    common(p)
    p.set_defaults(handler=_describe)

    p = actions.add_parser("alter", help="set or reset configs (only those named change)",
                           description="Set configs (--set name=value) or reset them to their default "
                                       "(--delete name); the others stay as they are.")
    p.add_argument("type", choices=TYPES)
    p.add_argument("names", nargs="+", metavar="NAME", help="topic names or broker ids")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="repeatable")
    p.add_argument("--delete", action="append", default=[], metavar="KEY", help="repeatable")
    p.add_argument("--validate-only", action="store_true", help="ask the broker to check, not change")
    common(p)
    p.set_defaults(handler=_alter)


def _admin(args: argparse.Namespace) -> Any:
    from ..admin import Admin

    return Admin(**settings(args, ADMIN)["admin"])


async def _describe(args: argparse.Namespace) -> int:
    from ..admin import ConfigResource

    resources = [ConfigResource(args.type, n) for n in dict.fromkeys(args.names)]
    async with started(_admin(args), args, "admin") as admin:
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
    from ..admin import ConfigResource

    changes: dict[str, str | None] = dict(parse_pairs(args.set, what="--set", normalize=False))
    for name in args.delete:
        if name in changes:
            raise CLIError(f"{name!r} is both set and deleted", code=2)
        changes[name] = None
    if not changes:
        raise CLIError("nothing to change: give --set KEY=VALUE or --delete KEY", code=2)
    resources = [ConfigResource(args.type, n) for n in dict.fromkeys(args.names)]
    async with started(_admin(args), args, "admin") as admin:
        await admin.incremental_alter_configs({r: changes for r in resources},
                                              validate_only=args.validate_only)
    verb = "would change" if args.validate_only else "changed"
    for r in resources:
        print(f"{verb} {', '.join(changes)} of {r.type} {r.name}")
    return 0

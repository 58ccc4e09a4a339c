"""``aiokafka-lite acls list|add|remove``: access control lists (DescribeAcls, CreateAcls, DeleteAcls),
with kafka-acls' resource options (--topic, --group, --transactional-id, --cluster)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._clients import admin_for, print_table, started
from ._commands import Common, command_with_actions, finish
from ._runtime import CLIError

OPERATIONS = ("all", "read", "write", "create", "delete", "alter", "describe", "cluster_action",
              "describe_configs", "alter_configs", "idempotent_write", "create_tokens", "describe_tokens")


def _resource_options(p: argparse.ArgumentParser) -> None:
    which = p.add_mutually_exclusive_group()
    which.add_argument("--topic", metavar="NAME", help="a topic ('*' for all topics)")
    which.add_argument("--group", metavar="NAME", help="a consumer group")
    which.add_argument("--transactional-id", metavar="NAME", help="a transactional id")
    which.add_argument("--user", metavar="NAME", help="a user (for delegation tokens)")
    which.add_argument("--cluster", action="store_true", help="the cluster")
    p.add_argument("--prefixed", action="store_true",
                   help="NAME is a prefix: the ACL covers every resource whose name starts with it")
    p.add_argument("--principal", metavar="TYPE:NAME", help="who: User:alice")
    p.add_argument("--host", metavar="HOST", help="from where (default for add: '*', any host)")


def register(sub: Any, common: Common) -> None:
    actions = command_with_actions(
        sub, "acls", help="list, add or remove ACLs",
        description="Access control lists. The broker must run an authorizer; one "
                    "without answers SECURITY_DISABLED (noida-db does).")

    p = actions.add_parser("list", help="list ACLs, optionally filtered",
                           description="List the ACLs matching the options given (all when none is).")
    _resource_options(p)
    p.add_argument("--operation", choices=OPERATIONS, help="only ACLs for this operation")
    finish(p, common, _list, json="one JSON object per ACL")

    p = actions.add_parser("add", help="add ACLs", description=(
        "Allow (or, with --deny, deny) PRINCIPAL each --operation on one resource."))
    _resource_options(p)
    p.add_argument("--operation", action="append", choices=OPERATIONS, required=True,
                   help="repeatable")
    p.add_argument("--deny", action="store_true", help="a deny ACL (default: allow)")
    finish(p, common, _add, json="one JSON object per ACL added")

    p = actions.add_parser("remove", help="remove the ACLs matching a filter", description=(
        "Remove every ACL matching the options given; at least a resource or --principal is needed."))
    _resource_options(p)
    p.add_argument("--operation", choices=OPERATIONS, help="only ACLs for this operation")
    p.add_argument("--deny", action="store_true", help="only deny ACLs")
    finish(p, common, _remove, json="one JSON object per ACL removed")


def _resource(args: argparse.Namespace) -> tuple[str, str | None]:
    for kind in ("topic", "group", "transactional_id", "user"):
        name = getattr(args, kind)
        if name is not None:
            if not name:
                raise CLIError(f"--{kind.replace('_', '-')} needs a non-empty name", code=2)
            return kind, name
    if args.cluster:
        return "cluster", "kafka-cluster"
    return "any", None


def _print(bindings: list[Any], as_json: bool, verb: str) -> None:
    if as_json:
        for b in bindings:
            print(json.dumps(b.as_dict()))
        return
    if verb:
        for b in bindings:
            print(f"{verb} {b.permission} {b.principal} {b.operation} on {b.resource_type} "
                  f"{b.resource_name} ({b.pattern_type}) from {b.host}")
        return
    print_table(("PRINCIPAL", "PERMISSION", "OPERATION", "RESOURCE", "NAME", "PATTERN", "HOST"),
                [(b.principal, b.permission, b.operation, b.resource_type, b.resource_name, b.pattern_type,
                  b.host) for b in bindings])


def _filter(args: argparse.Namespace, permission: str) -> Any:
    from ..admin import AclBindingFilter

    kind, name = _resource(args)
    pattern = "prefixed" if args.prefixed else ("literal" if name is not None else "any")
    return AclBindingFilter(resource_type=kind, resource_name=name, principal=args.principal,
                            operation=args.operation or "any", permission=permission, host=args.host,
                            pattern_type=pattern)


async def _list(args: argparse.Namespace) -> int:
    f = _filter(args, "any")
    async with started(admin_for(args), args, "admin") as admin:
        _print(await admin.describe_acls(f), args.json, "")
    return 0


async def _add(args: argparse.Namespace) -> int:
    from ..admin import AclBinding

    kind, name = _resource(args)
    if name is None:
        raise CLIError("which resource? give --topic, --group, --transactional-id, --user or --cluster",
                       code=2)
    if not args.principal:
        raise CLIError("whose ACL? give --principal User:NAME", code=2)
    bindings = [AclBinding(kind, name, args.principal, op, "deny" if args.deny else "allow",
                           args.host or "*", "prefixed" if args.prefixed else "literal")
                for op in dict.fromkeys(args.operation)]
    async with started(admin_for(args), args, "admin") as admin:
        await admin.create_acls(bindings)
    _print(bindings, args.json, "added")
    return 0


async def _remove(args: argparse.Namespace) -> int:
    args.operation = args.operation or None
    kind, _ = _resource(args)
    if kind == "any" and not args.principal:
        raise CLIError("refusing to remove every ACL: give a resource option or --principal", code=2)
    f = _filter(args, "deny" if args.deny else "any")
    async with started(admin_for(args), args, "admin") as admin:
        removed = (await admin.delete_acls([f]))[f]
    _print(removed, args.json, "removed")
    return 0

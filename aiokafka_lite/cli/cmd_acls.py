"""``aiokafka-lite acls list|add|remove``: access control lists (DescribeAcls, CreateAcls, DeleteAcls),
with kafka-acls' resource options (--topic, --group, --transactional-id, --cluster)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._clients import admin_for, print_table, started
from ._commands import Action, Command, OneOf, arg
from ._runtime import CLIError

OPERATIONS = ("all", "read", "write", "create", "delete", "alter", "describe", "cluster_action",
              "describe_configs", "alter_configs", "idempotent_write", "create_tokens", "describe_tokens")


#: Which resource (or resources, with --prefixed), who and from where: every action takes these.
RESOURCE = (
    OneOf((arg("--topic", metavar="NAME", help="a topic ('*' for all topics)"),
           arg("--group", metavar="NAME", help="a consumer group"),
           arg("--transactional-id", metavar="NAME", help="a transactional id"),
           arg("--user", metavar="NAME", help="a user (for delegation tokens)"),
           arg("--cluster", action="store_true", help="the cluster"))),
    arg("--prefixed", action="store_true",
        help="NAME is a prefix: the ACL covers every resource whose name starts with it"),
    arg("--principal", metavar="TYPE:NAME", help="who: User:alice"),
    arg("--host", metavar="HOST", help="from where (default for add: '*', any host)"),
)
ONE_OPERATION = arg("--operation", choices=OPERATIONS, help="only ACLs for this operation")


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


COMMANDS = (Command("acls", "list, add or remove ACLs",
                    "Access control lists. The broker must run an authorizer; one without answers "
                    "SECURITY_DISABLED (noida-db does).", actions=(
    Action("list", _list, "list ACLs, optionally filtered",
           "List the ACLs matching the options given (all when none is).",
           args=(*RESOURCE, ONE_OPERATION), json="one JSON object per ACL"),
    Action("add", _add, "add ACLs",
           "Allow (or, with --deny, deny) PRINCIPAL each --operation on one resource.",
           args=(*RESOURCE,
                 arg("--operation", action="append", choices=OPERATIONS, required=True, help="repeatable"),
                 arg("--deny", action="store_true", help="a deny ACL (default: allow)")),
           json="one JSON object per ACL added"),
    Action("remove", _remove, "remove the ACLs matching a filter",
           "Remove every ACL matching the options given; at least a resource or --principal is needed.",
           args=(*RESOURCE, ONE_OPERATION, arg("--deny", action="store_true", help="only deny ACLs")),
           json="one JSON object per ACL removed"),
)),)

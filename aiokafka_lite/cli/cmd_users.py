"""``aiokafka-lite users list|add|remove``: SCRAM users (DescribeUserScramCredentials,
AlterUserScramCredentials). Passwords are salted and hashed here; only the salted password is sent."""

from __future__ import annotations

import argparse
import json
import sys

from ._clients import admin_for, print_table, started
from ._commands import Action, Command, OneOf, arg
from ._runtime import CLIError

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")


async def _list(args: argparse.Namespace) -> int:
    async with started(admin_for(args), args, "admin") as admin:
        found = await admin.describe_user_scram_credentials(args.users or None)
    if args.json:
        for d in found.values():
            print(json.dumps({"user": d.user, "credentials": [
                {"mechanism": c.mechanism, "iterations": c.iterations} for c in d.credential_infos]}))
        return 0
    print_table(("USER", "MECHANISM", "ITERATIONS"),
                [(d.user, c.mechanism, c.iterations) for d in found.values() for c in d.credential_infos])
    return 0


async def _add(args: argparse.Namespace) -> int:
    from ..admin import UserScramCredentialUpsertion

    password = args.password
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        raise CLIError("the password is empty", code=2)
    if not 4096 <= args.iterations <= 16384:
        raise CLIError(f"--iterations must be 4096..16384 (Kafka's bounds), got {args.iterations}", code=2)
    change = UserScramCredentialUpsertion(args.user, password, args.mechanism, args.iterations)
    async with started(admin_for(args), args, "admin") as admin:
        await admin.alter_user_scram_credentials([change])
    if args.json:
        print(json.dumps({"user": args.user, "mechanism": args.mechanism, "iterations": args.iterations,
                          "action": "upserted"}))
    else:
        print(f"set {args.mechanism} credential of user {args.user}")
    return 0


async def _remove(args: argparse.Namespace) -> int:
    from ..admin import UserScramCredentialDeletion

    async with started(admin_for(args), args, "admin") as admin:
        await admin.alter_user_scram_credentials([UserScramCredentialDeletion(args.user, args.mechanism)])
    if args.json:
        print(json.dumps({"user": args.user, "mechanism": args.mechanism, "action": "deleted"}))
    else:
        print(f"removed {args.mechanism} credential of user {args.user}")
    return 0


_USER = arg("user", metavar="USER")
_MECHANISM = arg("--mechanism", choices=MECHANISMS, default="SCRAM-SHA-256")

COMMANDS = (Command("users", "list, add or remove SCRAM users", "SCRAM credentials (KIP-554).", actions=(
    Action("list", _list, "users and their mechanisms",
           "Show the SCRAM mechanisms of USERs (every user when none is given).",
           args=(arg("users", nargs="*", metavar="USER"),), json="one JSON object per user"),
    Action("add", _add, "create a user or change their password",
           "Create USER's credential for --mechanism, or replace it.",
           args=(_USER,
                 OneOf((arg("--password", metavar="PASSWORD",
                            help="visible to other local users; prefer --password-stdin"),
                        arg("--password-stdin", action="store_true",
                            help="read the password's first line from standard input")), required=True),
                 _MECHANISM, arg("--iterations", type=int, default=4096, help="4096..16384 (default: 4096)")),
           json="a JSON object for the change"),
    Action("remove", _remove, "delete a user's credential", "Delete USER's credential for --mechanism.",
           args=(_USER, _MECHANISM), json="a JSON object for the change"),
)),)

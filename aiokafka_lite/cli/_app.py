"""The ``aiokafka-lite`` argument parser and entry point.

Every failure ends as one line on stderr (``aiokafka-lite: error: ...``) and a non-zero exit status:
2 for bad usage or settings, 1 for a failure at run time, 130 for an interrupt.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

from .._version import __version__
from ._commands import add
from ._runtime import PROG, UsageError, describe, exit_code_for, print_error, run


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so main() can print one line."""

    def error(self, message: str) -> NoReturn:
        sub = self.prog[len(PROG):].strip() if self.prog.startswith(PROG) else ""
        where = f" {sub}" if sub else ""
        raise UsageError(f"{message} (see `{PROG}{where} --help`)")


def _common(parser: argparse.ArgumentParser) -> None:
    """Options every command takes, accepted after the command name."""
    group = parser.add_argument_group("connection and settings")
    group.add_argument("-b", "--bootstrap-servers", metavar="HOST:PORT[,...]", default=None,
                       help="brokers to bootstrap from (default: $AIOKAFKA_LITE_BOOTSTRAP_SERVERS "
                            "or 127.0.0.1:9092)")
    group.add_argument("-X", dest="settings", action="append", metavar="KEY=VALUE", default=[],
                       help="any client setting, Kafka's dotted name or ours (-X linger.ms=5); repeatable")
    group.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                       help="give up when no bootstrap server answers within this (default: 10)")
    group.add_argument("--uvloop", action="store_true", help="run on uvloop (when installed)")


EXAMPLES = f"""examples:
  {PROG} broker &                                   # Tansu on 127.0.0.1:9092
  {PROG} topics create events -p 3
  seq 100 | {PROG} produce events                   # one record per line
  printf 'k1:v1\\n' | {PROG} produce events -K :     # key:value
  {PROG} consume events -o beginning -e             # everything there is, then exit
  {PROG} consume events -o -10 -f '%p/%o %k=%s\\n'   # the last 10 per partition, kcat format
  {PROG} consume events other -o s@1763928000000 -J # two topics, from a time, JSON envelopes
  {PROG} -L                                         # brokers, topics, partitions (kcat -L)
  {PROG} offsets events --time 2026-11-23T20:00:00Z
  {PROG} groups describe billing                    # committed offsets and lag
  {PROG} groups reset-offsets billing --topic events --to-earliest            # dry run
  {PROG} groups reset-offsets billing --topic events --to-earliest --execute
  {PROG} configs describe topic events
  {PROG} configs set topic events retention.ms=86400000
  {PROG} groups delete-offsets billing --topic events
  {PROG} share-groups offsets workers --json      # a share group's start offsets (KIP-932)
  {PROG} acls add --topic events --principal User:alice --operation read
  {PROG} users add alice --password-stdin < secret.txt
  {PROG} transactions list --state ongoing
  {PROG} log-dirs --json
  {PROG} bench produce -n 100000
  {PROG} stats produce events -n 100000 --match record-send
"""


def build_parser() -> argparse.ArgumentParser:
    from . import (
        cmd_acls,
        cmd_bench,
        cmd_broker,
        cmd_configs,
        cmd_consume,
        cmd_groups,
        cmd_log_dirs,
        cmd_metadata,
        cmd_produce,
        cmd_share_groups,
        cmd_smoke,
        cmd_stats,
        cmd_topics,
        cmd_transactions,
        cmd_users,
    )

    parser = _Parser(
        prog=PROG,
        description="An asyncio-native Kafka client's command line: a development broker, topics, "
                    "produce, consume, groups, share groups, offsets, configs, ACLs, SCRAM users, "
                    "transactions, log directories, metadata, benchmarks and a smoke test.",
        epilog=EXAMPLES + f"\nRun `{PROG} COMMAND --help` for a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in (cmd_broker, cmd_topics, cmd_produce, cmd_consume, cmd_groups, cmd_share_groups,
                   cmd_metadata, cmd_configs, cmd_acls, cmd_users, cmd_transactions, cmd_log_dirs, cmd_bench,
                   cmd_stats, cmd_smoke):
        for entry in module.COMMANDS:
            add(sub, entry, _common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script passes it to sys.exit)."""
    try:
        try:
            given = list(argv) if argv is not None else sys.argv[1:]
            if given[:1] == ["-L"]:  # kcat's metadata listing: `aiokafka-lite -L -b host`
                given[0] = "metadata"
            args = build_parser().parse_args(given)
        except SystemExit as exc:  # --help / --version
            return exc.code if isinstance(exc.code, int) else 0
        handler: Any = args.handler
        if getattr(args, "is_async", True):
            code = run(lambda: handler(args), use_uvloop=getattr(args, "uvloop", False))
        else:
            code = handler(args)
        return int(code or 0)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout closed early (`... | head`): not an error; silence the flush at exit.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except Exception as exc:
        if os.environ.get("AIOKAFKA_LITE_DEBUG"):
            traceback.print_exc()
        print_error(describe(exc))
        return exit_code_for(exc)

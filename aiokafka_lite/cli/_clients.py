"""Building and starting the clients a command uses, from -b / -X, with a bounded connect."""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol

from .. import errors
from ._runtime import CLIError, with_timeout
from ._settings import parse_pairs, split_settings

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"


class _Client(Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...


def bootstrap(args: argparse.Namespace) -> str:
    """-b wins over -X bootstrap.servers, which wins over $AIOKAFKA_LITE_BOOTSTRAP_SERVERS."""
    if args.bootstrap_servers:
        return str(args.bootstrap_servers)
    raw = parse_pairs(args.settings)
    if "bootstrap_servers" in raw:
        return raw["bootstrap_servers"]
    return os.environ.get("AIOKAFKA_LITE_BOOTSTRAP_SERVERS") or DEFAULT_BOOTSTRAP


#: Session timeout for group consumers started from the shell, unless -X session.timeout.ms is given.
CLI_SESSION_TIMEOUT_MS = 10000


def settings(args: argparse.Namespace, tables: Sequence[str],
             overrides: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Per settings table, the keyword arguments for that client: -X, then command options, then -b.

    Command options (``--acks``) are applied after -X so the explicit flag wins; everything is
    validated before any connection is opened.
    """
    raw: dict[str, Any] = parse_pairs(args.settings)
    raw.update({k: v for k, v in (overrides or {}).items() if v is not None})
    raw["bootstrap_servers"] = bootstrap(args)
    return split_settings(raw, tables)


@asynccontextmanager
async def started(client: _Client, args: argparse.Namespace, what: str) -> AsyncIterator[Any]:
    """Start ``client`` within --connect-timeout; stop it however the block ends."""
    servers = bootstrap(args)
    try:
        await with_timeout(client.start(), args.connect_timeout,
                           f"connecting to {servers} ({what})")
    except BaseException as exc:
        try:
            await client.stop()
        except Exception:  # the start failure is the one to report
            pass
        if isinstance(exc, (errors.KafkaConnectionError, OSError)):
            raise CLIError(f"cannot reach bootstrap server {servers}: {_reason(exc)}") from exc
        raise
    try:
        yield client
    finally:
        await client.stop()


def _reason(exc: BaseException) -> str:
    """The innermost reason of a bootstrap failure, without the layers' repeated prefixes."""
    text = str(exc).replace("KafkaConnectionError: ", "")
    if text.count("could not bootstrap from") == 1 and ";" not in text:
        return text.rsplit(": ", 1)[-1]  # one server: its reason is enough
    return text


def admin_for(args: argparse.Namespace) -> Any:
    """An (unstarted) Admin from -b / -X, for the admin commands."""
    from ..admin import Admin
    from ._settings import ADMIN

    return Admin(**settings(args, ADMIN)["admin"])


def print_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Left-aligned columns, "-" for None or empty cells, as the groups commands print them."""
    table = [tuple(header)] + [tuple("-" if c is None or c == "" else str(c) for c in row) for row in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())

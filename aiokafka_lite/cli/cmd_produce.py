"""``aiokafka-lite produce TOPIC``: one record per input line, from stdin or a file."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from .. import errors
from ._clients import settings, started
from ._io import read_lines, unescape
from ._progress import Progress
from ._runtime import CLIError, UsageError
from ._settings import PRODUCER, parse_pairs

COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "produce", help="produce lines from stdin or a file",
        description="Produce one record per line of stdin (or --file). Empty lines are skipped "
                    "unless --keep-empty. Every producer setting is available through -X.")
    p.add_argument("topic", metavar="TOPIC")
    p.add_argument("-f", "--file", type=Path, help="read lines from this file instead of stdin")
    p.add_argument("-K", "--key-separator", metavar="SEP",
                   help=r"split each line at the first SEP into key and value (e.g. ':' or '\t'); "
                        "lines without it get no key")
    p.add_argument("-H", "--header", action="append", default=[], metavar="KEY=VALUE",
                   help="a header added to every record; repeatable")
    p.add_argument("-p", "--partition", type=int, default=None, help="send every record to this partition")
    p.add_argument("-z", "--compression", choices=COMPRESSIONS, default=None,
                   help="batch compression (compression.type)")
    p.add_argument("-a", "--acks", choices=("0", "1", "all", "-1"), default=None, help="acks setting")
    p.add_argument("--keep-empty", action="store_true", help="produce empty lines as empty values")
    p.add_argument("-D", "--delimiter", default=None, metavar="DELIM",
                   help=r"records are separated by DELIM instead of a newline (e.g. '|' or '\0')")
    p.add_argument("-Z", "--null", action="store_true",
                   help="an empty value or key is sent as NULL (a tombstone); empty lines are kept")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: on for a file when stderr is a terminal)")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary line on stderr")
    common(p)
    p.set_defaults(handler=run)


def _count_lines(path: Path, keep_empty: bool) -> int:
    count = 0
    with path.open("rb") as f:
        for line in f:
            if keep_empty or line.rstrip(b"\r\n"):
                count += 1
    return count


async def run(args: argparse.Namespace) -> int:
    overrides = {"compression_type": args.compression, "acks": args.acks}
    producer_kwargs = settings(args, PRODUCER, overrides)["producer"]
    headers = [(k, v.encode()) for k, v in parse_pairs(args.header, what="-H", normalize=False).items()]
    sep = unescape(args.key_separator).encode() if args.key_separator else None
    if sep == b"":
        raise UsageError("--key-separator may not be empty")
    delimiter = unescape(args.delimiter).encode() if args.delimiter is not None else b"\n"
    if delimiter == b"":
        raise UsageError("--delimiter may not be empty")
    keep_empty = args.keep_empty or args.null
    stream: BinaryIO
    if args.file is not None:
        try:
            stream = args.file.open("rb")
        except OSError as exc:
            raise CLIError(f"cannot read {args.file}: {exc.strerror}") from None
        total: int | None = _count_lines(args.file, keep_empty) if delimiter == b"\n" else None
        tty_default = sys.stderr.isatty()
    else:
        stream = sys.stdin.buffer
        total = None
        tty_default = sys.stderr.isatty() and not sys.stdin.isatty()
    show = tty_default if args.progress is None else args.progress

    from ..producer import Producer

    progress = Progress(f"produce {args.topic}", total, enabled=show)
    pending: set[asyncio.Future[Any]] = set()
    attempted = delivered = failed = 0
    first_error: BaseException | None = None

    def on_done(fut: asyncio.Future[Any]) -> None:
        nonlocal delivered, failed, first_error
        pending.discard(fut)
        exc = asyncio.CancelledError() if fut.cancelled() else fut.exception()
        if exc is not None:
            failed += 1
            first_error = first_error or exc
        else:
            delivered += 1
        progress.update(1)

    start = time.monotonic()
    try:
        async with started(Producer(**producer_kwargs), args, "producer") as producer:
            if args.partition is not None:
                partitions = await producer.partitions_for(args.topic)
                if args.partition not in partitions:
                    raise CLIError(f"topic {args.topic!r} has no partition {args.partition} "
                                   f"(it has {len(partitions)}: 0..{max(partitions)})")
            async for line in read_lines(stream, delimiter=delimiter):
                if not line and not keep_empty:
                    continue
                key: bytes | None = None
                value: bytes | None = line
                if sep is not None:
                    head, found, tail = line.partition(sep)
                    if found:
                        key, value = head, tail
                if args.null:
                    key, value = key or None, value or None
                attempted += 1
                try:
                    fut = await producer.send(args.topic, value, key=key, partition=args.partition,
                                              headers=headers or None)
                except (errors.RecordTooLargeError, errors.SerializationError) as exc:
                    failed += 1
                    first_error = first_error or exc
                    continue
                pending.add(fut)
                fut.add_done_callback(on_done)
            await producer.flush()
            if pending:
                await asyncio.gather(*list(pending), return_exceptions=True)
    finally:
        progress.close()
        if stream is not sys.stdin.buffer:
            stream.close()
    elapsed = time.monotonic() - start
    if first_error is not None:
        raise CLIError(f"{failed} of {attempted} records failed ({delivered} delivered to {args.topic}); "
                       f"first error: {first_error}")
    if not args.quiet:
        print(f"produced {delivered} records to {args.topic} in {elapsed:.2f} s", file=sys.stderr)
    return 0

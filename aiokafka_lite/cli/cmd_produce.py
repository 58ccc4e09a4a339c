"""``aiokafka-lite produce TOPIC``: one record per input line, from stdin or a file."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

from .. import errors
from ._clients import settings, started
from ._commands import Action, arg
from ._io import read_lines, unescape
from ._progress import Progress
from ._runtime import CLIError, UsageError
from ._settings import ACKS, COMPRESSIONS, PRODUCER, parse_pairs


def _count_lines(path: Path, keep_empty: bool) -> int:
    count = 0
    with path.open("rb") as f:
        for line in f:
            if keep_empty or line.rstrip(b"\r\n"):
                count += 1
    return count


def _separators(args: argparse.Namespace) -> tuple[bytes | None, bytes]:
    """``-K`` (key separator, or None) and ``-D`` (record delimiter), unescaped and checked."""
    sep = unescape(args.key_separator).encode() if args.key_separator else None
    if sep == b"":
        raise UsageError("--key-separator may not be empty")
    delimiter = unescape(args.delimiter).encode() if args.delimiter is not None else b"\n"
    if delimiter == b"":
        raise UsageError("--delimiter may not be empty")
    return sep, delimiter


def _input(args: argparse.Namespace, keep_empty: bool, delimiter: bytes) -> tuple[BinaryIO, int | None, bool]:
    """The stream to read, how many records it holds (a file split at newlines: for the progress bar),
    and whether a progress bar shows by default."""
    if args.file is None:
        return sys.stdin.buffer, None, sys.stderr.isatty() and not sys.stdin.isatty()
    try:
        stream: BinaryIO = args.file.open("rb")
    except OSError as exc:
        raise CLIError(f"cannot read {args.file}: {exc.strerror}") from None
    total = _count_lines(args.file, keep_empty) if delimiter == b"\n" else None
    return stream, total, sys.stderr.isatty()


def _split(line: bytes, sep: bytes | None, null: bool) -> tuple[bytes | None, bytes | None]:
    """A line as (key, value): split at the first ``sep``; with ``null`` (-Z) empty parts are None."""
    key: bytes | None = None
    value: bytes | None = line
    if sep is not None:
        head, found, tail = line.partition(sep)
        if found:
            key, value = head, tail
    if null:
        key, value = key or None, value or None
    return key, value


class _Tally:
    """Delivery outcomes of the records sent, as their futures complete."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.pending: set[asyncio.Future[Any]] = set()
        self.attempted = self.delivered = self.failed = 0
        self.first_error: BaseException | None = None

    def fail(self, exc: BaseException) -> None:
        self.failed += 1
        self.first_error = self.first_error or exc

    def track(self, fut: asyncio.Future[Any]) -> None:
        self.pending.add(fut)
        fut.add_done_callback(self._done)

    def _done(self, fut: asyncio.Future[Any]) -> None:
        self.pending.discard(fut)
        exc = asyncio.CancelledError() if fut.cancelled() else fut.exception()
        if exc is not None:
            self.fail(exc)
        else:
            self.delivered += 1
        self.progress.update(1)


async def _check_partition(producer: Any, topic: str, partition: int | None) -> None:
    if partition is None:
        return
    partitions = await producer.partitions_for(topic)
    if partition not in partitions:
        raise CLIError(f"topic {topic!r} has no partition {partition} "
                       f"(it has {len(partitions)}: 0..{max(partitions)})")


async def run(args: argparse.Namespace) -> int:
    overrides = {"compression_type": args.compression, "acks": args.acks}
    producer_kwargs = settings(args, PRODUCER, overrides)["producer"]
    headers = [(k, v.encode()) for k, v in parse_pairs(args.header, what="-H", normalize=False).items()]
    sep, delimiter = _separators(args)
    keep_empty = args.keep_empty or args.null
    stream, total, tty_default = _input(args, keep_empty, delimiter)
    show = tty_default if args.progress is None else args.progress

    from ..producer import Producer

    progress = Progress(f"produce {args.topic}", total, enabled=show)
    tally = _Tally(progress)
    start = time.monotonic()
    try:
        async with started(Producer(**producer_kwargs), args, "producer") as producer:
            await _check_partition(producer, args.topic, args.partition)
            async for line in read_lines(stream, delimiter=delimiter):
                if not line and not keep_empty:
                    continue
                key, value = _split(line, sep, args.null)
                tally.attempted += 1
                try:
                    fut = await producer.send(args.topic, value, key=key, partition=args.partition,
                                              headers=headers or None)
                except (errors.RecordTooLargeError, errors.SerializationError) as exc:
                    tally.fail(exc)
                    continue
                tally.track(fut)
            await producer.flush()
            if tally.pending:
                await asyncio.gather(*list(tally.pending), return_exceptions=True)
    finally:
        progress.close()
        if stream is not sys.stdin.buffer:
            stream.close()
    elapsed = time.monotonic() - start
    if tally.first_error is not None:
        raise CLIError(f"{tally.failed} of {tally.attempted} records failed ({tally.delivered} delivered to "
                       f"{args.topic}); first error: {tally.first_error}")
    if not args.quiet:
        print(f"produced {tally.delivered} records to {args.topic} in {elapsed:.2f} s", file=sys.stderr)
    return 0


COMMANDS = (Action(
    "produce", run, "produce lines from stdin or a file",
    "Produce one record per line of stdin (or --file). Empty lines are skipped unless --keep-empty. Every "
    "producer setting is available through -X.", args=(
        arg("topic", metavar="TOPIC"),
        arg("-f", "--file", type=Path, help="read lines from this file instead of stdin"),
        arg("-K", "--key-separator", metavar="SEP",
            help=r"split each line at the first SEP into key and value (e.g. ':' or '\t'); lines without it "
                 "get no key"),
        arg("-H", "--header", action="append", default=[], metavar="KEY=VALUE",
            help="a header added to every record; repeatable"),
        arg("-p", "--partition", type=int, default=None, help="send every record to this partition"),
        arg("-z", "--compression", choices=COMPRESSIONS, default=None,
            help="batch compression (compression.type)"),
        arg("-a", "--acks", choices=ACKS, default=None, help="acks setting"),
        arg("--keep-empty", action="store_true", help="produce empty lines as empty values"),
        arg("-D", "--delimiter", default=None, metavar="DELIM",
            help=r"records are separated by DELIM instead of a newline (e.g. '|' or '\0')"),
        arg("-Z", "--null", action="store_true",
            help="an empty value or key is sent as NULL (a tombstone); empty lines are kept"),
        arg("--progress", action=argparse.BooleanOptionalAction, default=None,
            help="progress bar on stderr (default: on for a file when stderr is a terminal)"),
        arg("-q", "--quiet", action="store_true", help="no summary line on stderr"),
    )),)

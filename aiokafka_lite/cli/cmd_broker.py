"""``aiokafka-lite broker``: the embedded development broker in the foreground, until Ctrl-C/SIGTERM."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from ._commands import Action, arg
from ._runtime import CLIError


def run(args: argparse.Namespace) -> int:
    from ..embedded import EmbeddedBroker

    if not 0 <= args.port < 65536:
        raise CLIError(f"--port must be in 0..65535, got {args.port}", code=2)
    if args.data_dir is not None and args.kind != "noida":
        raise CLIError("--data-dir applies to --kind noida only (tansu keeps data in memory)", code=2)
    broker = EmbeddedBroker(args.kind, host=args.host, port=args.port or None, data_dir=args.data_dir,
                            log_dir=args.log_dir)
    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        broker.start(args.start_timeout)
        print(f"{args.kind} broker listening on {broker.bootstrap} (pid {broker.pid}); "
              f"Ctrl-C or SIGTERM stops it", flush=True)
        if args.log_dir is not None:
            print(f"log: {broker.log_path}", flush=True)
        while not stop.is_set():
            code = broker.wait(timeout=0.25)
            if code is not None:
                last = broker.log_tail(1).strip()
                raise CLIError(f"{args.kind} broker (pid {broker.pid}) exited with status {code}"
                               + (f": {last}" if last else ""))
        print(f"stopping {args.kind} broker (pid {broker.pid})", file=sys.stderr, flush=True)
    finally:
        broker.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


COMMANDS = (Action(
    "broker", run, "run the embedded development broker (Tansu or noida-db)",
    "Run a local Kafka-protocol broker on a loopback port until Ctrl-C or SIGTERM. Tansu keeps everything in "
    "memory; noida-db keeps data in --data-dir.", is_async=False, args=(
        arg("--kind", choices=("tansu", "noida"), default="tansu", help="which broker (default: tansu)"),
        arg("--port", type=int, default=9092, help="port on 127.0.0.1 (default: 9092; 0 for a free one)"),
        arg("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"),
        arg("--data-dir", type=Path, default=None, help="noida-db's data directory (default: temporary)"),
        arg("--log-dir", type=Path, default=None,
            help="keep the broker's log here (default: a temporary directory)"),
        arg("--start-timeout", type=float, default=20.0, metavar="SECONDS"),
    )),)

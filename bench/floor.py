"""The machine's floor for producing and consuming records, measured in the same run as the clients.

Producing a record costs at least: copying its value into a batch-sized buffer, checksumming the batch
(CRC32C) and handing the batch to the kernel over a loopback socket. Consuming costs at least the mirror:
receiving the batch from the kernel, checksumming it, and handing out one object per record (a ``bytes``
of the value). This script does exactly that and nothing else, in a child process whose CPU (user +
system, ``getrusage``) is counted over the timed part, against a peer process on the other end of a
loopback socket (a sink that discards what it reads, or a source that writes prebuilt batches), so
the figures are comparable with the clients' CPU per record in ``bench/matrix.py``, which prints each
client's CPU as a multiple of this floor.

Each batch is filled with one C-level join of its values (a single copy of the bytes, as a batch
builder makes), so Python's per-record call overhead is mostly outside the produce floor; the consume
floor slices one ``bytes`` per record, the one object a client must hand out.

    python bench/floor.py [--values 10 100 1024 16384 262144] [--batch-size 262144] [--mib 64]

The last line printed is one JSON object: per value size, ``produce_us`` and ``consume_us`` (CPU µs per
record, the median of ``--rounds`` runs).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

import google_crc32c

DEFAULT_VALUES = (10, 100, 1024, 16384, 262144)
OVERHEAD = 20  # a record's framing in a v2 batch (length, attributes, deltas, key and header counts)


def _crc_fn() -> Any:
    """google-crc32c's C ``crc32c_extend``, called on the buffer itself (its Python API takes only
    ``bytes``, which would add a copy no client makes); None where the C library is not there."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from aiokafka_lite.records._crc import extend_address

    addr = extend_address()
    if not addr:
        return None
    return ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t)(addr)


_CRC = _crc_fn()


def crc32c(buf: bytearray | bytes) -> int:
    """CRC-32C of ``buf`` without copying it."""
    if _CRC is None:
        return int(google_crc32c.value(bytes(buf)))
    if isinstance(buf, bytes):
        return int(_CRC(0, ctypes.cast(ctypes.c_char_p(buf), ctypes.c_void_p), len(buf)))
    return int(_CRC(0, ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf)), len(buf)))


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _records(value_bytes: int, mib: int) -> int:
    return max(2000, min(2_000_000, (mib << 20) // max(value_bytes, 64)))


def _batches(value_bytes: int, batch_size: int, n: int) -> list[int]:
    """How many records each batch holds: as many as fit in ``batch_size`` (at least one)."""
    per = max(1, batch_size // (value_bytes + OVERHEAD))
    out = [per] * (n // per)
    if n % per:
        out.append(n % per)
    return out


def _sink(port: int) -> None:
    """Read and discard until the writer closes."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        buf = bytearray(1 << 20)
        while s.recv_into(buf):
            pass


def _source(port: int, value_bytes: int, batch_size: int, n: int) -> None:
    """Write ``n`` records' worth of framed batches (4-byte length, CRC32C, body), then close."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        value = bytes(value_bytes)
        for count in _batches(value_bytes, batch_size, n):
            body = value * count
            crc = google_crc32c.value(body)
            s.sendall(len(body).to_bytes(4, "big") + crc.to_bytes(4, "big") + body)


def _read_exact(rfile: Any, n: int) -> bytes:
    """``n`` bytes, or b"" at the end of the stream: a raw socket file's read() may return fewer (a frame
    head split across segments was read short, and the floor then failed its CRC check)."""
    out = b""
    while len(out) < n:
        chunk = rfile.read(n - len(out))
        if not chunk:
            if out:
                raise RuntimeError(f"floor: the stream ended inside a frame head ({len(out)} of {n} bytes)")
            return b""
        out += chunk
    return out


def produce_floor(value_bytes: int, batch_size: int, n: int) -> float:
    """CPU seconds of copying ``n`` values into batches, checksumming and sending them to a sink."""
    values = [os.urandom(value_bytes) for _ in range(16)]
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        peer = subprocess.Popen([sys.executable, __file__, "--_sink", str(port)])
        conn, _ = server.accept()
    try:
        batches = _batches(value_bytes, batch_size, n)
        c0 = _cpu()
        i = 0
        for count in batches:
            # one copy of the values into the batch, as a builder's store receives them
            batch = b"".join([values[(i + k) & 15] for k in range(count)])
            i += count
            crc = crc32c(batch)
            conn.sendall(crc.to_bytes(4, "big") + batch)
        cpu = _cpu() - c0
    finally:
        conn.close()
        peer.wait(timeout=60)
    return cpu


def consume_floor(value_bytes: int, batch_size: int, n: int) -> float:
    """CPU seconds of receiving ``n`` records in batches, checking each CRC32C and slicing one
    ``bytes`` per record."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        peer = subprocess.Popen([sys.executable, __file__, "--_source", str(port), str(value_bytes),
                                 str(batch_size), str(n)])
        conn, _ = server.accept()
    rfile = conn.makefile("rb", buffering=0)
    try:
        # one receive buffer for the run, as a client's reader reuses its buffer
        per = _batches(value_bytes, batch_size, n)[0]
        store = bytearray(per * value_bytes)
        whole = memoryview(store)
        got = 0
        c0 = _cpu()
        while True:
            head = _read_exact(rfile, 8)
            if not head:
                break
            size = int.from_bytes(head[:4], "big")
            view = whole[:size]
            pos = 0
            while pos < size:
                pos += rfile.readinto(view[pos:])
            if crc32c(store if size == len(store) else store[:size]) != int.from_bytes(head[4:], "big"):
                raise RuntimeError("floor: CRC32C mismatch")
            got += len([view[o:o + value_bytes].tobytes() for o in range(0, size, value_bytes)])
        cpu = _cpu() - c0
    finally:
        rfile.close()  # the file holds the socket open: the writer would wait on a reader that is gone
        conn.close()
        peer.wait(timeout=60)
    if got != n:
        raise RuntimeError(f"floor: consumed {got} of {n} records")
    return cpu


def measure(value_bytes: int, batch_size: int, mib: int, rounds: int) -> dict[str, Any]:
    """The floor for one value size: CPU µs per record, produce and consume (medians of ``rounds``)."""
    n = _records(value_bytes, mib)
    prod = [produce_floor(value_bytes, batch_size, n) / n * 1e6 for _ in range(rounds)]
    cons = [consume_floor(value_bytes, batch_size, n) / n * 1e6 for _ in range(rounds)]
    return {"value": value_bytes, "records": n, "batch_size": batch_size,
            "produce_us": round(statistics.median(prod), 4), "consume_us": round(statistics.median(cons), 4)}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--_sink":
        _sink(int(sys.argv[2]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--_source":
        _source(*(int(a) for a in sys.argv[2:6]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--values", type=int, nargs="+", default=list(DEFAULT_VALUES))
    ap.add_argument("--batch-size", type=int, default=262144)
    ap.add_argument("--mib", type=int, default=64, help="MiB of values per run (fewer for tiny values)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    cells = []
    for v in args.values:
        cell = measure(v, args.batch_size, args.mib, args.rounds)
        print(f"{v:>7} B  produce {cell['produce_us']:>9.4f} us/record  consume {cell['consume_us']:>9.4f} "
              f"us/record  ({cell['records']} records)", flush=True)
        cells.append(cell)
    print(json.dumps({"bench": "floor", "cells": cells, "seconds": round(time.perf_counter() - t0, 1)}))


if __name__ == "__main__":
    main()

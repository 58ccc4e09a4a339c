"""A request frame in parts, its large byte values (record batches) left where they are.

``encode_request`` builds a frame in one bytearray: every record batch of a Produce request is copied
into it, into freshly allocated memory the kernel first has to fault in and zero, and then copied again
into the socket. :func:`encode_request_parts` gives the same bytes as a list instead: the request's own
fields in pieces of the buffer, and each byte value of :data:`SCATTER_MIN` bytes or more as the object
the caller passed (the batch's ``bytes``), so the connection writes it to the socket directly.
"""

from __future__ import annotations

from ._codec import INT32, SCATTER_MIN

__all__ = ["SCATTER_MIN", "encode_request_parts", "frame_size", "scatter_buffer"]

Buffer = bytes | bytearray | memoryview


class _ScatterBuffer(bytearray):
    """A bytearray with the large byte values that belong in it noted, not copied: the byte-value writers
    of _codec (``_put_value``) add to ``spans``; every other write is the bytearray's own."""

    __slots__ = ("size", "spans")

    spans: list[tuple[int, Buffer]]
    #: Bytes kept out of line so far.
    size: int


def scatter_buffer(initial: bytes) -> _ScatterBuffer:
    # Its fields set here, not in a Python-level __init__ (and super().__init__): once per Produce request.
    out = _ScatterBuffer(initial)
    out.spans = []
    out.size = 0
    return out


def encode_request_parts(out: _ScatterBuffer) -> list[Buffer]:
    """Finish a frame built in ``out`` (whose first four bytes are the size prefix): its parts in order."""
    INT32.pack_into(out, 0, len(out) + out.size - 4)
    if not out.spans:
        return [out]
    view = memoryview(out)
    parts: list[Buffer] = []
    at = 0
    for pos, value in out.spans:
        parts.append(view[at:pos])
        parts.append(value)
        at = pos
    parts.append(view[at:])
    return parts


def frame_size(parts: list[Buffer]) -> int:
    return sum(len(p) for p in parts)

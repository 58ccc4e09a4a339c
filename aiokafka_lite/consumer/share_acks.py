"""Acknowledgement bookkeeping of a share consumer (KIP-932), sans-I/O.

In a share group the broker *acquires* records for a member for a time (the acquisition lock); the member
must acknowledge each one, as accepted (done), released (deliver again, maybe elsewhere) or rejected
(never again). Offsets the broker acquired but whose record the member never sees (control records,
compacted-away offsets) are acknowledged as gaps. What is not acknowledged before the lock expires comes
back, with its delivery count raised.

Per partition this module keeps what is acquired (offset -> delivery count), what was handed to the
application and awaits its acknowledgement, and what is due to be sent. It also tells *fresh* acquisitions
from repeats: a broker may list in a ShareFetch answer records the member already holds (librdkafka's
mock lists every record the member holds, rdkafka_mock_handlers.c, ``write_acquired_records``), and a
record must reach the application once per delivery.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from .. import errors as Errors
from ..protocol.messages import share_acknowledge, share_fetch
from ..structs import TopicPartition

#: The two messages' AcknowledgementBatch classes (ShareFetch and ShareAcknowledge), the same fields.
_B = TypeVar("_B", share_fetch.AcknowledgementBatch, share_acknowledge.AcknowledgementBatch)

GAP, ACCEPT, RELEASE, REJECT = 0, 1, 2, 3
#: The acknowledgement types an application may give, by name (KIP-932's AcknowledgeType).
ACK_TYPES = {"accept": ACCEPT, "release": RELEASE, "reject": REJECT}


@dataclass
class _Partition:
    acquired: dict[int, int] = field(default_factory=dict)  # offset -> delivery count
    delivered: dict[int, int] = field(default_factory=dict)  # handed out, awaiting the application
    pending: dict[int, int] = field(default_factory=dict)  # offset -> type, to send


class AckBook:
    """What every partition of a share consumer holds and owes (see the module docstring)."""

    def __init__(self) -> None:
        self._parts: dict[TopicPartition, _Partition] = {}

    def _p(self, tp: TopicPartition) -> _Partition:
        p = self._parts.get(tp)
        if p is None:
            p = self._parts[tp] = _Partition()
        return p

    # -- from the broker -------------------------------------------------------------------------------
    def acquired(self, tp: TopicPartition, ranges: Iterable[tuple[int, int, int]]) -> dict[int, int]:
        """Record the (first, last, delivery count) ranges of an answer; return the fresh offsets (with
        their delivery counts): those not already held at that count."""
        p = self._p(tp)
        fresh: dict[int, int] = {}
        for first, last, count in ranges:
            for off in range(first, last + 1):
                if p.acquired.get(off) != count and off not in p.pending:
                    fresh[off] = count
        p.acquired.update(fresh)
        return fresh

    def gaps(self, tp: TopicPartition, offsets: Iterable[int]) -> None:
        """Acquired offsets without a record (control records, compaction): acknowledged as gaps."""
        p = self._p(tp)
        for off in offsets:
            if off in p.acquired:
                p.pending[off] = GAP

    def drop_undelivered(self, tp: TopicPartition, offsets: Iterable[int]) -> None:
        """Fresh records never handed out (buffered when the session was lost): forget them."""
        p = self._parts.get(tp)
        if p is not None:
            for off in offsets:
                p.acquired.pop(off, None)

    # -- to and from the application -----------------------------------------------------------------
    def delivered(self, tp: TopicPartition, offsets: Iterable[int]) -> None:
        p = self._p(tp)
        for off in offsets:
            p.delivered[off] = p.acquired.get(off, 1)

    def acknowledge(self, tp: TopicPartition, offset: int, ack_type: int) -> None:
        p = self._parts.get(tp)
        if p is None or offset not in p.delivered:
            raise Errors.IllegalStateError(
                f"{tp.topic}[{tp.partition}] offset {offset} is not a record of this share consumer's last "
                f"poll() awaiting acknowledgement (acknowledged already, or never delivered)")
        del p.delivered[offset]
        p.pending[offset] = ack_type

    def accept_delivered(self) -> None:
        """Implicit mode: everything handed out is accepted."""
        for p in self._parts.values():
            for off in p.delivered:
                p.pending[off] = ACCEPT
            p.delivered.clear()

    def unacknowledged(self) -> int:
        return sum(len(p.delivered) for p in self._parts.values())

    # -- to the broker ---------------------------------------------------------------------------------
    def has_pending(self, tps: Iterable[TopicPartition] | None = None) -> bool:
        parts = self._parts.values() if tps is None else (self._parts.get(tp) for tp in tps)
        return any(p is not None and p.pending for p in parts)

    def take_pending(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, dict[int, int]]:
        """The acknowledgements due for ``tps``, removed from the book (sent now, answered or not)."""
        out: dict[TopicPartition, dict[int, int]] = {}
        for tp in tps:
            p = self._parts.get(tp)
            if p is None or not p.pending:
                continue
            out[tp] = p.pending
            for off in p.pending:
                p.acquired.pop(off, None)
            p.pending = {}
        return out

    def forget(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, dict[int, int]]:
        """The share session holding these partitions' locks is gone (the broker released them): drop
        what they held; return the acknowledgements that can no longer be sent."""
        lost: dict[TopicPartition, dict[int, int]] = {}
        for tp in tps:
            p = self._parts.pop(tp, None)
            if p is not None and (p.pending or p.delivered):
                lost[tp] = {**{o: ACCEPT for o in p.delivered}, **p.pending}
        return lost


def ack_batches(acks: dict[int, int], cls: type[_B]) -> list[_B]:
    """Acknowledgements as the protocol's batches: runs of consecutive offsets, ascending, each with one
    type when the whole run shares it, else one type per offset."""
    out: list[_B] = []
    offsets = sorted(acks)
    i = 0
    while i < len(offsets):
        j = i
        while j + 1 < len(offsets) and offsets[j + 1] == offsets[j] + 1:
            j += 1
        types = [acks[o] for o in offsets[i:j + 1]]
        if all(t == types[0] for t in types):
            types = [types[0]]
        out.append(cls(first_offset=offsets[i], last_offset=offsets[j], acknowledge_types=types))
        i = j + 1
    return out

"""One partition's data from one Fetch response, as the fetcher buffers it until poll() takes records.

Kept raw (the response's record bytes) until poll() decodes it, as objects or as Arrow, from the
partition's position: the broker is asked for more while the application works on what it has.
"""

from __future__ import annotations

from typing import Any

from ..structs import ConsumerRecord, TopicPartition


class CompletedFetch:
    """One partition's data from one Fetch response, consumed by poll() from ``position`` on."""

    __slots__ = ("aborted", "arrow", "arrow_index", "data", "fetch_offset", "index", "leader_epoch",
                 "next_offset", "position", "records", "tp")

    def __init__(self, tp: TopicPartition, fetch_offset: int, data: bytes,
                 aborted: list[tuple[int, int]] | None) -> None:
        self.tp = tp
        self.fetch_offset = fetch_offset
        #: Where the unconsumed part starts; must equal the partition's position to hand anything out.
        self.position = fetch_offset
        self.data = data
        self.aborted = aborted
        self.records: list[ConsumerRecord] | None = None
        self.index = 0
        self.arrow: Any = None
        self.arrow_index = 0
        self.next_offset = fetch_offset
        self.leader_epoch = -1

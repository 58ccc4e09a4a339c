"""Incremental fetch sessions (KIP-227), one per broker node; sans-I/O.

A full fetch (session id 0, epoch 0) lists every partition and asks the broker to open a session. While the
session lives, each request lists only partitions that are new or whose parameters changed (usually the fetch
offset, after data came back) and names those to drop in ``forgotten``; the broker answers only for
partitions with news. Any session error, a broken connection, or a response naming a partition outside the
session sends us back to a full fetch, which is always correct, only bigger.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from .. import errors as Errors
from ..structs import TopicPartition

INITIAL_EPOCH = 0
#: Session epoch meaning "full fetch, do not create a session" (used when the broker offers none).
FINAL_EPOCH = -1
_MAX_EPOCH = 2**31 - 1

#: Top-level errors that end the session.
SESSION_ERRORS = frozenset(cls.errno for cls in (Errors.FetchSessionIdNotFoundError,
                                                 Errors.InvalidFetchSessionEpochError,
                                                 Errors.FetchSessionTopicIdError))


class FetchPosition(NamedTuple):
    """What we ask of one partition; equality decides whether an incremental request must resend it."""

    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    topic_id: uuid.UUID | None = None


@dataclass
class FetchRequestData:
    """One request's content: ``to_send`` goes in Topics, ``to_forget`` in ForgottenTopicsData."""

    session_id: int
    epoch: int
    to_send: dict[TopicPartition, FetchPosition]
    to_forget: list[TopicPartition]
    #: Every partition the response may carry data for (the whole session for incremental fetches).
    session_partitions: dict[TopicPartition, FetchPosition] = field(default_factory=dict)

    @property
    def is_full(self) -> bool:
        return self.epoch in (INITIAL_EPOCH, FINAL_EPOCH)


class FetchSessionHandler:
    """Client side of one node's fetch session."""

    def __init__(self, node_id: int, enabled: bool = True) -> None:
        self.node_id = node_id
        self.enabled = enabled
        self.session_id = 0
        self.epoch = INITIAL_EPOCH if enabled else FINAL_EPOCH
        self._session: dict[TopicPartition, FetchPosition] = {}
        self.full_fetches = 0
        self.incremental_fetches = 0
        #: Whether the session names topics by id (Fetch v13+); a switch needs a new session.
        self.topic_ids: bool | None = None

    def build(self, wanted: Mapping[TopicPartition, FetchPosition]) -> FetchRequestData:
        """The next request for exactly the partitions in ``wanted`` (in their order)."""
        if self.session_id == 0 or self.epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            self.full_fetches += 1
            return FetchRequestData(0, self.epoch, dict(wanted), [], dict(wanted))
        old = self._session
        for tp, pos in wanted.items():
            prev = old.get(tp)
            if prev is not None and prev.topic_id != pos.topic_id:
                # A topic was recreated under the same name: start over rather than mix ids.
                self.reset()
                return self.build(wanted)
        to_send = {tp: pos for tp, pos in wanted.items() if old.get(tp) != pos}
        to_forget = [tp for tp in old if tp not in wanted]
        self.incremental_fetches += 1
        return FetchRequestData(self.session_id, self.epoch, to_send, to_forget, dict(wanted))

    def handle_response(self, request: FetchRequestData, error_code: int, session_id: int,
                        partitions: Iterable[TopicPartition]) -> bool:
        """Advance the session after a response; False when the response must be ignored (bad session)."""
        if error_code:
            # The whole response is void (partition errors come per partition with code 0 here).
            self.reset()
            return False
        if request.is_full:
            if not self.enabled or session_id == 0:
                # No session offered (or none wanted): keep sending full fetches.
                self.session_id = 0
                self.epoch = INITIAL_EPOCH if self.enabled else FINAL_EPOCH
                self._session = {}
            else:
                self.session_id = session_id
                self.epoch = 1
                self._session = dict(request.session_partitions)
            return True
        if session_id != self.session_id:
            self.reset()
            return False
        unknown = [tp for tp in partitions if tp not in request.session_partitions]
        if unknown:
            self.reset()
            return False
        self._session = dict(request.session_partitions)
        self.epoch = 1 if self.epoch >= _MAX_EPOCH else self.epoch + 1
        return True

    def handle_error(self) -> None:
        """The request failed (connection lost, timeout): the broker's session state is unknown."""
        self.reset()

    def reset(self) -> None:
        self.session_id = 0
        self.epoch = INITIAL_EPOCH if self.enabled else FINAL_EPOCH
        self._session = {}

"""Which connection to a broker a request travels on: one per request class, as franz-go keeps them.

A broker answers the requests of one connection in order. A JoinGroup it holds until the rebalance
ends, a Fetch it holds up to ``fetch_max_wait_ms``, a large Produce: each would delay whatever was
queued behind it on a shared connection -- a Metadata refresh, an admin call, the group's heartbeat.
So each broker gets up to four connections, opened on first use: *produce*, *fetch* (Fetch,
ShareFetch, ShareAcknowledge), *coordinator* (group membership, offsets and transaction markers sent
to a group or transaction coordinator) and the plain one for everything else (Metadata, ApiVersions,
ListOffsets, FindCoordinator, admin requests, telemetry), which is the only one that counts when the
client looks for a connected broker.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["COORDINATOR", "FETCH", "PRODUCE", "Lane", "key_for", "lane_key"]

PRODUCE = "produce"
FETCH = "fetch"
COORDINATOR = "coordinator"


class Lane(NamedTuple):
    """A connection pool key: ``node``'s connection for one request class (the plain one is the bare
    node id)."""

    node: int
    name: str


_BY_API_KEY: dict[int, str] = {
    0: PRODUCE,  # Produce
    1: FETCH,  # Fetch
    78: FETCH,  # ShareFetch
    79: FETCH,  # ShareAcknowledge
    8: COORDINATOR,  # OffsetCommit
    9: COORDINATOR,  # OffsetFetch
    11: COORDINATOR,  # JoinGroup
    12: COORDINATOR,  # Heartbeat
    13: COORDINATOR,  # LeaveGroup
    14: COORDINATOR,  # SyncGroup
    24: COORDINATOR,  # AddPartitionsToTxn
    25: COORDINATOR,  # AddOffsetsToTxn
    26: COORDINATOR,  # EndTxn
    28: COORDINATOR,  # TxnOffsetCommit
    68: COORDINATOR,  # ConsumerGroupHeartbeat
    76: COORDINATOR,  # ShareGroupHeartbeat
}


def lane_key(node: int, api_key: int | None) -> int | Lane:
    """The pool key for a request of ``api_key`` to ``node`` (None: the plain connection)."""
    name = _BY_API_KEY.get(api_key) if api_key is not None else None
    return node if name is None else Lane(node, name)


def key_for(node: int, request_cls: object) -> int | Lane:
    """The pool key for requests of ``request_cls`` (a generated request class, an instance, or None for
    the plain connection) to ``node``."""
    return lane_key(node, getattr(request_cls, "API_KEY", None))

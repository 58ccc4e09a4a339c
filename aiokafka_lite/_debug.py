"""Debug logging by context, as librdkafka's ``debug`` setting: ``debug="protocol,broker,cgrp"`` or "all".

Each context is a logger, ``aiokafka_lite.debug.<context>`` (the lines themselves are written by
``net/debuglog.py``); a client with the setting writes its debug
lines there (at DEBUG) and sets those loggers to DEBUG. Lines summarize, they never dump: a request is its
API, version, correlation id and broker; a response adds its latency and the error codes it carries.
Payloads never appear -- a SaslAuthenticate request carries the password, a Produce the records.

| context | what |
|---|---|
| protocol | every request and response not covered by a more specific context that is on |
| broker | connections: opened (negotiated versions count, SASL), closed and why |
| msg | Produce requests and responses |
| fetch | Fetch, ListOffsets, OffsetForLeaderEpoch, ShareFetch requests and responses |
| cgrp | group requests (FindCoordinator, Join/Sync/Heartbeat/Leave, offset commit and fetch, KIP-848) |
| eos | InitProducerId and the transaction requests |
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

__all__ = ["CONTEXTS", "context_of", "enable", "logger", "parse"]

CONTEXTS = ("protocol", "broker", "msg", "fetch", "cgrp", "eos")

#: API key -> the context its requests belong to (others: "protocol").
_API_CONTEXT = {
    0: "msg",
    1: "fetch", 2: "fetch", 23: "fetch", 78: "fetch", 79: "fetch",
    8: "cgrp", 9: "cgrp", 10: "cgrp", 11: "cgrp", 12: "cgrp", 13: "cgrp", 14: "cgrp", 68: "cgrp", 76: "cgrp",
    22: "eos", 24: "eos", 25: "eos", 26: "eos", 28: "eos",
}

_LOGGERS = {name: logging.getLogger(f"aiokafka_lite.debug.{name}") for name in CONTEXTS}


def parse(value: Any) -> str:
    """Validate and normalize a ``debug`` value ("a,b", a list, or "all") to "a,b" in canonical order."""
    items: Iterable[Any]
    if isinstance(value, str):
        items = [s.strip() for s in value.split(",") if s.strip()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = value
    else:
        raise ValueError(f"expected a comma-separated string of contexts, got {type(value).__name__}")
    wanted: set[str] = set()
    for item in items:
        name = str(item).strip().lower()
        if name == "all":
            wanted.update(CONTEXTS)
        elif name in CONTEXTS:
            wanted.add(name)
        else:
            raise ValueError(f"unknown debug context {item!r}; known: {', '.join(CONTEXTS)}, all")
    return ",".join(c for c in CONTEXTS if c in wanted)


def enable(contexts: frozenset[str]) -> None:
    """Turn the contexts' loggers on. If logging is not configured at all, add a stderr handler (librdkafka
    writes its debug log to stderr too), so that the setting alone shows something."""
    base = logging.getLogger("aiokafka_lite.debug")
    for name in contexts:
        _LOGGERS[name].setLevel(logging.DEBUG)
    if contexts and not logging.getLogger().handlers and not base.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
        base.addHandler(handler)


def context_of(api_key: int, contexts: frozenset[str]) -> str | None:
    """Where a request of ``api_key`` is logged given the contexts on (None: nowhere)."""
    ctx = _API_CONTEXT.get(api_key, "protocol")
    if ctx in contexts:
        return ctx
    return "protocol" if "protocol" in contexts else None


def logger(context: str) -> logging.Logger:
    return _LOGGERS[context]

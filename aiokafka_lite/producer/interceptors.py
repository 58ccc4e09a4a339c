"""Producer interceptors (Java's ProducerInterceptor): see or rewrite records, see acknowledgements.

An interceptor is any object with ``on_send(record: ProducerRecord) -> ProducerRecord | None`` and/or
``on_acknowledgement(metadata: RecordMetadata | None, error: BaseException | None)``. ``on_send`` runs
in ``send()`` before serialization and partitioning and may return a changed record (None keeps it);
``on_acknowledgement`` runs once per record when its batch is answered or fails. As in Java, an
interceptor that raises is logged and skipped: a monitoring hook must not break producing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..structs import RecordMetadata

__all__ = ["Interceptors", "ProducerRecord"]

log = logging.getLogger("aiokafka_lite.producer")


class ProducerRecord(NamedTuple):
    """A record as handed to ``send()``, before serialization."""

    topic: str
    value: Any = None
    key: Any = None
    partition: int | None = None
    timestamp_ms: int | None = None
    headers: Sequence[tuple[str, bytes | None]] | None = None


class Interceptors:
    """The configured chain, called in order."""

    __slots__ = ("_ack", "_send")

    def __init__(self, interceptors: Sequence[Any]) -> None:
        self._send = [i.on_send for i in interceptors if hasattr(i, "on_send")]
        self._ack = [i.on_acknowledgement for i in interceptors if hasattr(i, "on_acknowledgement")]

    @property
    def wants_acks(self) -> bool:
        return bool(self._ack)

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        for fn in self._send:
            try:
                out = fn(record)
            except Exception:
                log.exception("interceptor %r failed in on_send; record passed on unchanged", fn)
                continue
            if out is not None:
                if not isinstance(out, ProducerRecord):
                    log.error("interceptor %r returned %r, not a ProducerRecord; ignored", fn, type(out))
                    continue
                record = out
        return record

    def on_acknowledgement(self, metadata: RecordMetadata | None, error: BaseException | None) -> None:
        for fn in self._ack:
            try:
                fn(metadata, error)
            except Exception:
                log.exception("interceptor %r failed in on_acknowledgement", fn)

"""Argument checks and small helpers of the public Consumer, kept out of consumer.py to keep it readable."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .. import errors as Errors
from ..config import Config
from ..structs import ConsumerRecord, OffsetAndMetadata, TopicPartition
from .group848 import CLASSIC_ONLY_SETTINGS

if TYPE_CHECKING:
    from ..net import KafkaClient
    from .subscription import SubscriptionState


def _check_group_protocol(cfg: Config, given: Mapping[str, Any]) -> None:
    """Settings that belong to the other group protocol are refused, as the Java client refuses them."""
    if cfg.group_protocol == "consumer":
        for name in CLASSIC_ONLY_SETTINGS:
            if name in given:
                raise Errors.ConfigError(
                    f"setting {name!r} belongs to group_protocol='classic'; with group_protocol='consumer' "
                    f"the broker assigns partitions and sets session and heartbeat timing (leave it out, "
                    f"or use group_remote_assignor to pick the broker's assignor)")
    elif given.get("group_remote_assignor") is not None:
        raise Errors.ConfigError("setting 'group_remote_assignor' needs group_protocol='consumer'")


def _offset_and_metadata(value: Any) -> OffsetAndMetadata:
    if isinstance(value, OffsetAndMetadata):
        om = value
    elif isinstance(value, tuple) and len(value) == 2:
        om = OffsetAndMetadata(value[0], value[1] or "")
    else:
        om = OffsetAndMetadata(value, "")
    if not isinstance(om.offset, int) or isinstance(om.offset, bool) or om.offset < 0:
        raise Errors.IllegalArgumentError(f"offsets to commit must be non-negative ints, got {om.offset!r}")
    if not isinstance(om.metadata, str):
        raise Errors.IllegalArgumentError(f"commit metadata must be a str, got {om.metadata!r}")
    return om


def _spread(partitions: tuple[Any, ...]) -> set[TopicPartition]:
    """``pause(tp, tp2)`` as aiokafka takes them, or ``pause([tp, tp2])`` as Java does: the partitions."""
    if len(partitions) == 1 and not isinstance(partitions[0], TopicPartition) and \
            isinstance(partitions[0], (list, tuple, set, frozenset)):
        partitions = tuple(partitions[0])
    return _partitions(partitions)


def _partitions(partitions: Iterable[TopicPartition]) -> set[TopicPartition]:
    tps = set(partitions)
    for tp in tps:
        if not isinstance(tp, TopicPartition):
            raise Errors.IllegalArgumentError(f"expected TopicPartition, got {tp!r}")
    return tps


async def _maybe_await(value: Any) -> Any:
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        return await value
    return value


def _make_client(config: Config) -> KafkaClient:
    from ..net import KafkaClient

    # A call waiting when stop() closes the client raises the consumer's own "stopped" error.
    return KafkaClient(config, closed_error=Errors.ConsumerStoppedError)


def deserialize(result: dict[TopicPartition, list[ConsumerRecord]], kd: Callable[[Any], Any] | None,
                vd: Callable[[Any], Any] | None, subs: SubscriptionState
                ) -> dict[TopicPartition, list[ConsumerRecord]]:
    """The records with the deserializers applied. If one fails, nothing of this poll is delivered: every
    partition goes back to where the poll started, and SerializationError names the record."""
    out: dict[TopicPartition, list[ConsumerRecord]] = {}
    for tp, records in result.items():
        converted = []
        for r in records:
            try:
                converted.append(r._replace(key=kd(r.key) if kd is not None else r.key,
                                            value=vd(r.value) if vd is not None else r.value))
            except Exception as exc:
                for tp2, recs in result.items():
                    if subs.is_assigned(tp2) and recs:
                        subs.seek(tp2, recs[0].offset, recs[0].leader_epoch)
                raise Errors.SerializationError(
                    f"deserializing the record at {tp.topic}[{tp.partition}] offset {r.offset} failed: "
                    f"{exc!r}; seek past it to skip it") from exc
        out[tp] = converted
    return out

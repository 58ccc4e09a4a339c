"""Argument checks and small helpers of the public Consumer, kept out of consumer.py to keep it readable."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from .. import errors as Errors
from ..config import Config
from ..structs import OffsetAndMetadata, TopicPartition
from .group848 import CLASSIC_ONLY_SETTINGS


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


def _make_client(config: Config) -> Any:
    from ..net import KafkaClient

    return KafkaClient(config)

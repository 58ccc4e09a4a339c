"""A started consumer's seek_to_*() refuse what is not a TopicPartition with the documented
IllegalArgumentError (a ValueError) at once, before touching the subscription."""

from __future__ import annotations

from typing import Any

import pytest

from aiokafka_lite import Consumer, errors
from aiokafka_lite.structs import TopicPartition


async def test_seek_to_with_a_non_partition_is_illegal_argument(tansu: Any, new_topic: Any) -> None:
    topic = new_topic()
    async with Consumer(bootstrap_servers=tansu.bootstrap, allow_auto_create_topics=True) as consumer:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        for call in (consumer.seek_to_beginning, consumer.seek_to_end):
            with pytest.raises(errors.IllegalArgumentError, match="TopicPartition"):
                await call(1)  # type: ignore[arg-type]
            with pytest.raises(errors.IllegalArgumentError, match="TopicPartition"):
                await call(tp, "t")  # type: ignore[arg-type]
        with pytest.raises(errors.IllegalArgumentError, match="TopicPartition"):
            await consumer.seek_to_committed(1)  # type: ignore[arg-type]
        await consumer.seek_to_beginning(tp)
        assert await consumer.position(tp) == 0

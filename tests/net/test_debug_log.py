"""The ``debug`` setting: request/response summaries per context, and never a secret in a line.

SASL PLAIN through the SASL front (``aiokafka_lite.testing.sasl_front``) in front of Tansu: the
SaslAuthenticate request carries the password, so every line of every context is searched for it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest

from aiokafka_lite import Consumer, Producer, TopicPartition
from aiokafka_lite._debug import parse
from aiokafka_lite.errors import ConfigError
from aiokafka_lite.testing.sasl_front import SaslBroker

PASSWORD = "pw-Zq83-never-logged"
USERS = {"debug-user": PASSWORD}


@pytest.fixture(scope="module")
def plain_broker() -> Iterator[SaslBroker]:
    with SaslBroker(USERS, mechanisms=("PLAIN",)) as broker:
        yield broker


def _sasl(broker: SaslBroker) -> dict[str, Any]:
    return {"bootstrap_servers": broker.bootstrap, "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN", "sasl_plain_username": "debug-user", "sasl_plain_password": PASSWORD,
            "request_timeout_ms": 10000}


def test_debug_setting_parses_contexts() -> None:
    assert parse("all") == "protocol,broker,msg,fetch,cgrp,eos"
    assert parse(" cgrp , protocol") == "protocol,cgrp"
    with pytest.raises(ConfigError, match="unknown debug context 'topic'"):
        Producer(debug="protocol,topic")
    assert Producer(debug="ALL").config.debug == "protocol,broker,msg,fetch,cgrp,eos"


async def test_debug_all_logs_summaries_and_no_secret(plain_broker: SaslBroker, new_topic: Any,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    topic = new_topic()
    caplog.set_level(logging.DEBUG, logger="aiokafka_lite")
    async with Producer(debug="all", allow_auto_create_topics=True, **_sasl(plain_broker)) as producer:
        md = await producer.send_and_wait(topic, b"value", key=b"key", partition=0)
    async with Consumer(debug="all", auto_offset_reset="earliest", group_id=f"g-{topic}",
                        allow_auto_create_topics=False, **_sasl(plain_broker)) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        record = await consumer.getone()
        assert record.offset == md.offset
        await consumer.commit()
        # A Metadata request for a topic that does not exist: its error code is in the summary line.
        await consumer._client.refresh_metadata(("no-such-topic-" + topic,))

    lines = [(r.name, r.getMessage()) for r in caplog.records]
    text = "\n".join(f"{n} {m}" for n, m in lines) + "\n" + caplog.text
    assert PASSWORD not in text
    assert PASSWORD.encode().hex() not in text

    def having(logger: str, pattern: str) -> list[str]:
        return [m for n, m in lines if n == f"aiokafka_lite.debug.{logger}" and re.search(pattern, m)]

    assert having("broker", r"^connected to .* SASL authenticated")
    assert having("protocol", r"^sent SaslAuthenticate v\d+ corr=\d+ to ")
    assert having("protocol", r"^received ApiVersions v\d+ corr=\d+ from .* in [\d.]+ ms")
    assert having("protocol", r"^received SaslAuthenticate v\d+ corr=\d+ from .*errors: none")
    assert having("msg", r"^sent Produce v\d+ corr=\d+ to node ")
    assert having("msg", r"^received Produce v\d+ corr=\d+ from node .* errors: none")
    assert having("fetch", r"^received Fetch v\d+ corr=\d+ ")
    assert having("cgrp", r"^received OffsetCommit v\d+ ")
    assert having("eos", r"^received InitProducerId v\d+ .*errors: none")  # the idempotent producer's id
    assert having("protocol", r"^received Metadata v\d+ .*errors: UnknownTopicOrPartitionError\(3\)")
    assert having("broker", r"^closed ")


async def test_debug_lines_only_for_contexts_on(plain_broker: SaslBroker, new_topic: Any,
                                                caplog: pytest.LogCaptureFixture) -> None:
    topic = new_topic()
    caplog.set_level(logging.DEBUG, logger="aiokafka_lite")
    async with Producer(debug="msg", **_sasl(plain_broker)) as producer:
        await producer.send_and_wait(topic, b"v", partition=0)
    async with Producer(**_sasl(plain_broker)) as quiet:
        await quiet.send_and_wait(topic, b"v", partition=0)
    names = {r.name for r in caplog.records if r.name.startswith("aiokafka_lite.debug")}
    assert names == {"aiokafka_lite.debug.msg"}
    produced = [r for r in caplog.records if r.getMessage().startswith("sent Produce")]
    assert len(produced) == 1  # the producer without debug= wrote none

"""Errors that used to mislead: each says what is wrong and what to check (issue 15, item 7)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka_lite.config import Config
from aiokafka_lite.errors import AuthenticationFailedError, KafkaConnectionError
from aiokafka_lite.net import KafkaClient


async def test_tls_to_a_plaintext_broker_asks_about_the_port(tansu: Any,
                                                             make_config: Callable[..., Config]) -> None:
    client = KafkaClient(make_config(tansu.bootstrap, security_protocol="SSL",
                                     socket_connection_setup_timeout_ms=1500))
    started = time.monotonic()
    with pytest.raises(KafkaConnectionError) as info:
        await client.start()
    await client.close()
    assert "is this a TLS port?" in str(info.value) and tansu.bootstrap.split(":")[1] in str(info.value)
    assert time.monotonic() - started < 10


async def test_sasl_to_a_broker_without_sasl_says_so(tansu: Any, make_config: Callable[..., Config]) -> None:
    client = KafkaClient(make_config(tansu.bootstrap, security_protocol="SASL_PLAINTEXT",
                                     sasl_mechanism="PLAIN", sasl_plain_username="u",
                                     sasl_plain_password="p"))
    with pytest.raises((AuthenticationFailedError, KafkaConnectionError)) as info:
        await client.start()
    await client.close()
    text = str(info.value)
    assert "it offers ['PLAIN']" not in text
    assert "security_protocol" in text, text


async def test_message_too_large_names_the_settings(mock_cluster: Callable[..., Any],
                                                    new_topic: Callable[..., str]) -> None:
    """The broker's MESSAGE_TOO_LARGE (injected on librdkafka's mock cluster) says which limits apply."""
    from aiokafka_lite import Producer
    from aiokafka_lite.errors import MessageTooLargeError

    mc = mock_cluster(1)
    topic = new_topic()
    mc.create_topic(topic, partitions=1, replication_factor=1)
    async with Producer(bootstrap_servers=mc.bootstrap, linger_ms=0) as p:
        await p.send_and_wait(topic, b"warm-up")
        mc.push_request_errors(0, [MessageTooLargeError])
        with pytest.raises(MessageTooLargeError) as info:
            await p.send_and_wait(topic, b"x" * 1000)
    text = str(info.value)
    assert topic in text
    assert "held 1 record(s) in" in text
    assert info.value.batch_bytes is not None and info.value.batch_bytes > 1000
    for setting in ("max.message.bytes", "message.max.bytes", "batch_size", "max_request_size"):
        assert setting in text, setting


async def test_a_broker_down_warns_once_then_rarely(tmp_path: Any, new_topic: Callable[..., str],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """While the only broker is down every metadata retry fails (every retry_backoff_ms): one WARNING,
    then at most one per ~30 s; the rest at DEBUG."""
    import asyncio
    import logging

    from aiokafka_lite import Consumer
    from aiokafka_lite.embedded import EmbeddedBroker

    broker = EmbeddedBroker("tansu", log_dir=tmp_path)
    broker.start()
    consumer = Consumer(bootstrap_servers=broker.bootstrap, retry_backoff_ms=50, metadata_max_age_ms=100,
                        reconnect_backoff_ms=50, reconnect_backoff_max_ms=100)
    try:
        await consumer.start()
        broker.stop()
        with caplog.at_level(logging.DEBUG, logger="aiokafka_lite"):
            await asyncio.sleep(3)
    finally:
        await consumer.stop()
        if broker.running:
            broker.stop()
    failures = [r for r in caplog.records if "metadata update failed" in r.getMessage()]
    warnings = [r for r in failures if r.levelno >= logging.WARNING]
    assert len(failures) >= 5, "the broker being down was retried"
    assert len(warnings) == 1


def test_rate_limited_warning_repeats_every_interval_with_a_count(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from aiokafka_lite.net._ratelimit import RateLimitedWarning

    now = [0.0]
    limiter = RateLimitedWarning(logging.getLogger("aiokafka_lite.test"), interval=30.0, clock=lambda: now[0])
    with caplog.at_level(logging.DEBUG, logger="aiokafka_lite.test"):
        for _ in range(100):  # 0.5 s apart: 50 s
            limiter.warn("b1", "broker %s down", "b1")
            now[0] += 0.5
        limiter.recovered("b1", "broker b1")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["broker b1 down", "broker b1 down (59 more time(s) since the last warning)"]
    assert any("works again" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)


async def test_consumer_of_a_missing_topic_warns_once(broker: Any, new_topic: Callable[..., str],
                                                      caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from aiokafka_lite import Consumer

    topic = new_topic("missing")
    with caplog.at_level(logging.WARNING, logger="aiokafka_lite"):
        async with Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=new_topic("g"),
                            session_timeout_ms=6000, heartbeat_interval_ms=300, metadata_max_age_ms=200,
                            retry_backoff_ms=50) as consumer:
            for _ in range(20):
                assert await consumer.poll(timeout_ms=100) == {}
    warned = [r.getMessage() for r in caplog.records if topic in r.getMessage()]
    assert len(warned) == 1, warned
    assert "does not exist" in warned[0]

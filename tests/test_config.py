"""Settings validation: every wrong value is refused at construction with a ConfigError naming the setting."""

from __future__ import annotations

import pytest

from aiokafka_lite import config as c
from aiokafka_lite.errors import ConfigError


def test_defaults_and_dotted_names() -> None:
    cfg = c.Config(c.PRODUCER, c.dotted_to_kwargs({"bootstrap.servers": "127.0.0.1:9092,localhost:9093",
                                                   "linger.ms": "7", "acks": "all"}))
    assert cfg.bootstrap_servers == [("127.0.0.1", 9092), ("localhost", 9093)]
    assert cfg.linger_ms == 7
    assert cfg.acks == -1
    assert cfg.enable_idempotence is True
    assert cfg.batch_size == 16384


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"linger_mss": 1}, "linger_mss"),
        ({"acks": 3}, "acks"),
        ({"batch_size": True}, "batch_size"),
        ({"batch_size": "lots"}, "batch_size"),
        ({"linger_ms": -1}, "linger_ms"),
        ({"compression_type": "brotli"}, "compression_type"),
        ({"bootstrap_servers": "host:notaport"}, "bootstrap_servers"),
        ({"bootstrap_servers": ""}, "bootstrap_servers"),
        ({"security_protocol": "SSLv2"}, "security_protocol"),
        ({"enable_idempotence": "maybe"}, "enable_idempotence"),
        ({"request_timeout_ms": None}, "request_timeout_ms"),
    ],
)
def test_bad_values_name_the_setting(values: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError) as info:
        c.Config(c.PRODUCER, values)
    assert named in str(info.value)
    assert isinstance(info.value, ValueError)


def test_unknown_setting_suggests_the_close_one() -> None:
    with pytest.raises(ConfigError, match="did you mean 'linger_ms'"):
        c.Config(c.PRODUCER, {"linger_mss": 1})


def test_consumer_strategies_and_ipv6() -> None:
    cfg = c.Config(c.CONSUMER, {"partition_assignment_strategy": "roundrobin, range",
                                "bootstrap_servers": ["[::1]:9092"]})
    assert cfg.partition_assignment_strategy == ("roundrobin", "range")
    assert cfg.bootstrap_servers == [("::1", 9092)]


def test_config_is_read_only_and_hides_passwords() -> None:
    cfg = c.Config(c.COMMON, {"sasl_plain_password": "hunter2-pw"})
    with pytest.raises(AttributeError, match="read-only"):
        cfg.client_id = "y"
    with pytest.raises(AttributeError, match="read-only"):
        cfg._values = {}  # type: ignore[misc]
    assert cfg.client_id == "aiokafka-lite"
    assert "hunter2-pw" not in repr(cfg)  # (setting names such as ..._client_secret do contain "secret")
    assert cfg.as_dict()["sasl_plain_password"] == "***"
    assert cfg.sasl_plain_password == "hunter2-pw"  # the client itself still has it
    for bad in (123456, b"x", ["pw"]):
        with pytest.raises(c.ConfigError) as info:
            c.Config(c.COMMON, {"sasl_plain_password": bad})
        assert "sasl_plain_password" in str(info.value) and str(bad) not in str(info.value), info.value
    assert cfg.replace(client_id="x").client_id == "x"


def test_every_secret_like_setting_is_marked_secret() -> None:
    """A setting added later (a token, a client secret) cannot forget the flag that keeps it out of errors."""
    for table in c.TABLES.values():
        for setting in table:
            if any(w in setting.name for w in ("password", "secret", "token", "credential")):
                assert setting.secret, setting.name

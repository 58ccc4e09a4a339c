"""Fixtures for the network layer's tests: client settings, and brokers behind TLS and SASL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _net_fakes import USERS

from aiokafka_lite.config import COMMON, Config
from aiokafka_lite.testing.sasl_front import SaslBroker
from aiokafka_lite.testing.tls import TlsBroker


@pytest.fixture
def make_config() -> Callable[..., Config]:
    """``make_config(bootstrap, **settings)``: a COMMON Config with test-friendly timeouts."""

    def make(bootstrap: str, **settings: Any) -> Config:
        values: dict[str, Any] = {
            "bootstrap_servers": bootstrap,
            "request_timeout_ms": 10000,
            "socket_connection_setup_timeout_ms": 5000,
        }
        values.update(settings)
        return Config(COMMON, values)

    return make


@pytest.fixture(scope="module", params=["stunnel", "socat"])
def tls_broker(request: pytest.FixtureRequest) -> Iterator[TlsBroker]:
    """Tansu behind stunnel4 / socat; Tansu advertises the terminator's address."""
    with TlsBroker(request.param) as broker:
        yield broker


@pytest.fixture(scope="module")
def sasl_broker() -> Iterator[SaslBroker]:
    """Tansu behind the SASL front (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; users in USERS)."""
    with SaslBroker(USERS) as broker:
        yield broker


@pytest.fixture(scope="module")
def sasl_ssl_broker() -> Iterator[SaslBroker]:
    """stunnel -> SASL front -> Tansu, for SASL_SSL."""
    with SaslBroker(USERS, tls=True) as broker:
        yield broker

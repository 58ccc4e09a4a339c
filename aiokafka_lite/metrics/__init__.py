"""Client metrics named and grouped as the Java client does, and KIP-714 pushes to brokers.

``Producer.metrics(tagged=True)`` (and the Consumer's and Admin's) return a list of
``{"group", "name", "tags", "value"}`` entries; :mod:`aiokafka_lite.metrics.prometheus` exposes them to
``prometheus_client``. Importing this package loads nothing of the network layer: the clients'
counters live in their own modules and :mod:`.monitor` turns them into windowed figures.
"""

from .monitor import ClientMonitor, Entry, Feed, Totals
from .stats import Windowed

__all__ = ["ClientMonitor", "Entry", "Feed", "Totals", "Windowed"]

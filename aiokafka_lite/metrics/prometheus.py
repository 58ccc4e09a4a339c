"""A ``prometheus_client`` collector for aiokafka_lite clients (the ``[prometheus]`` extra).

Each Java metric becomes a gauge ``kafka_<group>_<name>`` (``producer-topic-metrics`` /
``record-send-rate`` -> ``kafka_producer_topic_record_send_rate``) labelled with its tags
(``client_id``, ``node_id``, ``topic``, ``partition``). Values are read when Prometheus scrapes;
a metric without a value yet (an average with no events) is reported as NaN, as Java's JMX does.

    from prometheus_client import REGISTRY
    REGISTRY.register(KafkaClientCollector(producer, consumer))
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

__all__ = ["KafkaClientCollector", "prometheus_name"]

_BAD = re.compile(r"[^a-zA-Z0-9_]")


def prometheus_name(group: str, name: str) -> str:
    g = group[: -len("-metrics")] if group.endswith("-metrics") else group
    return _BAD.sub("_", f"kafka_{g}_{name}")


class KafkaClientCollector(Collector):
    """Collects every metric of the given clients (Producer, Consumer, Admin: ``metrics(tagged=True)``)."""

    def __init__(self, *clients: Any) -> None:
        self._clients = list(clients)

    def add(self, client: Any) -> None:
        self._clients.append(client)

    def remove(self, client: Any) -> None:
        self._clients.remove(client)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families: dict[str, tuple[GaugeMetricFamily, list[str]]] = {}
        for client in self._clients:
            for e in client.metrics(tagged=True):
                fam_name = prometheus_name(e["group"], e["name"])
                labels = sorted(_BAD.sub("_", k) for k in e["tags"])
                fam = families.get(fam_name)
                if fam is None:
                    fam = families[fam_name] = (
                        GaugeMetricFamily(fam_name, f"{e['group']} {e['name']} (Java client metric)",
                                          labels=labels), labels)
                if fam[1] != labels:
                    continue  # same name, other tags: not representable in one family
                tags = {_BAD.sub("_", k): str(v) for k, v in e["tags"].items()}
                value = e["value"]
                fam[0].add_metric([tags[k] for k in labels], math.nan if value is None else float(value))
        for family, _ in families.values():
            yield family


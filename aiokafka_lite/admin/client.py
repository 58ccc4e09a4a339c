"""The Admin client: topics, partitions, configs, groups, offsets and the cluster.

Every method sends its request to the broker that must answer it (see ``_core``) and raises our
error classes with messages naming the topic, group or partition concerned.
"""

from __future__ import annotations

from ._configs import ConfigOps
from ._groups import GroupOps
from ._offsets import OffsetOps
from ._topics import TopicOps


class Admin(TopicOps, GroupOps, OffsetOps, ConfigOps):
    """``async with Admin(bootstrap_servers="127.0.0.1:9092") as admin: ...``

    Settings are the common ones (see docs/configuration.md); ``Admin.from_config({...})`` takes
    Kafka's dotted names. Methods:

    * topics: ``create_topics([NewTopic])``, ``list_topics()``, ``describe_topics([names])``,
      ``delete_topics([names])``, ``create_partitions({topic: count})``;
    * configs: ``describe_configs([ConfigResource("topic", name)])``,
      ``incremental_alter_configs({ConfigResource("topic", name): {"retention.ms": "1000"}})``;
    * groups: ``list_groups()``, ``describe_groups([ids])``, ``delete_groups([ids])``,
      ``list_consumer_group_offsets(id)``;
    * offsets: ``list_offsets({tp: "earliest" | "latest" | ms})``, ``delete_records({tp: offset})``;
    * ``describe_cluster()``.
    """

    def __repr__(self) -> str:
        state = "started" if self._client is not None else "stopped"
        return f"<Admin {state} {self.config.bootstrap_servers}>"

"""The Admin client: topics, partitions, configs, groups, offsets and the cluster.

Every method sends its request to the broker that must answer it (see ``_core``) and raises our
error classes with messages naming the topic, group or partition concerned.
"""

from __future__ import annotations

from ._acls import AclOps
from ._configs import ConfigOps
from ._log_dirs import LogDirOps
from ._offsets import OffsetOps
from ._quotas import QuotaOps
from ._replicas import ReplicaOps
from ._scram import ScramOps
from ._share_groups import ShareGroupOps
from ._topics import TopicOps
from ._txns import TransactionOps


class Admin(TopicOps, ShareGroupOps, OffsetOps, ConfigOps, AclOps, TransactionOps, LogDirOps,
            ScramOps, ReplicaOps, QuotaOps):
    """``async with Admin(bootstrap_servers="127.0.0.1:9092") as admin: ...``

    Settings are the common ones (see docs/configuration.md); ``Admin.from_config({...})`` takes
    Kafka's dotted names. Methods:

    * topics: ``create_topics([NewTopic])``, ``list_topics()``, ``describe_topics([names])``,
      ``delete_topics([names])``, ``create_partitions({topic: count})``;
    * configs: ``describe_configs([ConfigResource("topic", name)])``,
      ``incremental_alter_configs({ConfigResource("topic", name): {"retention.ms": "1000"}})``,
      ``alter_configs({resource: {name: value}})`` (the legacy whole-set replacement);
    * groups: ``list_groups()``, ``describe_groups([ids])``, ``delete_groups([ids])``,
      ``list_consumer_group_offsets(id)``, ``alter_consumer_group_offsets(id, {tp: offset})``,
      ``delete_consumer_group_offsets(id, [tp])``, ``remove_members_from_consumer_group(id)``;
    * share groups (KIP-932): ``describe_share_groups([ids])``, ``list_share_group_offsets(id)``,
      ``alter_share_group_offsets(id, {tp: offset})``, ``delete_share_group_offsets(id, [topics])``;
    * ACLs: ``create_acls([AclBinding])``, ``describe_acls(AclBindingFilter)``, ``delete_acls([filter])``;
    * producers and transactions: ``describe_producers([tp])``, ``list_transactions()``,
      ``describe_transactions([ids])``, ``fence_producers([ids])``, ``abort_transaction(spec)``;
    * SCRAM users: ``describe_user_scram_credentials([users])``,
      ``alter_user_scram_credentials([UserScramCredentialUpsertion | UserScramCredentialDeletion])``;
    * replicas: ``list_partition_reassignments()``, ``alter_partition_reassignments({tp: [ids]})``,
      ``elect_leaders([tp])``, ``describe_log_dirs([node ids])``;
    * ``describe_client_quotas([QuotaFilterComponent])``, ``alter_client_quotas({entity: {key: value}})``;
    * offsets: ``list_offsets({tp: "earliest" | "latest" | ms})``, ``delete_records({tp: offset})``;
    * ``describe_cluster()``, ``describe_features()``.
    """

    def __repr__(self) -> str:
        state = "started" if self._client is not None else "stopped"
        return f"<Admin {state} {self.config.bootstrap_servers}>"

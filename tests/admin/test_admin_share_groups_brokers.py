"""Which broker here implements the share-group admin APIs (KIP-932): none. Each broker's ApiVersions
answer is read, and each share-group Admin method must fail at once with UnsupportedVersionError naming
the API, before anything is sent (so the methods are proven on the scripted fake client instead:
test_admin_share_groups.py)."""

from __future__ import annotations

from typing import Any

import pytest

from aiokafka_lite import Admin, TopicPartition, errors
from aiokafka_lite.embedded import EmbeddedBroker

SHARE_ADMIN_APIS = {77: "ShareGroupDescribe", 90: "DescribeShareGroupOffsets", 91: "AlterShareGroupOffsets",
                    92: "DeleteShareGroupOffsets"}


async def _offered(admin: Admin) -> dict[int, tuple[int, int]]:
    node = await admin.client.any_ready_node()
    await admin.client.ready(node)
    versions = admin.client._pool.api_versions(node)  # the node's handshake: key -> (min, max)
    assert versions is not None
    return versions


async def _each_method_is_refused(admin: Admin) -> None:
    calls: list[tuple[str, Any]] = [
        ("ShareGroupDescribe", admin.describe_share_groups(["sg"])),
        ("DescribeShareGroupOffsets", admin.list_share_group_offsets("sg")),
        ("AlterShareGroupOffsets", admin.alter_share_group_offsets("sg", {TopicPartition("t", 0): 0})),
        ("DeleteShareGroupOffsets", admin.delete_share_group_offsets("sg", ["t"])),
    ]
    for name, call in calls:
        with pytest.raises(errors.UnsupportedVersionError, match=f"does not offer {name} "):
            await call


@pytest.mark.parametrize("kind", ["tansu", "noida"])
async def test_no_embedded_broker_offers_the_share_group_admin_apis(kind: str,
                                                                    request: pytest.FixtureRequest) -> None:
    broker: EmbeddedBroker = request.getfixturevalue(kind)
    async with Admin(bootstrap_servers=broker.bootstrap) as admin:
        offered = await _offered(admin)
        assert 18 in offered  # the answer was read: ApiVersions itself is there
        assert not set(SHARE_ADMIN_APIS) & set(offered)
        await _each_method_is_refused(admin)


async def test_the_mock_cluster_offers_share_groups_but_not_their_admin_apis(mock_cluster: Any) -> None:
    mc = mock_cluster(1)
    async with Admin(bootstrap_servers=mc.bootstrap) as admin:
        offered = await _offered(admin)
        assert {76, 78, 79} <= set(offered)  # ShareGroupHeartbeat, ShareFetch, ShareAcknowledge
        assert not set(SHARE_ADMIN_APIS) & set(offered)
        await _each_method_is_refused(admin)

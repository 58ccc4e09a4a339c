"""``aiokafka.admin.config_resource``: a config resource as aiokafka names it."""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class ConfigResourceType(IntEnum):
    """Kafka's resource type codes (aiokafka's two)."""

    BROKER = 4
    TOPIC = 2


class ConfigResource:
    """A topic or broker, and (for ``alter_configs``) the configs to set; for ``describe_configs`` the
    config names to ask for (None: all)."""

    def __init__(self, resource_type: ConfigResourceType | str, name: str | int,
                 configs: dict[str, Any] | None = None) -> None:
        if not isinstance(resource_type, ConfigResourceType):
            resource_type = ConfigResourceType[str(resource_type).upper()]
        self.resource_type = resource_type
        self.name = name
        self.configs = configs

    def __repr__(self) -> str:
        return f"ConfigResource({self.resource_type.name}, {self.name!r}, {self.configs!r})"


__all__ = ["ConfigResource", "ConfigResourceType"]

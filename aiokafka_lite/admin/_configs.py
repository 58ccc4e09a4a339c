"""Changing configs of topics and brokers: incremental_alter_configs (only the configs named change) and
the legacy alter_configs (the whole set is replaced; configs left out return to their defaults)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .. import errors
from ..protocol.messages import alter_configs as legacy
from ..protocol.messages.incremental_alter_configs import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from ._config_routes import by_node, config_routes
from ._core import AdminCore, broker_error
from .types import ConfigResource

__all__ = ["ConfigOps"]

#: IncrementalAlterConfigs' operation codes.
CONFIG_OPS = {"set": 0, "delete": 1, "append": 2, "subtract": 3}


class ConfigOps(AdminCore):
    """incremental_alter_configs, alter_configs."""

    async def incremental_alter_configs(
        self, changes: Mapping[ConfigResource | tuple[str, str], Mapping[str, str | None]], *,
        validate_only: bool = False,
    ) -> None:
        """Set configs (``{name: value}``) or reset them to their defaults (``{name: None}``).

        Only the named configs change (unlike the legacy AlterConfigs, which replaces the whole set).
        Broker resources go to that broker; topics to any broker.
        """
        wanted: dict[ConfigResource, list[AlterableConfig]] = {}
        for raw, configs in changes.items():
            r = ConfigResource(*raw)
            r.type_code  # noqa: B018 - validates the type name
            entries: list[AlterableConfig] = []
            for name, value in configs.items():
                if not isinstance(name, str) or not (value is None or isinstance(value, str)):
                    raise errors.IllegalArgumentError(
                        f"configs are {{name: str value or None}}, got {name!r}: {value!r}")
                op = CONFIG_OPS["set" if value is not None else "delete"]
                entries.append(AlterableConfig(name=name, config_operation=op, value=value))
            wanted[r] = entries
        await self._alter_configs(wanted, lambda batch: IncrementalAlterConfigsRequest(
            resources=[AlterConfigsResource(resource_type=r.type_code, resource_name=r.name,
                                            configs=wanted[r]) for r in batch],
            validate_only=validate_only), "IncrementalAlterConfigs")

    async def alter_configs(
        self, configs: Mapping[ConfigResource | tuple[str, str], Mapping[str, str]], *,
        validate_only: bool = False,
    ) -> None:
        """Replace the whole config set of each resource (Kafka's legacy AlterConfigs): every dynamic
        config not given returns to its default. Prefer :meth:`incremental_alter_configs`; this is for
        brokers that lack it."""
        wanted: dict[ConfigResource, list[legacy.AlterableConfig]] = {}
        for raw, entries in configs.items():
            r = ConfigResource(*raw)
            r.type_code  # noqa: B018 - validates the type name
            for name, value in entries.items():
                if not isinstance(name, str) or not isinstance(value, str):
                    raise errors.IllegalArgumentError(
                        f"{r.type} {r.name!r}: alter_configs takes {{name: str value}}, "
                        f"got {name!r}: {value!r}")
            wanted[r] = [legacy.AlterableConfig(name=n, value=v) for n, v in entries.items()]
        await self._alter_configs(wanted, lambda batch: legacy.AlterConfigsRequest(
            resources=[legacy.AlterConfigsResource(resource_type=r.type_code, resource_name=r.name,
                                                   configs=wanted[r]) for r in batch],
            validate_only=validate_only), "AlterConfigs")

    async def _alter_configs(self, wanted: Mapping[ConfigResource, Any],
                             build: Callable[[list[ConfigResource]], Any], what: str) -> None:
        """Send ``build(resources)`` to the node each resource belongs to; raise the first error."""
        routes = config_routes(wanted)

        async def attempt(pending: list[ConfigResource]) -> dict[ConfigResource, Any]:
            out: dict[ConfigResource, Any] = {}
            for node, batch in by_node(pending, routes).items():
                target = node if node is not None else await self.client.any_ready_node()
                response = await self._send(target, build(batch))
                index = {(r.type_code, r.name): r for r in batch}
                for result in response.responses:
                    found = index.get((result.resource_type, result.resource_name))
                    if found is not None:
                        out[found] = (broker_error(result.error_code, f"{found.type} {found.name!r}",
                                                   result.error_message) if result.error_code else None)
            return out

        order: Iterable[ConfigResource] = list(wanted)
        results = await self._retrying(order, attempt, what=what)
        self._raise_first(results, order)

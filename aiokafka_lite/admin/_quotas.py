"""Client quotas (KIP-546): describe_client_quotas and alter_client_quotas, keyed by entities such as
``(("user", "alice"),)`` or ``(("client-id", None),)`` (None: the type's default entity). Any broker
answers (Kafka's brokers forward the change to the controller)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .. import errors
from ..protocol.messages.alter_client_quotas import (
    AlterClientQuotasRequest,
    AlterClientQuotasRequestEntityData,
    AlterClientQuotasRequestEntryData,
    OpData,
)
from ..protocol.messages.describe_client_quotas import ComponentData, DescribeClientQuotasRequest
from ._core import AdminCore, broker_error
from .types import QuotaEntity, QuotaFilterComponent

__all__ = ["QuotaOps"]

_MATCH_TYPES = {"exact": 0, "default": 1, "any": 2}
_ALL = "*"


def _entity(raw: Any) -> QuotaEntity:
    """A hashable, sorted entity from ``{type: name}`` or pairs."""
    pairs = list(raw.items()) if isinstance(raw, Mapping) else list(raw)
    if not pairs or not all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and p[0]
                            and (p[1] is None or isinstance(p[1], str)) for p in pairs):
        raise errors.IllegalArgumentError(
            f"a quota entity is {{entity_type: name or None}} (e.g. {{'user': 'alice'}}), got {raw!r}")
    return tuple(sorted(pairs, key=lambda p: p[0]))


def _show(entity: QuotaEntity) -> str:
    return ", ".join(f"{t}={'<default>' if n is None else n}" for t, n in entity)


class QuotaOps(AdminCore):
    """describe_client_quotas, alter_client_quotas."""

    async def describe_client_quotas(self, components: Iterable[QuotaFilterComponent] = (), *,
                                     strict: bool = False) -> dict[QuotaEntity, dict[str, float]]:
        """Quotas of the entities matching every component (all entities when none is given);
        ``strict`` leaves out entities with types the filter does not name."""
        comps: list[ComponentData] = []
        for c in components:
            if not isinstance(c, QuotaFilterComponent) or c.match_type not in _MATCH_TYPES:
                raise errors.IllegalArgumentError(
                    f"expected QuotaFilterComponent(entity_type, name, match_type='exact'|'default'|'any'), "
                    f"got {c!r}")
            comps.append(ComponentData(entity_type=c.entity_type, match_type=_MATCH_TYPES[c.match_type],
                                       match=c.name if c.match_type == "exact" else None))

        async def attempt(pending: list[str]) -> dict[str, Any]:
            node = await self.client.any_ready_node()
            response = await self._send(node, DescribeClientQuotasRequest(components=comps, strict=strict))
            if response.error_code:
                return {_ALL: broker_error(response.error_code, "DescribeClientQuotas",
                                           response.error_message)}
            return {_ALL: {_entity([(e.entity_type, e.entity_name) for e in entry.entity]):
                           {v.key: v.value for v in entry.values} for entry in response.entries or ()}}

        results = await self._retrying([_ALL], attempt, what="DescribeClientQuotas")
        self._raise_first(results, [_ALL])
        found: dict[QuotaEntity, dict[str, float]] = results[_ALL]
        return found

    async def alter_client_quotas(
        self, alterations: Mapping[Any, Mapping[str, float | None]], *, validate_only: bool = False,
    ) -> None:
        """Set (``{key: value}``) or remove (``{key: None}``) quotas of each entity
        (``{"user": "alice"}`` or its tuple form); raises the first entity's error, naming it."""
        wanted: dict[QuotaEntity, list[OpData]] = {}
        for raw, ops in alterations.items():
            entity = _entity(raw)
            entries: list[OpData] = []
            for key, value in ops.items():
                if not isinstance(key, str) or not (value is None or (isinstance(value, (int, float))
                                                                      and not isinstance(value, bool))):
                    raise errors.IllegalArgumentError(
                        f"entity {_show(entity)}: quotas are {{key: number or None}}, got {key!r}: {value!r}")
                entries.append(OpData(key=key, value=float(value or 0.0), remove=value is None))
            wanted[entity] = entries
        if not wanted:
            return

        async def attempt(pending: list[QuotaEntity]) -> dict[QuotaEntity, Any]:
            node = await self.client.any_ready_node()
            response = await self._send(node, AlterClientQuotasRequest(validate_only=validate_only, entries=[
                AlterClientQuotasRequestEntryData(entity=[
                    AlterClientQuotasRequestEntityData(entity_type=t, entity_name=n) for t, n in e],
                    ops=wanted[e]) for e in pending]))
            out: dict[QuotaEntity, Any] = {}
            for r in response.entries:
                e = _entity([(d.entity_type, d.entity_name) for d in r.entity])
                out[e] = broker_error(r.error_code, f"quota entity {_show(e)}", r.error_message) \
                    if r.error_code else None
            return out

        order = list(wanted)
        results = await self._retrying(order, attempt, what="AlterClientQuotas")
        self._raise_first(results, order)

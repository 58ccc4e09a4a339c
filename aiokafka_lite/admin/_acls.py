"""ACLs (KIP-140): create_acls, describe_acls, delete_acls. Kafka's authorizer answers these on any
broker (Java's Admin sends them to the least loaded node); a broker without an authorizer answers
SECURITY_DISABLED, raised as :class:`~aiokafka_lite.errors.SecurityDisabledError` naming the ACL."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import errors
from ..protocol.messages.create_acls import AclCreation, CreateAclsRequest
from ..protocol.messages.delete_acls import DeleteAclsFilter, DeleteAclsRequest
from ..protocol.messages.describe_acls import DescribeAclsRequest
from ._core import AdminCore, broker_error
from .types import (
    ACL_OPERATIONS,
    ACL_PATTERN_TYPES,
    ACL_PERMISSIONS,
    ACL_RESOURCE_TYPES,
    AclBinding,
    AclBindingFilter,
    acl_code,
    acl_name,
)

__all__ = ["AclOps"]


def _creation(b: AclBinding) -> AclCreation:
    if not isinstance(b, AclBinding):
        raise errors.IllegalArgumentError(f"create_acls takes AclBinding values, got {b!r}")
    for field in ("resource_name", "principal", "host"):
        if not isinstance(getattr(b, field), str) or not getattr(b, field):
            raise errors.IllegalArgumentError(f"{b}: {field} must be a non-empty str")
    return AclCreation(
        resource_type=acl_code(ACL_RESOURCE_TYPES, "resource type", b.resource_type, filter_=False),
        resource_name=b.resource_name,
        resource_pattern_type=acl_code(ACL_PATTERN_TYPES, "pattern type", b.pattern_type, filter_=False),
        principal=b.principal, host=b.host,
        operation=acl_code(ACL_OPERATIONS, "operation", b.operation, filter_=False),
        permission_type=acl_code(ACL_PERMISSIONS, "permission", b.permission, filter_=False))


def _filter_fields(f: AclBindingFilter) -> dict[str, Any]:
    """The request fields of a filter (DescribeAcls and DeleteAcls name them alike)."""
    if not isinstance(f, AclBindingFilter):
        raise errors.IllegalArgumentError(f"expected an AclBindingFilter, got {f!r}")
    return {
        "resource_type_filter": acl_code(ACL_RESOURCE_TYPES, "resource type", f.resource_type, filter_=True),
        "resource_name_filter": f.resource_name,
        "pattern_type_filter": acl_code(ACL_PATTERN_TYPES, "pattern type", f.pattern_type, filter_=True),
        "principal_filter": f.principal, "host_filter": f.host,
        "operation": acl_code(ACL_OPERATIONS, "operation", f.operation, filter_=True),
        "permission_type": acl_code(ACL_PERMISSIONS, "permission", f.permission, filter_=True),
    }


def _binding(resource_type: int, resource_name: str, pattern_type: int, acl: Any) -> AclBinding:
    return AclBinding(
        resource_type=acl_name(ACL_RESOURCE_TYPES, resource_type), resource_name=resource_name,
        principal=acl.principal, operation=acl_name(ACL_OPERATIONS, acl.operation),
        permission=acl_name(ACL_PERMISSIONS, acl.permission_type), host=acl.host,
        pattern_type=acl_name(ACL_PATTERN_TYPES, pattern_type))


class AclOps(AdminCore):
    """create_acls, describe_acls, delete_acls."""

    async def create_acls(self, acls: Iterable[AclBinding]) -> None:
        """Add ACLs; raises the first one's error, naming it (the others may have been created)."""
        bindings = list(dict.fromkeys(acls))
        creations = {b: _creation(b) for b in bindings}
        if not bindings:
            return

        async def attempt(pending: list[AclBinding]) -> dict[AclBinding, Any]:
            node = await self.client.any_ready_node()
            response = await self._send(node, CreateAclsRequest(creations=[creations[b] for b in pending]))
            if len(response.results) != len(pending):
                raise errors.ProtocolError(
                    f"CreateAcls for {len(pending)} ACLs answered {len(response.results)} results")
            return {b: (broker_error(r.error_code, f"ACL {_describe(b)}", r.error_message)
                        if r.error_code else None) for b, r in zip(pending, response.results, strict=True)}

        results = await self._retrying(bindings, attempt, what="CreateAcls")
        self._raise_first(results, bindings)

    async def describe_acls(self, acl_filter: AclBindingFilter | None = None) -> list[AclBinding]:
        """The ACLs matching ``acl_filter`` (all of them when None), sorted."""
        f = acl_filter if acl_filter is not None else AclBindingFilter()
        fields = _filter_fields(f)

        async def attempt(pending: list[AclBindingFilter]) -> dict[AclBindingFilter, Any]:
            node = await self.client.any_ready_node()
            response = await self._send(node, DescribeAclsRequest(**fields))
            if response.error_code:
                return {f: broker_error(response.error_code, f"DescribeAcls {_describe(f)}",
                                        response.error_message)}
            return {f: sorted(_binding(r.resource_type, r.resource_name, r.pattern_type, a)
                              for r in response.resources for a in r.acls)}

        results = await self._retrying([f], attempt, what="DescribeAcls")
        self._raise_first(results, [f])
        found: list[AclBinding] = results[f]
        return found

    async def delete_acls(self, filters: Iterable[AclBindingFilter]
                          ) -> dict[AclBindingFilter, list[AclBinding]]:
        """Delete every ACL matching each filter; returns the ACLs each filter deleted. Raises the
        first filter's (or deleted ACL's) error, naming it."""
        wanted = list(dict.fromkeys(filters))
        fields = {f: _filter_fields(f) for f in wanted}
        if not wanted:
            return {}

        async def attempt(pending: list[AclBindingFilter]) -> dict[AclBindingFilter, Any]:
            node = await self.client.any_ready_node()
            response = await self._send(node, DeleteAclsRequest(
                filters=[DeleteAclsFilter(**fields[f]) for f in pending]))
            if len(response.filter_results) != len(pending):
                raise errors.ProtocolError(
                    f"DeleteAcls for {len(pending)} filters answered {len(response.filter_results)} results")
            out: dict[AclBindingFilter, Any] = {}
            for f, r in zip(pending, response.filter_results, strict=True):
                if r.error_code:
                    out[f] = broker_error(r.error_code, f"DeleteAcls {_describe(f)}", r.error_message)
                    continue
                deleted: list[AclBinding] = []
                for m in r.matching_acls:
                    b = _binding(m.resource_type, m.resource_name, m.pattern_type, m)
                    if m.error_code:
                        out[f] = broker_error(m.error_code, f"ACL {_describe(b)}", m.error_message)
                        break
                    deleted.append(b)
                else:
                    out[f] = sorted(deleted)
            return out

        results = await self._retrying(wanted, attempt, what="DeleteAcls")
        self._raise_first(results, wanted)
        return {f: results[f] for f in wanted}


def _describe(acl: AclBinding | AclBindingFilter) -> str:
    """``User:alice allow read on topic events (literal) from *``, with None shown as "any"."""
    def show(v: str | None) -> str:
        return "any" if v is None else v
    return (f"{show(acl.principal)} {acl.permission} {acl.operation} on {acl.resource_type} "
            f"{show(acl.resource_name)} ({acl.pattern_type}) from {show(acl.host)}")

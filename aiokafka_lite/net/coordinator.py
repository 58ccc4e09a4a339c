"""Finding the coordinator of a consumer group or a transactional id (FindCoordinator).

A coordinator is a broker; FindCoordinator v4+ takes a list of keys (KIP-699), older versions one.
Brokers answer COORDINATOR_NOT_AVAILABLE while the coordinator is being elected or loaded, so the
lookup retries retriable answers and lost connections until its deadline (net/retry.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ProtocolError, UnsupportedVersionError, for_code
from ..protocol.messages.find_coordinator import FindCoordinatorRequest
from ..structs import BrokerInfo
from .retry import Retry, call_with_retries, retry_backoff

if TYPE_CHECKING:
    from .client import KafkaClient

__all__ = ["lookup_coordinator"]

_KEY_TYPES = {0: "group", 1: "transactional id"}


async def lookup_coordinator(client: KafkaClient, key: str, key_type: int, timeout_ms: int | None) -> int:
    """The coordinator's node id; its address is added to ``client.cluster`` if metadata lacks it."""
    config = client.config
    limit = config.request_timeout_ms / 1000 if timeout_ms is None else timeout_ms / 1000
    what = f"{_KEY_TYPES.get(key_type, f'key type {key_type}')} {key!r}"

    async def attempt() -> int:
        node_id = await client.any_ready_node()
        version = client.api_version(node_id, FindCoordinatorRequest)
        if version >= 4:
            request = FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key])
        else:
            if key_type and version < 1:
                raise UnsupportedVersionError(f"node {node_id} cannot look up a {what} coordinator")
            request = FindCoordinatorRequest(key=key, key_type=key_type)
        response = await client.send(node_id, request, version=version)
        if version >= 4:
            if len(response.coordinators) != 1:
                raise ProtocolError(
                    f"FindCoordinator for one key answered {len(response.coordinators)} coordinators"
                )
            answer = response.coordinators[0]
        else:
            answer = response
        if answer.error_code:
            raise for_code(answer.error_code)(f"{what}: {answer.error_message or ''}".rstrip(": "))
        client.cluster.add_broker(BrokerInfo(answer.node_id, answer.host, answer.port))
        return int(answer.node_id)

    retry = Retry(f"FindCoordinator for {what}", limit, retry_backoff(config))
    return await call_with_retries(attempt, retry)

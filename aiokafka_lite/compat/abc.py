"""aiokafka's abstract classes (``aiokafka.abc``): the rebalance listener (the native one) and the
OAUTHBEARER token provider, whose ``token()`` and ``extensions()`` the native SASL code calls."""

from __future__ import annotations

import abc

from ..consumer.listener import ConsumerRebalanceListener


class AbstractTokenProvider(abc.ABC):
    """A source of OAUTHBEARER tokens: ``async token() -> str``, optional ``extensions() -> dict``."""

    @abc.abstractmethod
    async def token(self) -> str:
        """The access token to send (reuse it until it nears expiry)."""

    def extensions(self) -> dict[str, str]:
        """Key-value pairs sent with the initial SASL/OAUTHBEARER request; none by default."""
        return {}


__all__ = ["AbstractTokenProvider", "ConsumerRebalanceListener"]

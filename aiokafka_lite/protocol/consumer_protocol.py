"""The consumer group protocol's member metadata and assignment: an int16 version, then the body.

JoinGroup's protocol metadata and SyncGroup's assignment bytes carry ConsumerProtocolSubscription /
ConsumerProtocolAssignment ("data" specs with no header). Kafka's ConsumerProtocol prefixes them with an int16
version and reads newer versions with the newest schema it knows, ignoring the bytes it does not understand,
so members running different client versions can share a group. These helpers do the same.
"""

from __future__ import annotations

from ..errors import ProtocolError
from ._codec import INT16, Buffer
from .messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from .messages.consumer_protocol_subscription import ConsumerProtocolSubscription

__all__ = [
    "ASSIGNMENT_VERSION",
    "SUBSCRIPTION_VERSION",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
]

#: Versions written by default: the newest, like Kafka's ConsumerProtocol.
SUBSCRIPTION_VERSION = ConsumerProtocolSubscription.MAX_VERSION
ASSIGNMENT_VERSION = ConsumerProtocolAssignment.MAX_VERSION


def _read_version(data: Buffer, what: str, lowest: int, highest: int) -> int:
    if len(data) < 2:
        raise ProtocolError(f"{what} of {len(data)} bytes has no version prefix")
    version = int(INT16.unpack_from(data, 0)[0])
    if version < lowest:
        raise ProtocolError(f"unsupported {what} version {version}")
    return min(version, highest)


def encode_subscription(
    subscription: ConsumerProtocolSubscription, version: int = SUBSCRIPTION_VERSION
) -> bytes:
    out = bytearray(INT16.pack(version))
    subscription.encode_into(out, version)
    return bytes(out)


def decode_subscription(data: Buffer) -> tuple[int, ConsumerProtocolSubscription]:
    """``(version as sent, subscription)``; a version newer than ours is read with our newest schema."""
    cls = ConsumerProtocolSubscription
    sent = int(INT16.unpack_from(data, 0)[0]) if len(data) >= 2 else -1
    version = _read_version(data, "subscription", cls.MIN_VERSION, cls.MAX_VERSION)
    return sent, cls.decode(memoryview(data)[2:], version, allow_trailing=True)


def encode_assignment(assignment: ConsumerProtocolAssignment, version: int = ASSIGNMENT_VERSION) -> bytes:
    out = bytearray(INT16.pack(version))
    assignment.encode_into(out, version)
    return bytes(out)


def decode_assignment(data: Buffer) -> tuple[int, ConsumerProtocolAssignment]:
    """``(version as sent, assignment)``. Empty bytes mean "nothing assigned": a broker sends them to a member
    the leader left out of its SyncGroup."""
    cls = ConsumerProtocolAssignment
    if len(data) == 0:
        return cls.MIN_VERSION, cls()
    sent = int(INT16.unpack_from(data, 0)[0]) if len(data) >= 2 else -1
    version = _read_version(data, "assignment", cls.MIN_VERSION, cls.MAX_VERSION)
    return sent, cls.decode(memoryview(data)[2:], version, allow_trailing=True)

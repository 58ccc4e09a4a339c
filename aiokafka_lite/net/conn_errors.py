"""The errors a broken connection gives its requests: one wording, kind kept from the reason."""

from __future__ import annotations

from ..errors import (
    AuthenticationFailedError,
    ClientClosedError,
    KafkaConnectionError,
    KafkaError,
    ProtocolError,
)
from ..protocol import REQUEST_CLASSES

__all__ = ["api_name", "bad_frame_size", "closed_error", "request_error"]


def api_name(api_key: int) -> str:
    """``Produce`` for 0; a negative key (a raw-response request, ``-(key + 1)``) names its API too."""
    if api_key < 0:
        api_key = -(api_key + 1)
    try:
        return str(REQUEST_CLASSES[api_key].NAME)
    except KeyError:
        return f"API {api_key}"


def _detail(reason: BaseException) -> str:
    return str(reason.args[0]) if isinstance(reason, KafkaError) and reason.args else str(reason)


def bad_frame_size(conn: str, size: int, max_frame: int) -> str:
    """What a response frame of a size no Kafka broker sends says about the peer."""
    if size < 4:
        return f"{conn} sent a response frame of impossible size {size}"
    return (f"{conn} sent a response frame of {size} bytes, more than receive_message_max_bytes "
            f"({max_frame}); is this a Kafka broker?")


def request_error(reason: BaseException | None, what: str) -> KafkaError:
    """The error of one request in flight when its connection closed for ``reason`` (None: closed on
    purpose): a ProtocolError, AuthenticationFailedError or ClientClosedError (the client was stopped)
    stays one (retrying will not help), anything else is a KafkaConnectionError; ``reason`` is its
    cause."""
    if reason is None:
        return KafkaConnectionError(f"{what}: the connection was closed")
    detail = _detail(reason)
    error: KafkaError
    error = _kind(reason)(f"{what}: {detail}")
    error.__cause__ = reason
    return error


def _kind(reason: BaseException) -> type[KafkaError]:
    if isinstance(reason, (ProtocolError, AuthenticationFailedError, ClientClosedError)):
        return type(reason)
    return KafkaConnectionError


def closed_error(reason: BaseException | None, what: str) -> KafkaError:
    """The error for using a connection closed for ``reason`` (same kinds as :func:`request_error`)."""
    if reason is None:
        return KafkaConnectionError(what)
    return _kind(reason)(f"{what}: {_detail(reason)}")

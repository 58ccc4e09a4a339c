"""Base classes of the generated structs and messages: equality, repr and per-version dispatch.

Kept apart from the wire primitives in ``_codec`` so each module holds one concern.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from ..errors import IllegalArgumentError, KafkaError, ProtocolError, UnsupportedVersionError
from ._codec import DECODE_ERRORS, Buffer

__all__ = ["DEFAULT", "Data", "Message"]


class _Default:
    """Marks "use the spec's default" for list and struct arguments (None may be a real value there)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()


_T = TypeVar("_T", bound="Data")
Writer = Callable[[Any, bytearray], None]
ReaderFn = Callable[[Buffer, int], "tuple[Any, int]"]


class Data:
    """Base of every generated struct and message: equality and repr over the slots, and version dispatch.

    ``_WRITERS`` / ``_READERS`` map each version to a generated straight-line function; they exist for nested
    structs too (for the versions of the message that contain them), which keeps tests simple.
    """

    __slots__ = ()
    NAME: ClassVar[str] = ""
    MIN_VERSION: ClassVar[int] = 0
    MAX_VERSION: ClassVar[int] = -1
    FLEXIBLE_MIN: ClassVar[int | None] = None
    _WRITERS: ClassVar[dict[int, Writer]] = {}
    _READERS: ClassVar[dict[int, ReaderFn]] = {}

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        slots: tuple[str, ...] = self.__slots__
        return all(getattr(self, name) == getattr(other, name) for name in slots)

    def __repr__(self) -> str:
        slots: tuple[str, ...] = self.__slots__
        parts = [
            f"{name}={getattr(self, name)!r}"
            for name in slots
            if not (name == "_unknown_tagged" and getattr(self, name) is None)
        ]
        return f"{type(self).__name__}({', '.join(parts)})"

    def encode_into(self, out: bytearray, version: int) -> None:
        """Append the encoding at ``version`` to ``out`` (framing code avoids a copy this way)."""
        writer = self._WRITERS.get(version)
        if writer is None:
            raise UnsupportedVersionError(
                f"{type(self).__name__} has no version {version} "
                f"(valid {self.MIN_VERSION}-{self.MAX_VERSION})"
            )
        try:
            writer(self, out)
        except KafkaError:
            raise
        except (struct.error, TypeError, AttributeError, ValueError, OverflowError) as exc:
            raise IllegalArgumentError(f"cannot encode {type(self).__name__} v{version}: {exc}") from None

    def encode(self, version: int) -> bytes:
        """The body at ``version``: no header, no size prefix."""
        out = bytearray()
        self.encode_into(out, version)
        return bytes(out)

    @classmethod
    def decode(cls: type[_T], data: Buffer, version: int, *, allow_trailing: bool = False) -> _T:
        """Parse a whole body; bytes left over are an error unless ``allow_trailing`` (consumer protocol)."""
        reader = cls._READERS.get(version)
        if reader is None:
            raise UnsupportedVersionError(
                f"{cls.__name__} has no version {version} (valid {cls.MIN_VERSION}-{cls.MAX_VERSION})"
            )
        try:
            obj, pos = reader(data, 0)
        except ProtocolError as exc:
            raise ProtocolError(f"{cls.__name__} v{version}: {exc.args[0] if exc.args else exc}") from None
        except DECODE_ERRORS as exc:
            raise ProtocolError(f"{cls.__name__} v{version}: malformed or truncated input ({exc})") from None
        if pos != len(data) and not allow_trailing:
            raise ProtocolError(f"{cls.__name__} v{version}: {len(data) - pos} unexpected trailing bytes")
        result: _T = obj
        return result


class Message(Data):
    """A top-level request or response (or header / consumer-protocol data)."""

    __slots__ = ()
    API_KEY: ClassVar[int] = -1

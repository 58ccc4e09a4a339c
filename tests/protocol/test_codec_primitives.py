"""The wire primitives' short cuts give exactly what their general paths give: unrolled two- and
three-byte unsigned varints (a record batch's length in a flexible Produce request) and one-byte compact
string lengths (topic names in every flexible answer), including their errors on short input."""

from __future__ import annotations

import pytest

from aiokafka_lite.errors import ProtocolError
from aiokafka_lite.protocol._codec import (
    read_compact_nullable_string,
    read_compact_string,
    read_uvarint,
    read_uvarlong,
    write_compact_nullable_string,
    write_compact_string,
    write_uvarint,
)


def _leb128(value: int) -> bytes:
    out = bytearray()
    while True:
        if value < 0x80:
            out.append(value)
            return bytes(out)
        out.append((value & 0x7F) | 0x80)
        value >>= 7


@pytest.mark.parametrize("value", [0, 1, 0x7F, 0x80, 0x81, 0xFF, 0x3FFF, 0x4000, 0x4001, 16384 + 70,
                                   0x1FFFFF, 0x200000, 0x200001, 0xFFFFFFF, 0xFFFFFFFF, 2**63, 2**64 - 1])
def test_write_uvarint_is_leb128(value: int) -> None:
    out = bytearray(b"head")
    write_uvarint(out, value)
    assert bytes(out) == b"head" + _leb128(value)
    read = read_uvarint if value < 2**32 else read_uvarlong
    assert read(bytes(out), 4) == (value, len(out))


@pytest.mark.parametrize("n", [0, 1, 2, 125, 126, 127, 128, 129, 300])
def test_compact_strings_read_back(n: int) -> None:
    text = ("ab\u00e9" * n)[:n]  # a two-byte character too: the length counts bytes
    out = bytearray(b"\x99")
    write_compact_string(out, text)
    end = len(out)
    out += b"tail"
    assert read_compact_string(out, 1) == (text, end)
    assert read_compact_nullable_string(memoryview(bytes(out)), 1) == (text, end)
    if end > 2:  # cut inside the string: refused as truncated, however long its length prefix is
        for reader in (read_compact_string, read_compact_nullable_string):
            with pytest.raises(ProtocolError, match="truncated compact string"):
                reader(bytes(out[:end - 1]), 1)


def test_compact_string_null_and_missing_length() -> None:
    out = bytearray()
    write_compact_nullable_string(out, None)
    assert read_compact_nullable_string(bytes(out), 0) == (None, 1)
    with pytest.raises(ProtocolError, match="null compact string"):
        read_compact_string(bytes(out), 0)
    for reader in (read_compact_string, read_compact_nullable_string):
        with pytest.raises(ProtocolError, match="truncated"):
            reader(b"\x05abcd", 6)  # no length byte left at all

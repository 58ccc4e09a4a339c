"""Property tests: the compiled core and the pure twin build the same bytes and decode the same values."""

from __future__ import annotations

from array import array

import pyarrow as pa
import pytest
from _records_helpers import IMPLS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiokafka_lite.errors import CorruptRecordError, IllegalArgumentError

CORE, PY = IMPLS["cython"], IMPLS["python"]

headers_st = st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=20)), max_size=3)
record_st = st.tuples(
    st.integers(0, 1 << 45),
    st.none() | st.binary(max_size=30),
    st.none() | st.binary(max_size=120),
    st.none() | headers_st,
)
batch_st = st.fixed_dictionaries({
    "codec": st.integers(0, 4),
    "batch_size": st.integers(0, 3000),
    "producer_id": st.integers(-1, 1 << 40),
    "txn": st.booleans(),
    "log_append": st.booleans(),
    "records": st.lists(record_st, min_size=1, max_size=40),
})


# One pool for every example: the core builds into stores that earlier examples' batches left behind.
_POOL = CORE.StorePool()


def _build_all(impl: object, spec: dict, base: int, capacity: int = 0) -> tuple[list[bytes], int]:
    out = []
    recs = spec["records"]
    i = 0
    pool = _POOL if impl is CORE else None
    while i < len(recs):
        pid = spec["producer_id"]
        b = impl.BatchBuilder(spec["codec"], spec["batch_size"], base_offset=base,  # type: ignore[attr-defined]
                              producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                              is_transactional=spec["txn"], timestamp_type=int(spec["log_append"]),
                              capacity=capacity, pool=pool)
        n = 0
        while i < len(recs) and b.append(*recs[i]) is not None:
            i += 1
            n += 1
        out.append(b.build())
        base += n
    return out, base


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(batch_st, min_size=1, max_size=4), data=st.data())
def test_twins_agree(specs: list[dict], data: st.DataObject) -> None:
    blobs: list[bytes] = []
    base = 0
    for spec in specs:
        # a store presized (and pooled, from 32 KiB) or grown from 1 KiB: the same bytes either way
        core, _ = _build_all(CORE, spec, base, data.draw(st.sampled_from([0, 100, 40_000, 1 << 17])))
        py, base = _build_all(PY, spec, base)
        assert core == py  # byte-identical builder output
        blobs += core
    fetch = b"".join(blobs)
    cut = data.draw(st.integers(0, len(fetch)))
    fetch = fetch[:cut] if data.draw(st.booleans()) else fetch
    assert CORE.read_batches(fetch) == PY.read_batches(fetch)
    options = {
        "start_offset": data.draw(st.integers(-1, base + 1)),
        "end_offset": data.draw(st.integers(-1, base + 1)),
        "skip_control": data.draw(st.booleans()),
        "aborted": data.draw(st.none() | st.lists(st.tuples(st.integers(-1, 3), st.integers(0, base)))),
    }
    a = CORE.decode_records(fetch, "topic", 1, **options)
    b = PY.decode_records(fetch, "topic", 1, **options)
    assert a == b
    x = CORE.decode_arrow(fetch, "topic", 1, **options)
    y = PY.decode_arrow(fetch, "topic", 1, **options)
    assert x.batch.equals(y.batch) and x[1:] == y[1:]
    assert x.batch.column("offset").to_pylist() == [r.offset for r in a.records]
    try:
        CORE.decode_records(fetch, "topic", 1, strict=True)
        strict_ok = True
    except CorruptRecordError:
        strict_ok = False
    assert strict_ok == (not CORE.decode_records(fetch, "topic", 1).truncated)


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.binary(min_size=1, max_size=8), min_size=1, max_size=4))
def test_twins_agree_on_header_keys_that_are_not_utf8(keys: list[bytes]) -> None:
    """Issue 9: any header key bytes decode the same (Python's UTF-8 'replace') in both twins and Arrow."""
    import google_crc32c

    placeholders = [chr(0x41 + i) * len(k) for i, k in enumerate(keys)]
    b = CORE.BatchBuilder(0, 1 << 20)
    assert b.append(1, None, b"v", [(p, b"w") for p in placeholders]) is not None
    raw = bytearray(b.build())
    for p, k in zip(placeholders, keys, strict=True):
        at = raw.rindex(p.encode() + b"\x02w")
        raw[at:at + len(k)] = k
    raw[17:21] = google_crc32c.value(bytes(raw[21:])).to_bytes(4, "big")
    want = tuple((k.decode("utf-8", "replace"), b"w") for k in keys)
    for impl in (CORE, PY):
        assert impl.decode_records(bytes(raw), "t", 0).records[0].headers == want
        assert impl.read_batches(bytes(raw))[0].records[0].headers == want
    x, y = CORE.decode_arrow(bytes(raw), "t", 0).batch, PY.decode_arrow(bytes(raw), "t", 0).batch
    x.validate(full=True)
    assert x.equals(y)
    assert x.column("headers").to_pylist()[0] == [{"key": k, "value": v} for k, v in want]


@given(st.lists(st.none() | st.binary(max_size=300) | st.integers() | st.text(max_size=5), max_size=30),
       st.booleans())
def test_longest_plain_twins_agree(items: list, as_tuple: bool) -> None:
    """send_many's one-pass check of its values: the longest bytes (None counts 0), -1 for anything else."""
    seq = tuple(items) if as_tuple else items
    plain = all(x is None or type(x) is bytes for x in items)
    expected = max((len(x) for x in items if x is not None), default=0) if plain else -1
    assert CORE.longest_plain(seq) == PY.longest_plain(seq) == expected
    assert CORE.longest_plain(iter(items)) == expected
    assert CORE.longest_plain([bytearray(b"x")]) == PY.longest_plain([bytearray(b"x")]) == -1


values_st = st.lists(st.none() | st.binary(max_size=200), min_size=1, max_size=40)


def _as_buffer(impl: object, values: list, wide: bool, pad: int) -> object:
    """``values`` end to end in one buffer (``pad`` junk bytes before the first), Arrow's layout."""
    data = bytearray(b"\xee" * pad)
    offsets = [pad]
    validity = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is not None:
            data += v
            validity[i >> 3] |= 1 << (i & 7)
        offsets.append(len(data))
    off = array("q" if wide else "i", offsets)
    has_null = any(v is None for v in values)
    return impl.ValueBuffer(bytes(data), off, validity if has_null else None)  # type: ignore[attr-defined]


@settings(max_examples=150, deadline=None)
@given(values=values_st, keyed=st.booleans(), wide=st.booleans(), pad=st.integers(0, 5),
       batch_size=st.integers(0, 3000), start=st.integers(0, 5), data=st.data())
def test_value_buffer_twins_agree(values: list, keyed: bool, wide: bool, pad: int, batch_size: int,
                                  start: int, data: st.DataObject) -> None:
    """send_many's buffer input: each core builds from a ValueBuffer the very batches it builds from the
    same values as a list of bytes, and the two cores agree (batch by batch, as the batch fills)."""
    keys = [data.draw(st.none() | st.binary(max_size=10)) for _ in values] if keyed else None
    start = min(start, len(values) - 1)
    out = {}
    for impl in (CORE, PY):
        for form in ("buffer", "list"):
            vals = _as_buffer(impl, values, wide, pad) if form == "buffer" else values
            batches, pos = [], start
            while pos < len(values):
                b = impl.BatchBuilder(0, batch_size)  # type: ignore[attr-defined]
                n = b.append_many(vals, keys, 1_700_000_000_000, None, pos)
                assert n >= 1
                pos += n
                batches.append(b.build())
            out[impl.__name__, form] = batches
    assert len({tuple(v) for v in out.values()}) == 1
    got = [r.value for raw in out[CORE.__name__, "buffer"] for r in CORE.read_batches(raw)[0].records]
    assert got == values[start:]
    assert CORE.longest_plain(_as_buffer(CORE, values, wide, pad)) == PY.longest_plain(
        _as_buffer(PY, values, wide, pad)) == max((len(v) for v in values if v is not None), default=0)


@pytest.mark.parametrize("offsets", [[0, 4], [2, 1, 3], [-1, 2], [0, 1, 9]])
def test_value_buffer_offsets_outside_the_data_are_refused(offsets: list[int]) -> None:
    """Offsets that decrease or leave the data raise IllegalArgumentError in both cores, never read
    outside the buffer."""
    for impl in (CORE, PY):
        vb = impl.ValueBuffer(b"abc", offsets)  # type: ignore[attr-defined]
        with pytest.raises(IllegalArgumentError):
            impl.longest_plain(vb)
        with pytest.raises(IllegalArgumentError):
            impl.BatchBuilder(0, 1 << 20).append_many(vb, None, 1)  # type: ignore[attr-defined]


def test_value_buffer_reads_arrow_arrays_where_they_are() -> None:
    """A pyarrow binary, large binary or string array (sliced, with nulls) is read through its own
    buffers: the batch holds its values."""
    from aiokafka_lite.records import ValueBuffer

    values = [b"a", None, b"", b"xyz" * 30, "é".encode(), None, b"q"]
    for typ in (pa.binary(), pa.large_binary()):
        arr = pa.array(values, type=typ)
        for piece in (arr, arr.slice(1), arr.slice(3, 3)):
            vb = ValueBuffer.from_arrow(piece)
            assert list(vb) == piece.to_pylist()
            for impl in (CORE, PY):
                b = impl.BatchBuilder(0, 1 << 20)  # type: ignore[attr-defined]
                assert b.append_many(vb, None, 5) == len(piece)
                assert [r.value for r in impl.read_batches(b.build())[0].records] == piece.to_pylist()
    strings = pa.array(["x", None, "yz"], type=pa.large_string())
    assert list(ValueBuffer.from_arrow(strings)) == [b"x", None, b"yz"]
    with pytest.raises(IllegalArgumentError):
        ValueBuffer.from_arrow(pa.array([1, 2]))


def test_value_buffer_cannot_be_changed_after_its_checks() -> None:
    """A ValueBuffer's parts are read-only: the checks made when it was built (offsets of int32 or int64,
    a bitmap covering the values) hold for as long as it lives, in both cores."""
    from aiokafka_lite.records import ValueBuffer

    vb = ValueBuffer(b"abc", [0, 1, 3], b"\x03")
    for name, value in (("data", b""), ("offsets", memoryview(b"abcdefgh")), ("validity", b""),
                        ("validity_offset", 1 << 20)):
        with pytest.raises(AttributeError):
            setattr(vb, name, value)
    assert list(vb) == [b"a", b"bc"]
    for impl in (CORE, PY):
        b = impl.BatchBuilder(0, 1 << 20)  # type: ignore[attr-defined]
        assert impl.longest_plain(vb) == 2 and b.append_many(vb, None, 1) == 2


def test_core_reads_only_the_offsets_buffer_it_holds() -> None:
    """The compiled core re-checks the offsets buffer it acquires (items of 4 or 8 bytes, as many as its
    len() says) before reading any, whatever sits in a ValueBuffer's slot: offsets of 1-byte items, or
    a len() larger than the buffer, or a validity bitmap shorter than the values, are refused with
    IllegalArgumentError before anything is appended, instead of read past their end."""
    import numpy as np

    from aiokafka_lite.records import ValueBuffer

    backing = array("i", [0, 1, 2, 3] + [3] * 12)  # what a read past the end would find: valid offsets
    as_bytes = memoryview(backing).cast("B")[:8]  # 8 items of 1 byte
    rows = np.frombuffer(backing, dtype=np.int32)[2:2].reshape(3, 0)  # len() 3, no bytes at all
    for bad in (as_bytes, rows):
        vb = ValueBuffer(b"abc", [0])
        vb._offsets = bad  # type: ignore[attr-defined]  # what no public call can do
        with pytest.raises(IllegalArgumentError):
            CORE.longest_plain(vb)
        b = CORE.BatchBuilder(0, 1 << 20)
        with pytest.raises(IllegalArgumentError):
            b.append_many(vb, None, 1)
        assert b.record_count == 0
    vb = ValueBuffer(b"abc", [0, 1, 3])
    vb._validity = memoryview(b"")  # type: ignore[attr-defined]  # no bits for its two values
    with pytest.raises(IllegalArgumentError):
        CORE.longest_plain(vb)
    with pytest.raises(IllegalArgumentError):
        CORE.BatchBuilder(0, 1 << 20).append_many(vb, None, 1)


def test_a_validity_buffer_without_memory_is_released() -> None:
    """An exporter may give a zero-length buffer a NULL address (here a ctypes array at address 0):
    the core still releases it, so the ValueBuffer's views are freed once it goes (a held export would
    keep them, and the exporter's buffer, locked)."""
    import ctypes
    import gc
    import weakref

    from aiokafka_lite.records import ValueBuffer

    for impl in (CORE, PY):
        for call in ("longest", "append"):
            nowhere = (ctypes.c_ubyte * 0).from_address(0)
            locked = bytearray()
            vb = ValueBuffer(locked, [0], nowhere)
            assert vb.validity is not None
            views = weakref.ref(vb.validity), weakref.ref(vb.data)
            if call == "longest":
                assert impl.longest_plain(vb) == 0
            else:
                assert impl.BatchBuilder(0, 1 << 20).append_many(vb, None, 1) == 0  # type: ignore[attr-defined]
            del vb
            gc.collect()
            assert [ref() for ref in views] == [None, None]
            locked.extend(b"resizable again")

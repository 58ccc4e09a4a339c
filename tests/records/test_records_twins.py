"""Property tests: the compiled core and the pure twin build the same bytes and decode the same values."""

from __future__ import annotations

from _records_helpers import IMPLS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiokafka_lite.errors import CorruptRecordError

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

"""Choosing a record's partition: key hashes compatible with other clients, and KIP-794 sticky.

A partitioner setting names *two* policies: how a keyed record is hashed, and where a record without a
key goes. The names follow librdkafka's, so a mixed fleet agrees on where each key lives:

=====================  ==================================  ===========================================
name                   keyed records                       records with key None
=====================  ==================================  ===========================================
``default``            murmur2 (Java's)                    uniform sticky (KIP-794, Java >= 3.3)
``murmur2_random``     murmur2 (Java's)                    uniform sticky
``murmur2``            murmur2 (Java's)                    hash of b"": always one partition
``consistent_random``  CRC-32 (librdkafka ``consistent``)  uniform sticky   (alias ``crc32_random``)
``consistent``         CRC-32                              hash of b"" = 0: partition 0 (``crc32``)
``fnv1a_random``       FNV-1a (Sarama's)                   uniform sticky
``fnv1a``              FNV-1a (Sarama's)                   hash of b"": always one partition
``murmur3_random``     MurmurHash3 x86_32, seed 0          uniform sticky
``murmur3``            MurmurHash3 x86_32, seed 0          hash of b"": always one partition
``uniform_sticky``     ignored: uniform sticky             uniform sticky   (alias ``sticky``)
``round_robin``        ignored: next available partition   next available partition
=====================  ==================================  ===========================================

A callable ``partitioner(key_bytes, all_partitions, available_partitions) -> int`` (aiokafka's
signature) is also accepted; it sees every record, keyed or not.

Uniform sticky (KIP-794): records without a key stick to one partition until ``batch_size`` bytes went
there, then switch, so batches fill up instead of every partition getting a sliver. The switch happens
when the partition's batch takes no more records (it filled up, or was sent after lingering), so the
record that would start a one-record batch there starts a batch on the next partition instead; the
bytes are read off the batches (:meth:`PartitionChooser.track`), one count for send() and send_many().
The next partition is drawn at random with weights that favour partitions with shorter queues (Java's
adaptive partitioning), so a slow broker gets less new data.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import mmh3

from .._native import PURE, pure_module
from ..errors import ConfigError, IllegalArgumentError
from ..records import RECORD_OVERHEAD_MAX

if TYPE_CHECKING or not PURE:
    # Compiled when built (the import system prefers the extension), else the same source as Python.
    from ._hash import fnv1a, fnv1a_partition, murmur2, murmur2_partition
else:
    _hashes = pure_module(f"{__package__}._hash")
    fnv1a, fnv1a_partition = _hashes.fnv1a, _hashes.fnv1a_partition
    murmur2, murmur2_partition = _hashes.murmur2, _hashes.murmur2_partition

__all__ = [
    "PartitionChooser",
    "PartitionerSpec",
    "StickyPartitioner",
    "crc32_partition",
    "fnv1a",
    "fnv1a_partition",
    "murmur2",
    "murmur2_partition",
    "murmur3_partition",
    "resolve_partitioner",
]

KeyHash = Callable[[Any, int], int]
CustomPartitioner = Callable[[bytes | None, list[int], list[int]], int]


def crc32_partition(key: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """librdkafka's ``consistent``: ``crc32(key) % n`` (the IEEE CRC-32 zlib computes)."""
    return zlib.crc32(key) % num_partitions


def murmur3_partition(key: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """MurmurHash3 x86_32 with seed 0, taken unsigned, modulo n (no other client defines one)."""
    return mmh3.hash(bytes(key), 0, signed=False) % num_partitions


_HASHES: dict[str, KeyHash] = {
    "murmur2": murmur2_partition,
    "consistent": crc32_partition,
    "crc32": crc32_partition,
    "fnv1a": fnv1a_partition,
    "murmur3": murmur3_partition,
}


class PartitionerSpec:
    """A resolved ``partitioner`` setting.

    ``key_hash`` maps ``(key_bytes, num_partitions)`` to a partition (None: keys are ignored);
    ``null_key`` says what records without a key do: ``"sticky"``, ``"hash"`` (hash b"") or
    ``"round_robin"``; ``custom`` is a user callable that decides everything.
    """

    __slots__ = ("custom", "key_hash", "name", "null_key")

    def __init__(self, name: str, key_hash: KeyHash | None, null_key: str,
                 custom: CustomPartitioner | None = None) -> None:
        self.name = name
        self.key_hash = key_hash
        self.null_key = null_key
        self.custom = custom

    def __repr__(self) -> str:
        return f"PartitionerSpec({self.name!r}, null_key={self.null_key!r})"


def resolve_partitioner(value: Any, ignore_keys: bool = False) -> PartitionerSpec:
    """Turn the ``partitioner`` setting into a :class:`PartitionerSpec`; unknown names raise ConfigError."""
    if callable(value):
        name = getattr(value, "__name__", type(value).__name__)
        return PartitionerSpec(str(name), None, "custom", value)
    if not isinstance(value, str):
        raise ConfigError(f"setting 'partitioner' must be a name or a callable, got {type(value).__name__}")
    name = value.strip().lower().replace("-", "_")
    if name in ("default", "murmur2_random"):
        spec = PartitionerSpec(name, murmur2_partition, "sticky")
    elif name in ("uniform_sticky", "sticky"):
        spec = PartitionerSpec(name, None, "sticky")
    elif name == "round_robin":
        spec = PartitionerSpec(name, None, "round_robin")
    elif name.endswith("_random") and name[: -len("_random")] in _HASHES:
        spec = PartitionerSpec(name, _HASHES[name[: -len("_random")]], "sticky")
    elif name in _HASHES:
        spec = PartitionerSpec(name, _HASHES[name], "hash")
    else:
        known = ["default", "murmur2_random", "murmur2", "consistent_random", "consistent", "crc32",
                 "fnv1a_random", "fnv1a", "murmur3_random", "murmur3", "uniform_sticky", "round_robin"]
        raise ConfigError(f"setting 'partitioner': unknown partitioner {value!r}; known: {', '.join(known)} "
                          "or a callable(key_bytes, all_partitions, available_partitions)")
    if ignore_keys and spec.null_key in ("sticky", "round_robin"):
        spec.key_hash = None
    return spec


def call_custom(spec: PartitionerSpec, key: bytes | None, all_partitions: Sequence[int],
                available: Sequence[int]) -> int:
    """Run a user partitioner and check its answer, so a bad one fails the send clearly."""
    assert spec.custom is not None
    result = spec.custom(key, list(all_partitions), list(available))
    if type(result) is not int or not 0 <= result < len(all_partitions):
        raise IllegalArgumentError(
            f"partitioner {spec.name!r} returned {result!r}; expected an int in 0..{len(all_partitions) - 1}")
    return result


class StickyPartitioner:
    """Chooses partitions for keyless records: the next uniform-sticky partition, or round-robin.

    The sticky *state* (current partition, bytes sent to it) lives in the producer's per-topic info,
    which the send path reads on every record; this class only makes the (rarer) choices.
    ``queue_sizes`` is a callable ``(topic, partitions) -> list[int]`` giving how many batches wait
    per partition; it drives the adaptive choice.
    """

    __slots__ = ("_rng", "_rr", "queue_sizes")

    def __init__(self, queue_sizes: Callable[[str, Sequence[int]], list[int]] | None = None,
                 rng: random.Random | None = None) -> None:
        self.queue_sizes = queue_sizes
        self._rr: dict[str, int] = {}
        self._rng = rng or random.Random()

    def round_robin(self, topic: str, num_partitions: int, available: Sequence[int]) -> int:
        """Java's RoundRobinPartitioner: cycle over the available partitions (all if none is)."""
        n = self._rr.get(topic, -1) + 1
        self._rr[topic] = n
        if available:
            return available[n % len(available)]
        return n % num_partitions

    def choose(self, topic: str, num_partitions: int, available: Sequence[int]) -> int:
        """The next sticky partition: random among those with a leader, favouring short queues."""
        candidates: Sequence[int] = available if available else range(num_partitions)
        if len(candidates) == 1:
            return candidates[0]
        if self.queue_sizes is not None:
            sizes = self.queue_sizes(topic, candidates)
            top = max(sizes)
            if top > min(sizes):
                # Weight each partition by how much shorter its queue is than the longest (+1 so every
                # partition keeps a chance), as Java's adaptive partitioning does.
                weights = [top + 1 - s for s in sizes]
                return self._rng.choices(list(candidates), weights)[0]
        return candidates[self._rng.randrange(len(candidates))]


class PartitionChooser:
    """Where a record sent without a partition goes: the one owner of that rule for ``send()``,
    ``send_many()`` and (through ``key_hash`` and ``sticky_null``) the compiled fast path.

    The per-topic sticky state (``sticky_partition``, ``sticky_batch`` and the byte count) lives on the
    topic's info object, which the fast path reads on every record; only this object changes it.
    """

    __slots__ = ("batch_size", "key_hash", "spec", "sticky", "sticky_null")

    def __init__(self, spec: PartitionerSpec, sticky: StickyPartitioner, batch_size: int) -> None:
        self.spec = spec
        self.sticky = sticky
        self.batch_size = batch_size
        self.key_hash = spec.key_hash
        self.sticky_null = spec.null_key == "sticky"

    def choose(self, key: bytes | None, info: Any) -> tuple[int, bool]:
        """(partition, by the sticky rule): the key's hash, the sticky partition for keyless records
        (KIP-480), or the configured policy's choice."""
        if key is not None and self.key_hash is not None:
            return int(self.key_hash(key, info.num_partitions)), False
        if self.sticky_null:
            p = info.sticky_partition
            return (p if p >= 0 else self.switch(info)), True
        return self.other(key, info), False

    def switch(self, info: Any) -> int:
        """Move the topic's keyless records to the next sticky partition (KIP-794)."""
        p = self.sticky.choose(info.topic, info.num_partitions, info.available)
        info.sticky_partition = p
        info.sticky_produced = 0
        info.sticky_batch = None
        info.sticky_mark = 0
        return p

    # The KIP-794 byte count, for send() and send_many() alike: the bytes the sticky partition's batches
    # took since the switch, read off the batches (``builder.size``) rather than summed per record, so
    # the fast path counts nothing and every path measures the same bytes. ``sticky_batch`` is the batch
    # being filled and ``sticky_mark`` its size when it was taken on; ``sticky_produced`` holds what the
    # earlier batches of the same visit took. The fast path appends a keyless record only to
    # ``sticky_batch``: any other batch goes through :meth:`track` first.

    def track(self, info: Any, batch: Any) -> None:
        """Keyless records go into ``batch`` now (the sticky partition's open batch): count from here."""
        if info.sticky_batch is not batch:
            info.sticky_produced = self.produced(info)
            info.sticky_batch = batch
            builder = batch.builder
            # A new batch counts its header, so that one full batch is a batch's worth.
            info.sticky_mark = builder.size if builder is not None and builder.record_count else 0

    def produced(self, info: Any) -> int:
        """Bytes the sticky partition's batches took since the switch."""
        batch = info.sticky_batch
        if batch is None:
            return int(info.sticky_produced)
        builder = batch.builder
        size = builder.size if builder is not None else batch.uncompressed_size
        return int(info.sticky_produced + size - info.sticky_mark)

    def switch_due(self, info: Any, nbytes: int) -> bool:
        """Whether a keyless record of ``nbytes`` key+value bytes that its sticky batch did not take
        starts elsewhere: a batch's worth went to the sticky partition (with this record; a full
        ``batch_size`` batch always counts)."""
        return self.produced(info) + nbytes + RECORD_OVERHEAD_MAX > self.batch_size

    def other(self, key: bytes | None, info: Any) -> int:
        """A custom partitioner's, round robin's, or hashing's choice for a record the rules above
        leave open."""
        spec = self.spec
        if spec.custom is not None:
            return call_custom(spec, key, info.partitions, info.available)
        if spec.null_key == "round_robin":
            return self.sticky.round_robin(info.topic, info.num_partitions, info.available)
        # "hash": librdkafka hashes a missing key as empty bytes (one fixed partition).
        assert spec.key_hash is not None
        return spec.key_hash(b"", info.num_partitions)

    def group(self, info: Any, keys: Sequence[bytes | None]) -> dict[int, list[int]]:
        """Record indexes by partition for ``send_many`` with keys: keyed ones by their hash, keyless ones
        by the null-key rule (all to one sticky partition for the call)."""
        key_hash = self.key_hash
        assert key_hash is not None
        groups: dict[int, list[int]] = {}
        nparts = info.num_partitions
        null_p = -1
        for i, k in enumerate(keys):
            if k is not None:
                p = key_hash(k, nparts)
            elif not self.sticky_null:
                p = self.other(None, info)
            else:
                if null_p < 0:
                    null_p = info.sticky_partition
                    if null_p < 0:
                        null_p = self.switch(info)
                p = null_p
            g = groups.get(p)
            if g is None:
                groups[p] = [i]
            else:
                g.append(i)
        return groups

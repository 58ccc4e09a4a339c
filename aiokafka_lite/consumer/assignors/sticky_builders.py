"""The two assignment builders of the sticky assignors, step for step as Java's AbstractStickyAssignor.

A mixed group must agree whoever leads, so this reproduces the Java client's algorithm rather than some
other balanced, sticky assignment: the same inputs give the same partitions to the same members
(tests/consumer/test_assignors_sticky_rack.py holds the Java test cases).

* :func:`constrained_assign` (every member subscribes to the same topics): owners keep up to their quota
  (floor or ceil of partitions / members), then the rest goes round robin to members under quota.
* :func:`general_assign` (subscriptions differ): owners keep what they still subscribe to, the rest goes
  to the least loaded eligible member, then single partitions move from fuller to emptier members until
  no member could take a partition from one holding two more.

Rack awareness (KIP-881), when :class:`RackInfo` says it applies: owned partitions without a replica in
the owner's rack are not kept, unassigned partitions first go to members in one of their replicas' racks
(within the quotas), and rebalancing moves prefer a member in such a rack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ...structs import TopicPartition
from ._java_order import JavaHashSet

PartitionRacks = Mapping[str, Mapping[int, frozenset[str]]]


def use_rack_aware(member_racks: Iterable[str], partition_racks: set[str],
                   per_partition: Iterable[frozenset[str]], prefer: bool = False) -> bool:
    """Java's rule: some member rack holds a replica, and the partitions' rack sets are not all equal
    (``prefer``, a test hook as in Java, skips the second condition)."""
    members = set(member_racks)
    if not members or members.isdisjoint(partition_racks):
        return False
    return prefer or not all(r == partition_racks for r in per_partition)


class RackInfo:
    """Member racks and replica racks, when rack-aware assignment applies (empty maps otherwise)."""

    def __init__(self, partitions: Sequence[TopicPartition], partition_racks: PartitionRacks | None,
                 member_racks: Mapping[str, str | None], prefer: bool = False) -> None:
        by_rack: dict[str, list[str]] = {}
        for member, rack in member_racks.items():
            if rack:
                by_rack.setdefault(rack, []).append(member)
        racks: dict[TopicPartition, frozenset[str]] = {}
        all_racks: set[str] = set()
        if by_rack:
            for tp in partitions:
                r = frozenset((partition_racks or {}).get(tp.topic, {}).get(tp.partition, frozenset()))
                racks[tp] = r
                all_racks |= r
        self.consumer_racks: dict[str, str] = {}
        self.partition_racks: dict[TopicPartition, frozenset[str]] = {}
        if use_rack_aware(by_rack, all_racks, racks.values(), prefer):
            self.consumer_racks = {m: r for r, ms in by_rack.items() for m in ms}
            self.partition_racks = racks
        # As in Java, counted whenever members name racks, even if rack-aware assignment is off.
        self._consumers_near = {tp: sum(len(by_rack.get(r, ())) for r in rs) for tp, rs in racks.items()}

    def mismatch(self, member: str, tp: TopicPartition) -> bool:
        rack = self.consumer_racks.get(member)
        if rack is None:
            return False
        replicas = self.partition_racks.get(tp)
        return replicas is None or rack not in replicas

    def sort_by_consumers_near(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """Partitions with the fewest members in their racks first (stable)."""
        if not self._consumers_near:
            return partitions
        return sorted(partitions, key=lambda tp: self._consumers_near.get(tp, 0))

    def next_near(self, tp: TopicPartition, members: Sequence[str], first: int) -> int:
        """Index of the first member from ``first`` on (wrapping) in a rack of ``tp``; -1 if none."""
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        for i in range(len(members)):
            index = (first + i) % len(members)
            rack = self.consumer_racks.get(members[index])
            if rack is not None and rack in racks:
                return index
        return -1


def _all_partitions(ppt: Mapping[str, Sequence[int]], topics: Iterable[str]) -> list[TopicPartition]:
    return [TopicPartition(t, p) for t in topics for p in ppt[t]]


def constrained_assign(
    ppt: Mapping[str, Sequence[int]], rack: RackInfo, owned: Mapping[str, list[TopicPartition]],
    multiply_claimed: set[TopicPartition],
) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, str]]:
    """Every member has the same subscription; ``owned`` iterates in Java's HashMap order.

    Returns the assignment and the partitions changing owner (what cooperative-sticky withholds).
    """
    c = _Constrained(ppt, rack, owned, multiply_claimed)
    assigned = c.keep_owned(owned)
    unassigned = [tp for tp in _all_partitions(ppt, sorted(ppt)) if tp not in assigned]
    c.under.sort()
    c.exact.sort()
    unassigned = rack.sort_by_consumers_near(unassigned)
    if rack.consumer_racks:  # round robin within racks first
        unassigned = c.within_racks(unassigned)
    c.fill(unassigned)
    return c.assignment, c.transferring


class _Constrained:
    """The state of :func:`constrained_assign`, in Java's variables: members below the minimum quota
    (``under``), members at it that may take one more (``exact``), and how many are over it."""

    def __init__(self, ppt: Mapping[str, Sequence[int]], rack: RackInfo,
                 owned: Mapping[str, list[TopicPartition]], multiply_claimed: set[TopicPartition]) -> None:
        total = sum(len(ps) for ps in ppt.values())
        n = len(owned)
        self.rack = rack
        self.multiply_claimed = multiply_claimed
        self.min_q, self.max_q = total // n, -(-total // n)
        self.expected_over = total % n
        self.over = 0
        self.assignment: dict[str, list[TopicPartition]] = {c: [] for c in owned}
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.transferring: dict[TopicPartition, str] = {}
        self.under: list[str] = []  # members below min_q
        self.exact: list[str] = []  # members at min_q that may still take one more

    def keep_owned(self, owned: Mapping[str, list[TopicPartition]]) -> set[TopicPartition]:
        """Each member keeps what it owns up to its quota (and in its rack); returns what is kept."""
        assigned: set[TopicPartition] = set()
        for consumer, parts in owned.items():
            kept = []
            for tp in parts:
                if self.rack.mismatch(consumer, tp):
                    self.maybe_revoked[tp] = consumer
                else:
                    kept.append(tp)
            kept.sort(key=lambda tp: (tp.partition, tp.topic))
            kept = [tp for tp in kept if tp not in self.multiply_claimed]
            if len(kept) < self.min_q:
                keep = kept
                self.under.append(consumer)
            elif len(kept) >= self.max_q and self.over < self.expected_over:
                self.over += 1
                if self.over == self.expected_over:
                    self.exact.clear()
                keep = kept[:self.max_q]
            else:
                keep = kept[:self.min_q]
                if self.over < self.expected_over:
                    self.exact.append(consumer)
            self.assignment[consumer].extend(keep)
            assigned.update(keep)
            for tp in kept[len(keep):]:
                self.maybe_revoked[tp] = consumer
        return assigned

    def give(self, tp: TopicPartition, consumer: str) -> int:
        self.assignment[consumer].append(tp)
        if (self.maybe_revoked.get(tp, consumer) != consumer) or tp in self.multiply_claimed:
            self.transferring[tp] = consumer
        return len(self.assignment[consumer])

    def _near_exact(self, tp: TopicPartition) -> str | None:
        """A member at its minimum quota in ``tp``'s rack, which then goes over it."""
        first = self.rack.next_near(tp, self.exact, 0)
        if first < 0:
            return None
        chosen = self.exact[first]
        if len(self.assignment[chosen]) + 1 == self.max_q:
            del self.exact[first]
            self.over += 1
            if self.over == self.expected_over:
                self.exact.clear()
        return chosen

    def within_racks(self, unassigned: list[TopicPartition]) -> list[TopicPartition]:
        """Round robin of partitions over members in their racks; returns the partitions left."""
        next_index = 0
        rest = []
        for tp in unassigned:
            chosen = None
            index = self.rack.next_near(tp, self.under, next_index)
            if index >= 0:
                chosen = self.under[index]
                count = len(self.assignment[chosen]) + 1
                if count >= self.min_q:
                    self.under.remove(chosen)
                    if count < self.max_q and self.over < self.expected_over:
                        self.exact.append(chosen)
                else:
                    index += 1
                next_index = index % len(self.under) if self.under else 0
            elif self.exact:
                chosen = self._near_exact(tp)
            if chosen is None:
                rest.append(tp)
            else:
                self.give(tp, chosen)
        return rest

    def fill(self, unassigned: list[TopicPartition]) -> None:
        """The rest, to members below their quota first, as Java walks them."""
        under, exact = self.under, self.exact
        pos = 0  # Java walks ``under`` with an iterator, restarting it when it runs out
        for tp in unassigned:
            from_under = True
            if pos < len(under):
                chosen = under[pos]
                pos += 1
            elif not under and not exact:
                # Java: IllegalStateException
                raise AssertionError(f"sticky assignor: no member left for {tp}")
            elif not under:
                chosen, from_under = exact.pop(0), False
            else:
                chosen, pos = under[0], 1
            count = self.give(tp, chosen)
            if count == self.min_q and from_under:
                pos -= 1
                del under[pos]
                exact.append(chosen)
            elif count == self.max_q:
                self.over += 1


class _Movements:
    """Partition moves of one rebalance, so that a partition moving back undoes an earlier move."""

    def __init__(self) -> None:
        self._by_topic: dict[str, dict[tuple[str, str], JavaHashSet]] = {}
        self._moves: dict[TopicPartition, tuple[str, str]] = {}

    def _remove(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self._moves.pop(tp)
        pairs = self._by_topic[tp.topic]
        pairs[pair].discard(tp)
        if not len(pairs[pair]):
            del pairs[pair]
        if not pairs:
            del self._by_topic[tp.topic]
        return pair

    def _add(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self._moves[tp] = pair
        self._by_topic.setdefault(tp.topic, {}).setdefault(pair, JavaHashSet()).add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self._moves:
            src, _ = self._remove(tp)
            if src != new:
                self._add(tp, (src, new))
        else:
            self._add(tp, (old, new))

    def actual(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        """The partition to move from ``old`` to ``new`` instead of ``tp``: one that made the reverse move."""
        pairs = self._by_topic.get(tp.topic)
        if pairs is None:
            return tp
        if tp in self._moves:
            old = self._moves[tp][0]
        reverse = pairs.get((new, old))
        return tp if reverse is None else reverse.first()


class _General:
    def __init__(self, ppt: Mapping[str, Sequence[int]], rack: RackInfo,
                 current: dict[str, list[TopicPartition]], topics: Mapping[str, Sequence[str]]) -> None:
        self.ppt = ppt
        self.rack = rack
        self.total = sum(len(ps) for ps in ppt.values())
        self.current = current
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in ppt}
        self.consumer_topics: dict[str, list[str]] = {}
        for consumer, subscribed in topics.items():
            mine = [t for t in subscribed if t in ppt]
            self.consumer_topics[consumer] = mine
            for t in mine:
                self.topic_consumers[t].append(consumer)
            current.setdefault(consumer, [])
        self.owner = {tp: c for c, tps in current.items() for tp in tps}
        order = sorted(self.topic_consumers, key=lambda t: (len(self.topic_consumers[t]), t))
        self.sorted_all = _all_partitions(ppt, order)
        self.moves = _Movements()

    def by_size(self) -> list[str]:
        return sorted(self.current, key=lambda c: (len(self.current[c]), c))

    def max_size(self, consumer: str) -> int:
        topics = self.consumer_topics[consumer]
        if len(topics) == len(self.ppt):
            return self.total
        return sum(len(self.ppt[t]) for t in topics)

    def balanced(self) -> bool:
        order = self.by_size()
        if len(self.current[order[0]]) >= len(self.current[order[-1]]) - 1:
            return True
        holder = {tp: c for c, tps in self.current.items() for tp in tps}
        for c in order:
            count = len(self.current[c])
            if count == self.max_size(c):
                continue
            mine = set(self.current[c])
            for t in self.consumer_topics[c]:
                for p in self.ppt[t]:
                    tp = TopicPartition(t, p)
                    other = holder.get(tp)
                    if tp not in mine and other is not None and count + 1 < len(self.current[other]):
                        return False
        return True

    def assign_one(self, tp: TopicPartition, rack: RackInfo | None) -> bool:
        for c in self.by_size():
            if tp.topic in self.consumer_topics[c] and (rack is None or not rack.mismatch(c, tp)):
                self.current[c].append(tp)
                self.owner[tp] = c
                return True
        return False

    def reassign(self, tp: TopicPartition, new: str | None = None) -> None:
        if new is None:
            new = next(c for c in self.by_size() if tp.topic in self.consumer_topics[c])
        moved = self.moves.actual(tp, self.owner[tp], new)
        old = self.owner[moved]
        self.moves.move(moved, old, new)
        self.current[old].remove(moved)
        self.current[new].append(moved)
        self.owner[moved] = new

    def perform(self, partitions: list[TopicPartition], prev: Mapping[TopicPartition, str]) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self.balanced():
                    break
                consumer = self.owner[tp]
                size = len(self.current[consumer])
                was = prev.get(tp)
                if was is not None and was in self.current and size > len(self.current[was]) + 1:
                    self.reassign(tp, was)
                    performed = modified = True
                    continue
                # Java looks at members in the partition's racks first, then at all; either way the
                # partition then goes to the least loaded member subscribed to its topic.
                if any(size > len(self.current[o]) + 1 for o in self.topic_consumers[tp.topic]):
                    self.reassign(tp)
                    performed = modified = True
        return performed


def _score(assignment: Mapping[str, list[TopicPartition]]) -> int:
    sizes = [len(v) for v in assignment.values()]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1:])


def _previous_owners(topics: Mapping[str, Sequence[str]],
                     generations: Mapping[str, tuple[list[TopicPartition], int]]
                     ) -> dict[TopicPartition, str]:
    """Partitions last owned in an older generation than the newest, by that owner: moved back if it
    helps balance."""
    max_gen = max((gen for _, gen in generations.values()), default=-1)
    prev: dict[TopicPartition, tuple[str, int]] = {}
    for consumer in topics:
        parts, gen = generations[consumer]
        if gen >= max_gen:
            continue
        for tp in parts:
            if tp not in prev or gen > prev[tp][1]:
                prev[tp] = (consumer, gen)
    return {tp: c for tp, (c, _) in prev.items()}


def _keep_valid(g: _General, rack: RackInfo, topics: Mapping[str, Sequence[str]]
                ) -> tuple[set[TopicPartition], bool]:
    """Each member keeps what it owns of topics it still subscribes to (in its rack); partitions that
    no longer exist are forgotten. Returns what is kept, and whether anything must be revoked."""
    assigned: set[TopicPartition] = set()
    revocation_required = False
    for consumer, parts in g.current.items():
        kept = []
        for tp in parts:
            if tp.topic not in g.topic_consumers or tp.partition not in g.ppt[tp.topic]:
                g.owner.pop(tp, None)
            elif tp.topic not in topics[consumer] or rack.mismatch(consumer, tp):
                revocation_required = True
            else:
                kept.append(tp)
                assigned.add(tp)
        g.current[consumer] = kept
    return assigned, revocation_required


def general_assign(
    ppt: Mapping[str, Sequence[int]], rack: RackInfo, owned: dict[str, list[TopicPartition]],
    topics: Mapping[str, Sequence[str]], generations: Mapping[str, tuple[list[TopicPartition], int]],
) -> dict[str, list[TopicPartition]]:
    """Subscriptions differ. ``owned``: resolved current owners; ``topics``: each member's subscription
    (in Java's HashMap order); ``generations``: each member's claimed partitions and generation (-1: none)."""
    g = _General(ppt, rack, owned, topics)
    prev_owner = _previous_owners(topics, generations)
    assigned, revocation_required = _keep_valid(g, rack, topics)
    unassigned = [tp for tp in g.sorted_all if tp not in assigned]

    initializing = not g.current[g.by_size()[-1]]
    if rack.consumer_racks:
        left = [tp for tp in unassigned if not (g.topic_consumers[tp.topic] and g.assign_one(tp, rack))]
    else:
        left = unassigned
    for tp in left:
        if g.topic_consumers[tp.topic]:
            g.assign_one(tp, None)

    fixed = {TopicPartition(t, p) for t, cs in g.topic_consumers.items() if len(cs) < 2 for p in ppt[t]}
    g.sorted_all = [tp for tp in g.sorted_all if tp not in fixed]
    unassigned = [tp for tp in unassigned if tp not in fixed]
    held: dict[str, list[TopicPartition]] = {}
    for consumer in list(g.consumer_topics):
        parts = g.current[consumer]
        if len(parts) >= g.max_size(consumer) and all(len(g.topic_consumers[tp.topic]) < 2 for tp in parts):
            held[consumer] = g.current.pop(consumer)

    before = {c: list(v) for c, v in g.current.items()}
    before_owner = dict(g.owner)
    if not revocation_required:
        g.perform(unassigned, prev_owner)
    performed = g.perform(g.sorted_all, prev_owner)
    if not initializing and performed and _score(g.current) >= _score(before):
        g.current.clear()
        g.current.update(before)
        g.owner = before_owner
    g.current.update(held)
    return g.current

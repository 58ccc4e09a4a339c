"""Rack-aware sticky and cooperative-sticky assignment (KIP-881): the cases of the Java client's
AbstractStickyAssignorTest (testRackAwareAssignmentWithUniformSubscription and
testRackAwareAssignmentWithNonEqualSubscription) with their inputs and expected assignments.

Layout as in Java's helpers: broker i is in broker_racks[i]; partition p of the k-th topic (topics in
declaration order, partitions counted across topics) has replicas on brokers (p + j + offset) % brokers.
``prefer`` is Java's preferRackAwareLogic test hook, set as the Java test sets it before each call.
Java's verifyRackAssignment gives owned partitions in the Subscription and no user data: the cooperative
assignor reads them, Java's StickyAssignor (ownership from its user data only) never sees them, so they
are not given to ours either.
"""

from __future__ import annotations

import pytest

from aiokafka_lite.consumer.assignors import CooperativeStickyAssignor, GroupMember, StickyAssignor
from aiokafka_lite.consumer.assignors._java_order import hashmap_order, string_hash, tp_hash
from aiokafka_lite.consumer.group_protocol import Subscription
from aiokafka_lite.structs import TopicPartition as TP

ALL_RACKS = ["a", "b", "c", "d", "e", "f", "g"]
TOPICS = {"t1": 6, "t2": 7, "t3": 2}
ALL = ["t1", "t2", "t3"]
UNIFORM = [ALL, ALL, ALL]
NON_EQUAL = [ALL, ALL, ["t1", "t3"]]


def racks(n: int) -> list[str | None]:
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(n)]


def null_racks(n: int) -> list[str | None]:
    return [None] * n


def layout(topics: dict[str, int], rf: int, broker_racks: list[str | None]):
    parts, prack, offset = {}, {}, 0
    for t, n in topics.items():
        parts[t] = list(range(n))
        prack[t] = {p: frozenset(r for j in range(rf)
                                 if (r := broker_racks[(p + j + offset) % len(broker_racks)]) is not None)
                    for p in range(n)}
        offset += n
    return parts, prack


def parse(owned: str) -> list[TP]:
    out = []
    for item in owned.split(", "):
        topic, _, p = item.rpartition("-")
        out.append(TP(topic, int(p)))
    return out


def verify(assignor, rf, broker_racks, consumer_racks, consumer_topics, owned, expected, n_mismatch):
    """Java's AbstractPartitionAssignorTest.verifyRackAssignment."""
    parts, prack = layout(TOPICS, rf, broker_racks)
    members = {}
    for i, topics in enumerate(consumer_topics):
        mine = parse(owned[i]) if owned and isinstance(assignor, CooperativeStickyAssignor) else []
        members[f"consumer{i}"] = GroupMember(
            f"consumer{i}", Subscription(list(topics), owned_partitions=mine, rack_id=consumer_racks[i]))
    out = assignor.assign(parts, members, partition_racks=prack)
    got = [", ".join(sorted(f"{tp.topic}-{tp.partition}" for tp in out[f"consumer{i}"].partitions))
           for i in range(len(consumer_topics))]
    assert got == expected
    if n_mismatch >= 0:
        mismatched = [tp for i, rack in enumerate(consumer_racks) if rack is not None
                      for tp in out[f"consumer{i}"].partitions if rack not in prack[tp.topic][tp.partition]]
        assert len(mismatched) == n_mismatch, mismatched


def verify_twice(assignor, rf, broker_racks, consumer_racks, consumer_topics, expected, n_mismatch):
    """Java's verifyUniformSubscription / verifyNonEqualSubscription: from scratch, then owning it."""
    verify(assignor, rf, broker_racks, consumer_racks, consumer_topics, None, expected, n_mismatch)
    verify(assignor, rf, broker_racks, consumer_racks, consumer_topics, expected, expected, n_mismatch)


ASSIGNORS = [StickyAssignor, CooperativeStickyAssignor]


@pytest.mark.parametrize("cls", ASSIGNORS)
def test_rack_aware_assignment_with_uniform_subscription(cls) -> None:
    a = cls()
    plain = ["t1-0, t1-3, t2-0, t2-3, t2-6", "t1-1, t1-4, t2-1, t2-4, t3-0", "t1-2, t1-5, t2-2, t2-5, t3-1"]
    verify_twice(a, 3, null_racks(3), racks(3), UNIFORM, plain, -1)
    verify_twice(a, 3, racks(3), null_racks(3), UNIFORM, plain, -1)
    a.prefer_rack_aware = True
    verify_twice(a, 3, racks(3), racks(3), UNIFORM, plain, 0)
    verify_twice(a, 4, racks(4), racks(3), UNIFORM, plain, 0)
    a.prefer_rack_aware = False
    verify_twice(a, 3, racks(3), racks(3), UNIFORM, plain, 0)
    verify_twice(a, 3, racks(3), ["d", "e", "f"], UNIFORM, plain, -1)
    verify_twice(a, 3, racks(3), [None, "e", "f"], UNIFORM, plain, -1)
    # Rack-aligned for a lower replication factor, where each broker has a subset of the partitions.
    verify_twice(a, 1, racks(3), racks(3), UNIFORM, plain, 0)
    verify_twice(a, 2, racks(3), racks(3), UNIFORM, plain, 0)
    # One member on a rack with no partitions: balance wins, it gets misaligned partitions.
    verify_twice(a, 3, racks(2), racks(3), UNIFORM, plain, 5)
    owned = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3", "t2-4, t2-5, t2-6, t3-0, t3-1"]
    if cls is CooperativeStickyAssignor:
        # Misaligned owned partitions are revoked first (cooperative: moved in the next round).
        verify(a, 1, racks(3), racks(3), UNIFORM, owned, ["t1-0, t1-3", "t2-1", "t2-5, t3-1"], 0)
    else:
        verify(a, 1, racks(3), racks(3), UNIFORM, owned, plain, 0)
    a.prefer_rack_aware = True  # stickiness is kept when racks match
    verify(a, 3, racks(3), racks(3), UNIFORM, plain, plain, 0)


@pytest.mark.parametrize("cls", ASSIGNORS)
def test_rack_aware_assignment_with_non_equal_subscription(cls) -> None:
    a = cls()
    plain = ["t1-5, t2-0, t2-2, t2-4, t2-6", "t1-3, t2-1, t2-3, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-4, t3-1"]
    verify_twice(a, 3, null_racks(3), racks(3), NON_EQUAL, plain, -1)
    verify_twice(a, 3, racks(3), null_racks(3), NON_EQUAL, plain, -1)
    a.prefer_rack_aware = True
    verify_twice(a, 3, racks(3), racks(3), NON_EQUAL, plain, 0)
    verify_twice(a, 4, racks(4), racks(3), NON_EQUAL, plain, 0)
    a.prefer_rack_aware = False
    verify_twice(a, 3, racks(3), racks(3), NON_EQUAL, plain, 0)
    verify_twice(a, 3, racks(3), ["d", "e", "f"], NON_EQUAL, plain, -1)
    verify_twice(a, 3, racks(3), [None, "e", "f"], NON_EQUAL, plain, -1)
    # Rack alignment is best effort: with few rack choices some partitions stay misaligned.
    rf1 = ["t1-3, t2-0, t2-2, t2-3, t2-6", "t1-4, t2-1, t2-4, t2-5, t3-0", "t1-0, t1-1, t1-2, t1-5, t3-1"]
    verify_twice(a, 1, racks(3), racks(3), NON_EQUAL, rf1, 4)
    rf2 = ["t1-3, t2-0, t2-2, t2-5, t2-6", "t1-0, t2-1, t2-3, t2-4, t3-0", "t1-1, t1-2, t1-4, t1-5, t3-1"]
    verify_twice(a, 2, racks(3), racks(3), NON_EQUAL, rf2, 0)
    verify_twice(a, 3, racks(2), racks(3), NON_EQUAL, plain, 5)
    owned = ["t1-0, t1-1, t1-2, t1-3, t1-4", "t1-5, t2-0, t2-1, t2-2, t2-3", "t2-4, t2-5, t2-6, t3-0, t3-1"]
    if cls is StickyAssignor:
        verify(a, 1, racks(3), racks(3), NON_EQUAL, owned, rf1, 4)
        a.prefer_rack_aware = False
        verify(a, 3, racks(3), racks(3), NON_EQUAL, owned, plain, 0)
        a.prefer_rack_aware = True
        verify(a, 3, racks(3), racks(3), NON_EQUAL, owned, plain, 0)
    else:
        step = ["t1-3", "t2-1", "t3-1"]
        verify(a, 1, racks(3), racks(3), NON_EQUAL, owned, step, 0)
        verify(a, 1, racks(3), racks(3), NON_EQUAL, step, rf1, 4)
        # With every rack matching, the result is the rack-unaware one.
        final = ["t1-2, t1-3, t1-4, t2-4, t2-5", "t2-0, t2-1, t2-2, t2-3, t2-6",
                 "t1-0, t1-1, t1-5, t3-0, t3-1"]
        step = ["t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"]
        for prefer in (False, True):
            a.prefer_rack_aware = prefer
            verify(a, 3, racks(3), racks(3), NON_EQUAL, owned, step, 0)
            verify(a, 3, racks(3), racks(3), NON_EQUAL, step, final, 0)


def test_java_hash_order() -> None:
    """java.lang.String.hashCode and HashMap iteration order (values computed by the JVM's rules)."""
    assert string_hash("") == 0
    assert string_hash("a") == 97
    assert string_hash("ab") == 97 * 31 + 98
    assert string_hash("hello") == 99162322
    assert string_hash("polygenelubricants") == 2**31  # Integer.MIN_VALUE, as unsigned
    assert tp_hash(TP("t", 0)) == (31 * 31 + 116) & 0xFFFFFFFF
    # Keys landing in the same bucket keep insertion order; otherwise bucket order decides.
    assert hashmap_order(["b", "a"], string_hash) == ["a", "b"]
    assert hashmap_order(["q", "a"], string_hash) == ["q", "a"]  # 113 & 15 == 97 & 15 == 1


# -- AbstractStickyAssignorTest cases run for each RackConfig (initializeRacks: replication factor 3,
# three broker racks unless NO_BROKER_RACK, member racks unless NO_CONSUMER_RACK, preferRackAwareLogic).

RACK_CONFIGS = ["NO_BROKER_RACK", "NO_CONSUMER_RACK", "BROKER_AND_CONSUMER_RACK"]
GENERATION = 1


class JavaCase:
    """The state of one Java test: topics made with partitionInfos(topic, n), members with
    buildSubscriptionV2Above(topics, owned, generation, index)."""

    def __init__(self, assignor, rack_config: str, rf: int = 3, broker_racks: int | None = None,
                 consumer_rack: bool | None = None) -> None:
        self.assignor = assignor
        self.rf = rf
        self.n_racks = (0 if rack_config == "NO_BROKER_RACK" else 3) if broker_racks is None else broker_racks
        self.consumer_rack = rack_config != "NO_CONSUMER_RACK" if consumer_rack is None else consumer_rack
        assignor.prefer_rack_aware = broker_racks is None
        self.ppt: dict[str, list[int]] = {}
        self.prack: dict[str, dict[int, frozenset[str]]] = {}
        self.members: dict[str, GroupMember] = {}
        self._next = 0

    def topic(self, name: str, n: int) -> None:
        brokers = self.n_racks * self.rf if self.n_racks > 0 else self.rf
        rack_of = [ALL_RACKS[i % self.n_racks] if self.n_racks > 0 else None for i in range(brokers)]
        self.ppt[name] = list(range(n))
        self.prack[name] = {p: frozenset(r for j in range(self.rf)
                                         if (r := rack_of[(p + j + self._next) % brokers]) is not None)
                            for p in range(n)}
        self._next += 1

    def member(self, name: str, topics: list[str], owned: list[TP], index: int) -> None:
        n = self.n_racks if self.n_racks > 0 else len(ALL_RACKS)
        rack = ALL_RACKS[index % n] if self.consumer_rack and index >= 0 else None
        self.members[name] = GroupMember(name, Subscription(
            list(topics), owned_partitions=list(owned), generation_id=GENERATION, rack_id=rack))
        self._index = getattr(self, "_index", {})
        self._index[name] = index

    def assign(self) -> dict[str, list[TP]]:
        out = self.assignor.assign(self.ppt, self.members, partition_racks=self.prack)
        return {m: sorted(a.partitions) for m, a in out.items()}

    def settle(self, assignment: dict[str, list[TP]]) -> dict[str, list[TP]]:
        """The cooperative test's verifyValidityAndBalance: rebalance again, owning the assignment,
        while partitions are being revoked."""
        for _ in range(4):
            revoked = any(set(m.subscription.owned_partitions) - set(assignment[mid])
                          for mid, m in self.members.items())
            if not revoked or not isinstance(self.assignor, CooperativeStickyAssignor):
                break
            for mid, m in list(self.members.items()):
                self.member(mid, m.subscription.topics, assignment[mid], self._index[mid])
            assignment = self.assign()
        return assignment


def tps(*names: str) -> list[TP]:
    return sorted(parse(", ".join(names))) if names else []


@pytest.mark.parametrize("cls", ASSIGNORS)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_consumer_owning_min_quota_expected_max_quota(cls, rack_config) -> None:
    c = JavaCase(cls(), rack_config)
    c.topic("topic1", 2)
    c.topic("topic2", 3)
    both = ["topic1", "topic2"]
    c.member("consumer1", both, tps("topic1-0", "topic2-1"), 0)
    c.member("consumer2", both, tps("topic1-1", "topic2-2"), 1)
    got = c.assign()
    assert got == {"consumer1": tps("topic1-0", "topic2-1", "topic2-0"),
                   "consumer2": tps("topic1-1", "topic2-2")}


@pytest.mark.parametrize("cls", ASSIGNORS)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_max_quota_consumer_more_than_num_expected_max_capacity_members(cls, rack_config) -> None:
    c = JavaCase(cls(), rack_config)
    c.topic("topic1", 2)
    c.topic("topic2", 2)
    both = ["topic1", "topic2"]
    c.member("consumer1", both, tps("topic1-0", "topic2-0"), 0)
    c.member("consumer2", both, tps("topic1-1", "topic2-1"), 1)
    c.member("consumer3", both, [], 2)
    first = c.assign()
    if cls is CooperativeStickyAssignor:  # topic2-0 changes owner: withheld for one round
        assert first["consumer3"] == [] and TP("topic2", 0) not in first["consumer1"]
    got = c.settle(first)
    assert got == {"consumer1": tps("topic1-0"), "consumer2": tps("topic1-1", "topic2-1"),
                   "consumer3": tps("topic2-0")}


@pytest.mark.parametrize("cls", ASSIGNORS)
@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
def test_all_consumers_are_under_min_quota(cls, rack_config) -> None:
    c = JavaCase(cls(), rack_config)
    c.topic("topic1", 2)
    c.topic("topic2", 3)
    both = ["topic1", "topic2"]
    c.member("consumer1", both, tps("topic1-0"), 0)
    c.member("consumer2", both, tps("topic1-1"), 1)
    c.member("consumer3", both, [], 2)
    got = c.settle(c.assign())
    assert got == {"consumer1": tps("topic1-0", "topic2-1"), "consumer2": tps("topic1-1", "topic2-2"),
                   "consumer3": tps("topic2-0")}


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
@pytest.mark.parametrize(("partitions", "expected1"), [(3, ["topic-1"]), (4, ["topic-1", "topic-3"])])
def test_cooperative_partition_claimed_twice_in_one_generation(rack_config, partitions, expected1) -> None:
    """CooperativeStickyAssignorTest: topic-0 claimed by two members of the same generation counts as
    owned by both, so nobody gets it until both revoked it."""
    c = JavaCase(CooperativeStickyAssignor(), rack_config)
    c.topic("topic", partitions)
    c.member("consumer1", ["topic"], tps("topic-0", "topic-1"), 0)
    c.member("consumer2", ["topic"], tps("topic-0", "topic-2"), 1)
    c.member("consumer3", ["topic"], [], 2)
    got = c.assign()
    assert got == {"consumer1": tps(*expected1), "consumer2": tps("topic-2"), "consumer3": []}


def test_cooperative_uniform_subscription_transfer_ownership() -> None:
    """CooperativeStickyAssignorTest.testUniformSubscriptionTransferOwnershipListIsRight: one replica
    per partition on racks a, b, a, b; each member owns one partition of the other rack, which moves."""
    c = JavaCase(CooperativeStickyAssignor(), "BROKER_AND_CONSUMER_RACK", rf=1, broker_racks=2,
                 consumer_rack=True)
    c.topic("topic1", 4)
    c.member("c0", ["topic1"], tps("topic1-0", "topic1-1"), 0)
    c.member("c1", ["topic1"], tps("topic1-2", "topic1-3"), 1)
    assert c.assign() == {"c0": tps("topic1-0"), "c1": tps("topic1-3")}  # 2 partitions transferring
    assert c.settle(c.assign()) == {"c0": tps("topic1-0", "topic1-2"), "c1": tps("topic1-1", "topic1-3")}


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
@pytest.mark.parametrize(("partitions", "expected1"), [(3, ["topic-1"]), (4, ["topic-1", "topic-3"])])
def test_sticky_partition_claimed_twice_in_one_generation(rack_config, partitions, expected1) -> None:
    """StickyAssignorTest: eager, so the doubly claimed topic-0 goes straight to its new owner."""
    c = JavaCase(StickyAssignor(), rack_config)
    c.topic("topic", partitions)
    c.member("consumer1", ["topic"], tps("topic-0", "topic-1"), 0)
    c.member("consumer2", ["topic"], tps("topic-0", "topic-2"), 1)
    c.member("consumer3", ["topic"], [], 2)
    got = c.assign()
    assert got == {"consumer1": tps(*expected1), "consumer2": tps("topic-2"), "consumer3": tps("topic-0")}


def valid_and_balanced(c: JavaCase, assignment: dict[str, list[TP]]) -> None:
    """Java's verifyValidityAndBalance (after the cooperative follow-up rounds) and isFullyBalanced."""
    assignment = c.settle(assignment)
    seen: set[TP] = set()
    for mid, parts in assignment.items():
        assert all(tp.topic in c.members[mid].subscription.topics for tp in parts)
        assert not seen & set(parts)
        seen |= set(parts)
    sizes = [len(v) for v in assignment.values()]
    assert max(sizes) - min(sizes) <= 1


def _remove(c: JavaCase, member: str) -> None:
    del c.members[member]


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
@pytest.mark.parametrize("all_equal", [True, False])
def test_assignment_with_multiple_generations_1(rack_config, all_equal) -> None:
    c = JavaCase(StickyAssignor(), rack_config)
    everything = ["topic", "topic2"]
    c2_topics = everything if all_equal else ["topic"]
    c.topic("topic", 6)
    c.topic("topic2", 6)
    c.member("consumer1", everything, [], 0)
    c.member("consumer2", c2_topics, [], 1)
    c.member("consumer3", everything, [], 2)
    for mid in c.members:  # subscription(): no generation
        c.members[mid].subscription.generation_id = -1
    r1 = c.assign()
    assert [len(r1[m]) for m in ("consumer1", "consumer2", "consumer3")] == [4, 4, 4]
    valid_and_balanced(c, r1)
    c.member("consumer1", everything, r1["consumer1"], 0)
    c.member("consumer2", c2_topics, r1["consumer2"], 1)
    _remove(c, "consumer3")
    r2 = c.assign()
    assert len(r2["consumer1"]) == 6 and len(r2["consumer2"]) == 6
    if all_equal:
        assert set(r1["consumer1"]) <= set(r2["consumer1"])
    assert set(r1["consumer2"]) <= set(r2["consumer2"])
    valid_and_balanced(c, r2)
    assert set(r2["consumer2"]) & set(r1["consumer3"])
    _remove(c, "consumer1")
    c.member("consumer2", c2_topics, r2["consumer2"], 1)
    c.members["consumer2"].subscription.generation_id = 2
    c.member("consumer3", everything, r1["consumer3"], 2)
    r3 = c.assign()
    assert len(r3["consumer2"]) == 6 and len(r3["consumer3"]) == 6
    assert not set(r3["consumer2"]) & set(r3["consumer3"])
    valid_and_balanced(c, r3)


@pytest.mark.parametrize("rack_config", RACK_CONFIGS)
@pytest.mark.parametrize("all_equal", [True, False])
def test_assignment_with_conflicting_previous_generations(rack_config, all_equal) -> None:
    c = JavaCase(StickyAssignor(), rack_config)
    for t in ("topic", "topic2", "topic3"):
        c.topic(t, 4)
    everything = ["topic", "topic2", "topic3"]
    c1_topics = everything if all_equal else ["topic"]
    c2_topics = everything if all_equal else ["topic", "topic2"]
    c1 = (tps("topic-0", "topic-1", "topic-2", "topic2-2", "topic2-3", "topic3-0") if all_equal
          else tps("topic-0", "topic-1", "topic-2", "topic-3"))
    c2 = tps("topic-0", "topic-1", "topic2-0", "topic2-1", "topic2-2", "topic2-3")
    c3 = tps("topic-2", "topic-3", "topic3-0", "topic3-1", "topic3-2", "topic3-3")
    c.member("consumer1", c1_topics, c1, 0)
    c.members["consumer1"].subscription.generation_id = 1
    c.member("consumer2", c2_topics, c2, 1)
    c.members["consumer2"].subscription.generation_id = 2
    c.member("consumer3", everything, c3, 2)
    c.members["consumer3"].subscription.generation_id = 2
    got = c.assign()
    assert [len(got[m]) for m in ("consumer1", "consumer2", "consumer3")] == [4, 4, 4]
    assert set(got["consumer2"]) <= set(c2) and set(got["consumer3"]) <= set(c3)
    valid_and_balanced(c, got)

"""Rack-aware range assignment (KIP-881): cases ported from the Java client's RangeAssignorTest and
AbstractPartitionAssignorTest (inputs and expected assignments only).

Test layout as in Java's helpers: broker i is in brokerRacks[i];
partition p of the k-th topic (topics in declaration order, partitions counted across topics)
has replicas on brokers (p + j + offset) % numBrokers.
"""

from __future__ import annotations

import pytest

from aiokafka_lite.consumer.assignors import GroupMember, RangeAssignor
from aiokafka_lite.consumer.assignors.range import use_rack_aware
from aiokafka_lite.consumer.group_protocol import Subscription

ALL_RACKS = ["a", "b", "c", "d", "e", "f", "g"]


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


def run(topics, rf, broker_racks, consumer_racks, consumer_topics):
    parts, prack = layout(topics, rf, broker_racks)
    members = {f"consumer{i}": GroupMember(f"consumer{i}", Subscription(list(ts), rack_id=consumer_racks[i]))
               for i, ts in enumerate(consumer_topics)}
    out = RangeAssignor().assign(parts, members, partition_racks=prack)
    got = [", ".join(sorted(f"{tp.topic}-{tp.partition}" for tp in out[f"consumer{i}"].partitions))
           for i in range(len(consumer_topics))]
    mismatched = sum(1 for i in range(len(consumer_topics)) if consumer_racks[i] is not None
                     for tp in out[f"consumer{i}"].partitions
                     if consumer_racks[i] not in prack[tp.topic][tp.partition])
    return got, mismatched


def check(topics, rf, broker_racks, consumer_racks, consumer_topics, expected, n_mismatch):
    got, mismatched = run(topics, rf, broker_racks, consumer_racks, consumer_topics)
    assert got == expected
    if n_mismatch >= 0:
        assert mismatched == n_mismatch


def test_use_rack_aware_assignment_rule():
    # testUseRackAwareAssignment (preferRackAwareLogic=false half).
    all_r, two = {"a", "b", "c"}, {"a", "b"}
    on_all = [frozenset(all_r)] * 10
    on_subset = [frozenset({"abc"[i % 3]}) for i in range(10)]
    assert not use_rack_aware(set(), set(), on_all)
    assert not use_rack_aware(set(), all_r, on_all)
    assert not use_rack_aware(all_r, set(), [])
    assert not use_rack_aware({"d"}, all_r, on_all)
    assert not use_rack_aware(all_r, all_r, on_all)
    assert not use_rack_aware(two, all_r, on_all)
    assert not use_rack_aware({"a", "d"}, all_r, on_all)
    assert use_rack_aware(all_r, all_r, on_subset)
    assert use_rack_aware(two, all_r, on_subset)
    assert use_rack_aware({"a", "d"}, all_r, on_subset)


T5 = {"t1": 5, "t2": 5, "t3": 5}
NON_EQUAL = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]
NON_EQUAL_PLAIN = ["t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
                   "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3", "t1-4, t3-4"]


@pytest.mark.parametrize(("rf", "brokers", "consumers"), [
    (3, null_racks(3), racks(3)),
    (3, racks(3), null_racks(3)),
    (3, racks(3), racks(3)),
    (4, racks(4), racks(3)),
    (3, racks(3), ["d", "e", "f"]),
    (3, racks(3), [None, "e", "f"]),
])
def test_uniform_partitions_non_equal_subscription_not_rack_aware(rf, brokers, consumers):
    # testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription: verifyNonRackAwareAssignment.
    check(T5, rf, brokers, consumers, NON_EQUAL, NON_EQUAL_PLAIN, -1)


def test_uniform_partitions_non_equal_subscription_rack_aware():
    # Same Java test: co-partitioning before rack alignment for topics with equal subscriptions.
    check(T5, 1, racks(3), racks(3), NON_EQUAL,
          ["t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t3-4"], 9)
    check(T5, 2, racks(3), racks(3), NON_EQUAL,
          ["t1-2, t2-0, t2-1, t2-3, t3-2", "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3", "t1-1, t1-4, t3-1, t3-4"], 0)
    # One consumer on a rack with no partitions.
    check(T5, 3, racks(2), racks(3), NON_EQUAL, NON_EQUAL_PLAIN, 2)


CO = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
CO_RACKS = ["a", "b", "b", "a"]


def test_co_partitioning_separate_subscriptions():
    # testRackAwareAssignmentWithCoPartitioning, first half.
    subs = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
    plain = ["t1-0, t1-1, t1-2, t2-0, t2-1, t2-2", "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
             "t3-0, t4-0", "t3-1, t4-1"]
    check(CO, 3, racks(2), CO_RACKS, subs, plain, -1)
    check(CO, 2, racks(2), CO_RACKS, subs, plain, 0)
    check(CO, 1, racks(2), CO_RACKS, subs,
          ["t1-0, t1-2, t1-4, t2-0, t2-2, t2-4", "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5",
           "t3-1, t4-1", "t3-0, t4-0"], 0)


def test_co_partitioning_all_topics():
    # testRackAwareAssignmentWithCoPartitioning, second half.
    subs = [["t1", "t2", "t3", "t4"]] * 4
    plain = ["t1-0, t1-1, t2-0, t2-1, t3-0, t4-0", "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
             "t1-4, t2-4", "t1-5, t2-5"]
    check(CO, 3, racks(2), CO_RACKS, subs, plain, -1)
    check(CO, 2, racks(2), CO_RACKS, subs, plain, 0)
    check(CO, 1, racks(2), CO_RACKS, subs,
          ["t1-0, t1-2, t2-0, t2-2, t3-0, t4-0", "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1",
           "t1-5, t2-5", "t1-4, t2-4"], 0)
    check(CO, 1, racks(3), CO_RACKS, subs,
          ["t1-0, t1-3, t2-0, t2-3, t3-0, t4-0", "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1",
           "t1-2, t2-2", "t1-5, t2-5"], 6)


def test_no_racks_same_as_plain_range():
    parts, _ = layout(CO, 1, racks(2))
    subs = [["t1", "t2", "t3", "t4"]] * 3
    members = {f"c{i}": GroupMember(f"c{i}", Subscription(list(s))) for i, s in enumerate(subs)}
    a = RangeAssignor().assign(parts, members)
    b = RangeAssignor().assign(parts, members, partition_racks=layout(CO, 1, racks(2))[1])
    assert {m: x.partitions for m, x in a.items()} == {m: x.partitions for m, x in b.items()}

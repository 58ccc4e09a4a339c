"""Assignors: same answers as the peers' (aiokafka = Java's algorithm) for range and roundrobin; the sticky
ones valid, balanced and sticky; cooperative-sticky never revokes a partition that stays."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from aiokafka.cluster import ClusterMetadata
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyAssignorUserDataV1
from aiokafka.coordinator.protocol import ConsumerProtocolMemberMetadata
from hypothesis import given, settings
from hypothesis import strategies as st

from aiokafka_lite.consumer.assignors import (
    CooperativeStickyAssignor,
    GroupMember,
    RangeAssignor,
    RebalanceProtocol,
    RoundRobinAssignor,
    StickyAssignor,
    make_assignors,
    rebalance_protocol,
)
from aiokafka_lite.consumer.assignors.sticky import decode_sticky_user_data, member_owned
from aiokafka_lite.consumer.group_protocol import Subscription
from aiokafka_lite.errors import ConfigError
from aiokafka_lite.structs import TopicPartition as TP


def _members(subs: dict[str, list[str]], owned: dict[str, list[TP]] | None = None,
             generation: int = 1) -> dict[str, GroupMember]:
    owned = owned or {}
    return {m: GroupMember(m, Subscription(sorted(t), owned_partitions=owned.get(m, []),
                                           generation_id=generation if m in owned else -1))
            for m, t in subs.items()}


def _aiokafka_cluster(parts: dict[str, int]) -> ClusterMetadata:
    c = ClusterMetadata()
    c._partitions = {t: {p: None for p in range(n)} for t, n in parts.items()}
    return c


group_strategy = st.integers(1, 6).flatmap(lambda n_members: st.tuples(
    st.dictionaries(st.sampled_from(["a", "b", "c", "dd"]), st.integers(0, 9), min_size=1),
    st.lists(st.sets(st.sampled_from(["a", "b", "c", "dd", "missing"]), min_size=1),
             min_size=n_members, max_size=n_members),
))


@settings(max_examples=150, deadline=None)
@given(group_strategy)
@pytest.mark.parametrize(("ours", "theirs"), [(RangeAssignor, RangePartitionAssignor),
                                               (RoundRobinAssignor, RoundRobinPartitionAssignor)])
def test_range_and_roundrobin_match_aiokafka(ours, theirs, group) -> None:
    parts, subs_list = group
    subs = {f"member-{i:02d}": sorted(s) for i, s in enumerate(subs_list)}
    got = ours().assign({t: range(n) for t, n in parts.items()}, _members(subs))
    ref = theirs.assign(_aiokafka_cluster(parts),
                        {m: ConsumerProtocolMemberMetadata(0, t, b"") for m, t in subs.items()})
    for m in subs:
        assert sorted(got[m].partitions) == sorted(TP(*tp) for tp in ref[m].partitions()), m


def test_range_known_answer_and_static_members_first() -> None:
    members = _members({"b": ["t"], "a": ["t"], "c": ["t"]})
    members["c"].group_instance_id = "static-0"
    got = RangeAssignor().assign({"t": range(7)}, members)
    assert [tp.partition for tp in got["c"].partitions] == [0, 1, 2]
    assert [tp.partition for tp in got["a"].partitions] == [3, 4]
    assert [tp.partition for tp in got["b"].partitions] == [5, 6]


def _check_valid_and_balanced(parts: dict[str, int], subs: dict[str, list[str]],
                              assignment: dict[str, list[TP]]) -> None:
    seen = Counter(tp for ps in assignment.values() for tp in ps)
    expected = {TP(t, p) for m in subs for t in subs[m] for p in range(parts.get(t, 0))}
    assert set(seen) == expected
    assert all(c == 1 for c in seen.values())
    for m, ps in assignment.items():
        assert all(tp.topic in subs[m] for tp in ps)
    # Balanced: nobody could take a partition from someone holding 2+ more.
    for a, pa in assignment.items():
        for b, pb in assignment.items():
            if len(pa) >= len(pb) + 2:
                assert not any(tp.topic in subs[b] for tp in pa), (a, b, assignment)


@settings(max_examples=150, deadline=None)
@given(group_strategy, st.randoms(use_true_random=False))
def test_sticky_valid_balanced_and_sticky_over_membership_changes(group, rnd: random.Random) -> None:
    parts, subs_list = group
    subs = {f"m{i}": sorted(s) for i, s in enumerate(subs_list)}
    pp = {t: range(n) for t, n in parts.items()}
    first = {m: a.partitions for m, a in StickyAssignor().assign(pp, _members(subs)).items()}
    _check_valid_and_balanced(parts, subs, first)
    # One member leaves: with identical subscriptions, everyone keeps everything they had.
    gone = rnd.choice(sorted(subs))
    rest = {m: t for m, t in subs.items() if m != gone}
    if not rest:
        return
    second = {m: a.partitions for m, a in
              StickyAssignor().assign(pp, _members(rest, {m: first[m] for m in rest}, 1)).items()}
    _check_valid_and_balanced(parts, rest, second)
    if len({tuple(t) for t in subs.values()}) == 1:
        for m in rest:
            assert set(first[m]) <= set(second[m])


def test_sticky_keeps_partitions_when_member_joins() -> None:
    pp = {"t": range(6)}
    owned = {"a": [TP("t", p) for p in range(3)], "b": [TP("t", p) for p in range(3, 6)]}
    got = StickyAssignor().assign(pp, _members({"a": ["t"], "b": ["t"], "c": ["t"]}, owned))
    assert len(got["c"].partitions) == 2
    assert set(got["a"].partitions) <= set(owned["a"]) and len(got["a"].partitions) == 2
    assert set(got["b"].partitions) <= set(owned["b"]) and len(got["b"].partitions) == 2


def test_generation_resolves_conflicting_claims() -> None:
    # b claims t-0 from an older generation; a's newer claim wins. Equal generations void the claim.
    members = {
        "a": GroupMember("a", Subscription(["t"], owned_partitions=[TP("t", 0)], generation_id=5)),
        "b": GroupMember("b", Subscription(["t"], owned_partitions=[TP("t", 0), TP("t", 1)],
                                           generation_id=4)),
    }
    got = CooperativeStickyAssignor().assign({"t": range(2)}, members)
    assert got["a"].partitions == [TP("t", 0)]
    assert got["b"].partitions == [TP("t", 1)]


def _simulate_cooperative(pp: dict[str, range], subs: dict[str, list[str]],
                          owned: dict[str, list[TP]], gen: int) -> tuple[dict[str, list[TP]], int]:
    """Run KIP-429 rounds as the members would; assert nothing kept is ever revoked."""
    assignor = CooperativeStickyAssignor()
    for _ in range(3):
        result = assignor.assign(pp, _members(subs, {m: owned.get(m, []) for m in subs}, gen))
        gen += 1
        revoked_any = False
        for m in subs:
            new = set(result[m].partitions)
            old = set(owned.get(m, []))
            # Nothing is handed to a member while someone else still owns it.
            for other, theirs in owned.items():
                if other != m and other in subs:
                    assert not (new & set(theirs)), "partition given while still owned elsewhere"
            if old - new:
                revoked_any = True
            owned[m] = sorted(new)
        if not revoked_any:
            return owned, gen
    raise AssertionError("cooperative rebalance did not converge in 2 rounds")


def test_cooperative_two_phase_on_join_and_leave() -> None:
    pp = {"t": range(6)}
    owned, gen = _simulate_cooperative(pp, {"a": ["t"]}, {}, 1)
    assert len(owned["a"]) == 6
    before = dict(owned)
    owned, gen = _simulate_cooperative(pp, {"a": ["t"], "b": ["t"], "c": ["t"]}, owned, gen)
    assert sorted(len(v) for v in owned.values()) == [2, 2, 2]
    assert set(owned["a"]) <= set(before["a"])
    kept = {m: set(v) for m, v in owned.items()}
    owned.pop("c")
    owned, gen = _simulate_cooperative(pp, {"a": ["t"], "b": ["t"]}, owned, gen)
    assert sorted(len(v) for v in owned.values()) == [3, 3]
    for m in ("a", "b"):
        assert kept[m] <= set(owned[m])


def test_cooperative_revokes_topic_no_longer_subscribed() -> None:
    owned = {"a": [TP("x", 0), TP("y", 0)], "b": [TP("y", 1)]}
    got = CooperativeStickyAssignor().assign({"x": range(1), "y": range(2)},
                                             _members({"a": ["y"], "b": ["x", "y"]}, owned))
    # x-0 moves from a (unsubscribed) to b: first round withholds it so a can revoke it.
    assert TP("x", 0) not in got["b"].partitions and TP("x", 0) not in got["a"].partitions


def test_user_data_formats() -> None:
    # Our sticky user data is what aiokafka (Java's layout) reads, and the reverse.
    s = StickyAssignor()
    s.on_assignment(type("A", (), {"partitions": [TP("t", 1), TP("u", 0)]})(), 7)  # type: ignore[arg-type]
    data = s.subscription_user_data(["t", "u"])
    assert data is not None
    ref = StickyAssignorUserDataV1.decode(data)
    assert ref.generation == 7
    assert sorted((t, p) for t, ps in ref.previous_assignment for p in ps) == [("t", 1), ("u", 0)]
    theirs = StickyAssignorUserDataV1([("t", [3, 4])], 9).encode()
    assert decode_sticky_user_data(theirs) == ([TP("t", 3), TP("t", 4)], 9)
    # member_owned: eager members carry the previous assignment only in the user data.
    m = GroupMember("x", Subscription(["t"], user_data=theirs, version=0))
    assert member_owned(m) == ([TP("t", 3), TP("t", 4)], 9)
    # Java's cooperative layout: 4 bytes of generation.
    c = CooperativeStickyAssignor()
    c.generation = 3
    m = GroupMember("x", Subscription(["t"], user_data=c.subscription_user_data(["t"]),
                                      owned_partitions=[TP("t", 0)], version=1))
    assert member_owned(m) == ([TP("t", 0)], 3)
    # Garbage user data is ignored, not fatal.
    m = GroupMember("x", Subscription(["t"], user_data=b"\xff" * 9, version=0))
    assert member_owned(m) == ([], -1)


def test_strategy_names_and_protocol() -> None:
    names = [a.name for a in make_assignors(("range", "cooperative-sticky"))]
    assert names == ["range", "cooperative-sticky"]
    assert rebalance_protocol(make_assignors(["range", "cooperative-sticky"])) is RebalanceProtocol.EAGER
    assert rebalance_protocol(make_assignors(["cooperative-sticky"])) is RebalanceProtocol.COOPERATIVE
    with pytest.raises(ConfigError, match="unknown assignor"):
        make_assignors(["fair"])
    with pytest.raises(ConfigError, match="repeats"):
        make_assignors(["range", "range"])

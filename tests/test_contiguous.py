import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import paged


def snapshot(a: paged.ContiguousAllocator):
    return a.extents(), a.holes(), a.total_free, a.largest_hole


@pytest.mark.parametrize(
    "policy, final_len, expected",
    [
        ("max", 100, 2048),
        ("pow2", 100, 128),
        ("pow2", 1500, 2048),
        ("pow2", 128, 128),
        ("oracle", 100, 100),
    ],
)
def test_reservation_policies(policy, final_len, expected):
    a = paged.ContiguousAllocator(10_000, policy=policy)
    assert a.reservation(final_len) == expected


def test_pow2_is_capped_at_max_seq_len():
    a = paged.ContiguousAllocator(10_000, policy="pow2", max_seq_len=1000)
    assert a.reservation(600) == 1000


def test_usage_splits_every_slot_into_four_categories():
    a = paged.ContiguousAllocator(100, policy="max", max_seq_len=40)
    a.allocate("r", num_tokens=10, final_len=25)
    assert a.usage() == {
        "token_states": 10,
        "reservation": 15,
        "internal_fragmentation": 15,
        "external_fragmentation": 60,
    }
    a.append("r", 5)
    assert a.usage()["token_states"] == 15 and a.usage()["reservation"] == 10


def test_enough_free_in_total_but_no_hole_big_enough():
    a = paged.ContiguousAllocator(30, policy="oracle")
    for name in "abc":
        a.allocate(name, num_tokens=1, final_len=10)
    a.free("a")
    a.free("c")
    assert a.holes() == [(0, 10), (20, 10)]
    assert a.total_free == 20 and a.largest_hole == 10
    assert a.why_not(15) == "no_hole" and a.why_not(25) == "no_space" and a.why_not(10) is None
    before = snapshot(a)
    with pytest.raises(paged.NoContiguousSpace, match="no_hole"):
        a.allocate("big", num_tokens=1, final_len=15)
    assert snapshot(a) == before


def test_first_fit_takes_the_lowest_hole_that_fits():
    a = paged.ContiguousAllocator(100, policy="oracle")
    for name, n in zip("abcd", (10, 20, 10, 20), strict=True):
        a.allocate(name, 0, n)
    a.free("a")
    a.free("c")
    assert a.allocate("e", 0, 8).start == 0
    assert a.allocate("f", 0, 10).start == 30


def test_buddy_rounds_up_splits_and_merges():
    a = paged.ContiguousAllocator(64, policy="oracle", placement="buddy", max_seq_len=64)
    x = a.allocate("x", 1, 5)  # an 8-slot buddy block
    assert (x.start, x.size) == (0, 8)
    assert a.usage()["internal_fragmentation"] == 3
    y = a.allocate("y", 1, 16)
    assert (y.start, y.size) == (16, 16)
    assert a.largest_hole == 32 and a.total_free == 40
    a.free("x")
    a.free("y")
    assert a.largest_hole == 64  # everything merged back into one block


def test_buddy_arena_that_is_not_a_power_of_two():
    a = paged.ContiguousAllocator(100, policy="max", placement="buddy", max_seq_len=32)
    starts = [a.allocate(i, 1, 32).start for i in range(3)]
    assert starts == [0, 32, 64] and a.why_not(32) == "no_space" and a.total_free == 4
    a.free(1)
    assert a.why_not(32) is None and a.why_not(1) is None


@pytest.mark.parametrize(
    "kwargs, text",
    [
        (dict(capacity_tokens=0), "capacity_tokens"),
        (dict(capacity_tokens=10, policy="min"), "'min'"),
        (dict(capacity_tokens=10, placement="best"), "'best'"),
        (dict(capacity_tokens=10, max_seq_len=0), "max_seq_len"),
    ],
)
def test_constructor_errors_name_the_value(kwargs, text):
    with pytest.raises(ValueError, match=text):
        paged.ContiguousAllocator(**kwargs)


def test_errors_change_nothing():
    a = paged.ContiguousAllocator(45, policy="oracle", max_seq_len=40)
    a.allocate("r", 3, 10)
    before = snapshot(a)
    for exc, call, text in [
        (ValueError, lambda: a.allocate("r", 1, 5), "'r'"),
        (ValueError, lambda: a.allocate("s", 1, 41), "41"),
        (ValueError, lambda: a.allocate("s", 6, 5), "6"),
        (ValueError, lambda: a.append("r", 8), "final length 10"),
        (ValueError, lambda: a.append("r", -1), "-1"),
        (KeyError, lambda: a.free("zz"), "'zz'"),
        (paged.NoContiguousSpace, lambda: a.allocate("s", 1, 40), "no_space"),
    ]:
        with pytest.raises(exc, match=text):
            call()
        assert snapshot(a) == before


class ContiguousMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.a = None
        self.live: dict[int, tuple[int, int]] = {}
        self.next_id = 0

    @precondition(lambda self: self.a is None)
    @rule(
        policy=st.sampled_from(["max", "pow2", "oracle"]),
        placement=st.sampled_from(["first_fit", "buddy"]),
        capacity=st.integers(32, 200),
    )
    def make(self, policy, placement, capacity):
        self.a = paged.ContiguousAllocator(capacity, policy, placement, max_seq_len=32)

    @precondition(lambda self: self.a is not None)
    @rule(final=st.integers(1, 32), data=st.data())
    def allocate(self, final, data):
        n = data.draw(st.integers(0, final))
        before = snapshot(self.a)
        if self.a.can_allocate(final):
            e = self.a.allocate(self.next_id, n, final)
            assert e.size >= final
            self.live[self.next_id] = (n, final)
            self.next_id += 1
        else:
            with pytest.raises(paged.NoContiguousSpace):
                self.a.allocate(self.next_id, n, final)
            assert snapshot(self.a) == before

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def append_or_free(self, data):
        rid = data.draw(st.sampled_from(sorted(self.live)))
        n, final = self.live[rid]
        if n < final and data.draw(st.booleans()):
            self.a.append(rid)
            self.live[rid] = (n + 1, final)
        else:
            self.a.free(rid)
            del self.live[rid]

    @invariant()
    def extents_and_holes_tile_the_arena(self):
        if self.a is None:
            return
        pieces = [(e.start, e.size) for e in self.a.extents()] + self.a.holes()
        cursor = 0
        for start, size in sorted(pieces):
            assert start == cursor and size > 0
            cursor += size
        assert cursor == self.a.capacity_tokens
        assert sum(self.a.usage().values()) == self.a.capacity_tokens
        assert self.a.total_free == sum(size for _, size in self.a.holes())
        assert self.a.largest_hole <= max((s for _, s in self.a.holes()), default=0)

    def teardown(self):
        if self.a is not None:
            for rid in list(self.live):
                self.a.free(rid)
            assert self.a.total_free == self.a.capacity_tokens
            if self.a.placement == "buddy":  # all buddies merged again
                assert self.a.largest_hole == min(
                    32, 1 << (self.a.capacity_tokens.bit_length() - 1)
                )


TestContiguousMachine = ContiguousMachine.TestCase
TestContiguousMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)


def test_buddy_free_blocks_that_are_not_buddies_do_not_merge():
    a = paged.ContiguousAllocator(32, policy="oracle", placement="buddy", max_seq_len=32)
    for i in range(4):
        a.allocate(i, 1, 8)
    a.free(0)
    a.free(2)
    assert a.total_free == 16 and a.largest_hole == 8 and a.why_not(9) == "no_hole"

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import paged


def snapshot(a: paged.ContiguousAllocator):
    return a.extents(), a.holes(), a.total_free, a.largest_hole


@pytest.mark.parametrize(
    "policy, prompt_len, output_len, expected",
    [
        ("max", 40, 25, 2048),  # §6.1: "always reserves ... up to ... 2048 tokens"
        ("pow2", 40, 25, 40 + 32),  # §6.1: "if the true output length is 25, it reserves 32"
        ("pow2", 100, 64, 100 + 64),  # a power of two already
        ("pow2", 100, 65, 100 + 128),
        ("pow2", 300, 1500, 2048),  # 300 + 2048, capped at max_seq_len
        ("oracle", 40, 25, 65),
    ],
)
def test_reservation_policies_follow_the_paper(policy, prompt_len, output_len, expected):
    a = paged.ContiguousAllocator(10_000, policy=policy)
    assert a.reservation(prompt_len=prompt_len, output_len=output_len) == expected


def test_pow2_is_capped_at_max_seq_len():
    a = paged.ContiguousAllocator(10_000, policy="pow2", max_seq_len=1000)
    assert a.reservation(prompt_len=100, output_len=600) == 1000  # not 100 + 1024


@pytest.mark.parametrize("placement", ["first_fit", "buddy"])
def test_lone_request_prompt_40_output_25(placement):
    """Pow2 reserves 40 + 32 = 72 for 65 tokens: 7 internal; Oracle none; buddy rounds to 128."""
    for policy, internal in (("pow2", 7), ("oracle", 0)):
        a = paged.ContiguousAllocator(1024, policy=policy, placement=placement)
        e = a.allocate("r", prompt_len=40, output_len=25)
        u = a.usage()
        assert u["internal_fragmentation"] == internal
        assert (u["token_states"], u["reservation"]) == (40, 25)
        assert sum(u.values()) == 1024
        round_up = 128 - e.reserved if placement == "buddy" else 0
        assert a.rounded_up == round_up and e.size == e.reserved + round_up
        assert u["external_fragmentation"] == 1024 - e.reserved  # round-up + free


def test_old_positional_calls_fail_loudly():
    a = paged.ContiguousAllocator(100, policy="pow2")
    with pytest.raises(TypeError):
        a.allocate("r", 10, 25)  # was (num_tokens, final_len): must not mean (prompt, output)
    with pytest.raises(TypeError):
        a.reservation(25)
    with pytest.raises(TypeError):
        a.why_not(25)
    assert a.extents() == []


def test_usage_splits_every_slot_into_four_categories():
    a = paged.ContiguousAllocator(100, policy="max", max_seq_len=40)
    a.allocate("r", prompt_len=10, output_len=15)
    assert a.usage() == {
        "token_states": 10,
        "reservation": 15,
        "internal_fragmentation": 15,
        "external_fragmentation": 60,
    }
    a.append("r", 5)
    assert a.usage()["token_states"] == 15 and a.usage()["reservation"] == 10


def test_admission_writes_the_prompt_unless_told_otherwise():
    a = paged.ContiguousAllocator(100, policy="oracle")
    assert a.allocate("p", prompt_len=7, output_len=3).num_tokens == 7
    assert a.allocate("q", prompt_len=7, output_len=3, num_tokens=9).num_tokens == 9


def test_enough_free_in_total_but_no_hole_big_enough():
    a = paged.ContiguousAllocator(30, policy="oracle")
    for name in "abc":
        a.allocate(name, prompt_len=1, output_len=9)
    a.free("a")
    a.free("c")
    assert a.holes() == [(0, 10), (20, 10)]
    assert a.total_free == 20 and a.largest_hole == 10
    assert a.why_not(prompt_len=5, output_len=10) == "no_hole"
    assert a.why_not(prompt_len=5, output_len=20) == "no_space"
    assert a.why_not(prompt_len=5, output_len=5) is None
    assert a.unusable_free(15) == 20 and a.unusable_free(10) == 0 and a.unusable_free(11) == 20
    before = snapshot(a)
    with pytest.raises(paged.NoContiguousSpace, match="no_hole"):
        a.allocate("big", prompt_len=1, output_len=14)
    assert snapshot(a) == before


def test_first_fit_takes_the_lowest_hole_that_fits():
    a = paged.ContiguousAllocator(100, policy="oracle")
    for name, n in zip("abcd", (10, 20, 10, 20), strict=True):
        a.allocate(name, prompt_len=1, output_len=n - 1)
    a.free("a")
    a.free("c")
    assert a.allocate("e", prompt_len=1, output_len=7).start == 0
    assert a.allocate("f", prompt_len=1, output_len=9).start == 30


def test_buddy_rounds_up_splits_and_merges():
    a = paged.ContiguousAllocator(64, policy="oracle", placement="buddy", max_seq_len=64)
    x = a.allocate("x", prompt_len=1, output_len=4)  # an 8-slot buddy block for 5 tokens
    assert (x.start, x.size, x.reserved) == (0, 8, 5)
    # §3.1 files the allocator's round-up under external fragmentation, not internal.
    assert a.usage()["internal_fragmentation"] == 0 and a.rounded_up == 3
    assert a.usage()["external_fragmentation"] == 64 - 5
    y = a.allocate("y", prompt_len=1, output_len=15)
    assert (y.start, y.size) == (16, 16)
    assert a.largest_hole == 32 and a.total_free == 40
    assert a.unusable_free(32) == 8 and a.unusable_free(33) == 40
    a.free("x")
    a.free("y")
    assert a.largest_hole == 64  # everything merged back into one block


def test_buddy_arena_that_is_not_a_power_of_two():
    a = paged.ContiguousAllocator(100, policy="max", placement="buddy", max_seq_len=32)
    starts = [a.allocate(i, prompt_len=1, output_len=1).start for i in range(3)]
    assert starts == [0, 32, 64] and a.total_free == 4
    assert a.why_not(prompt_len=1, output_len=1) == "no_space"
    a.free(1)
    assert a.why_not(prompt_len=1, output_len=1) is None


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
    a.allocate("r", prompt_len=3, output_len=7)
    before = snapshot(a)
    for exc, call, text in [
        (ValueError, lambda: a.allocate("r", prompt_len=1, output_len=4), "'r'"),
        (ValueError, lambda: a.allocate("s", prompt_len=1, output_len=40), "41"),
        (ValueError, lambda: a.allocate("s", prompt_len=0, output_len=4), "prompt_len"),
        (ValueError, lambda: a.allocate("s", prompt_len=2, output_len=0), "output_len"),
        (ValueError, lambda: a.allocate("s", prompt_len=2, output_len=3, num_tokens=6), "6"),
        (ValueError, lambda: a.append("r", 8), "final length 10"),
        (ValueError, lambda: a.append("r", -1), "-1"),
        (KeyError, lambda: a.free("zz"), "'zz'"),
        (paged.NoContiguousSpace, lambda: a.allocate("s", prompt_len=1, output_len=39), "no_space"),
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
    @rule(prompt=st.integers(1, 16), output=st.integers(1, 16), data=st.data())
    def allocate(self, prompt, output, data):
        final = prompt + output
        n = data.draw(st.integers(0, final))
        lengths = dict(prompt_len=prompt, output_len=output)
        before = snapshot(self.a)
        if self.a.can_allocate(**lengths):
            e = self.a.allocate(self.next_id, **lengths, num_tokens=n)
            assert e.size >= e.reserved >= final
            if self.a.policy == "oracle":
                assert e.reserved == final
            self.live[self.next_id] = (n, final)
            self.next_id += 1
        else:
            with pytest.raises(paged.NoContiguousSpace):
                self.a.allocate(self.next_id, **lengths, num_tokens=n)
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
        usage = self.a.usage()
        assert sum(usage.values()) == self.a.capacity_tokens
        assert usage["external_fragmentation"] == self.a.total_free + self.a.rounded_up
        if self.a.policy == "oracle":
            assert usage["internal_fragmentation"] == 0
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
        a.allocate(i, prompt_len=1, output_len=7)
    a.free(0)
    a.free(2)
    assert a.total_free == 16 and a.largest_hole == 8
    assert a.why_not(prompt_len=1, output_len=8) == "no_hole"

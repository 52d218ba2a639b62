import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import paged
from paged.errors import require_int


def snapshot(a: paged.PagedAllocator):
    return (
        {s: (a.block_table(s), a.num_tokens(s)) for s in a.seq_ids},
        list(a.free_block_ids),
        [a.ref_count(b) for b in range(a.num_blocks)],
    )


def test_allocate_takes_ceil_blocks_and_empty_is_allowed():
    a = paged.PagedAllocator(num_blocks=8, block_size=4)
    assert a.allocate("x", 9) == [0, 1, 2]
    assert a.allocate("empty", 0) == []
    assert a.num_free_blocks == 5 and a.num_tokens("x") == 9


def test_append_takes_a_block_only_when_last_is_full():
    a = paged.PagedAllocator(num_blocks=4, block_size=4)
    a.allocate("s", 3)
    assert a.append("s") == [] and a.block_table("s") == [0]  # 4th slot of block 0
    a.append("s")  # 5th token: new block
    assert a.block_table("s") == [0, 1] and a.num_free_blocks == 2
    a.append("s", 3)
    assert a.block_table("s") == [0, 1]
    a.allocate("e", 0)
    a.append("e")
    assert a.block_table("e") == [2]


def test_slot_mapping_follows_block_table():
    a = paged.PagedAllocator(num_blocks=6, block_size=4, seed=1)
    a.allocate("s", 10)
    table = a.block_table("s")
    assert a.slot("s", 0) == table[0] * 4
    assert a.slot("s", 9) == table[2] * 4 + 1
    assert a.slot_mapping("s") == [table[p // 4] * 4 + p % 4 for p in range(10)]
    with pytest.raises(ValueError, match="10"):
        a.slot("s", 10)
    with pytest.raises(ValueError, match="-1"):
        a.slot("s", -1)


def test_seeded_free_list_scatters_physical_blocks():
    a = paged.PagedAllocator(num_blocks=32, block_size=2, seed=0)
    table = a.allocate("s", 16)
    assert sorted(table) != table and len(set(table)) == 8


def test_fork_shares_and_copy_on_write_on_partial_last_block():
    a = paged.PagedAllocator(num_blocks=8, block_size=4)
    a.allocate("parent", 6)  # blocks [0, 1], block 1 half full
    a.fork("parent", "child")
    assert a.ref_count(0) == a.ref_count(1) == 2
    copies = a.append("child")
    assert copies == [(1, 2)]
    assert a.block_table("child") == [0, 2] and a.block_table("parent") == [0, 1]
    assert a.ref_count(1) == 1 and a.ref_count(2) == 1 and a.ref_count(0) == 2
    assert a.append("parent") == []  # parent now owns block 1 alone: writes in place


def test_full_shared_blocks_stay_shared():
    a = paged.PagedAllocator(num_blocks=8, block_size=4)
    a.allocate("p", 8)
    a.fork("p", "c")
    assert a.append("c") == []
    assert a.block_table("c")[:2] == a.block_table("p") and a.ref_count(0) == 2


def test_free_returns_blocks_only_when_unshared():
    a = paged.PagedAllocator(num_blocks=4, block_size=2)
    a.allocate("p", 3)
    a.fork("p", "c")
    a.free("p")
    assert a.num_free_blocks == 2 and a.ref_count(0) == 1
    a.free("c")
    assert a.num_free_blocks == 4


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(num_blocks=0, block_size=4),
        dict(num_blocks=4, block_size=0),
        dict(num_blocks=2.0, block_size=4),
    ],
)
def test_constructor_rejects_bad_sizes(kwargs):
    with pytest.raises(ValueError, match="must be an int >= 1"):
        paged.PagedAllocator(**kwargs)


def test_errors_name_the_value_and_change_nothing():
    a = paged.PagedAllocator(num_blocks=3, block_size=2)
    a.allocate("p", 3)
    a.fork("p", "c")
    before = snapshot(a)
    cases = [
        (paged.OutOfBlocks, lambda: a.allocate("q", 5), "needs 3"),
        (paged.OutOfBlocks, lambda: a.append("c", 5), "needs 3"),
        (ValueError, lambda: a.allocate("p", 1), "'p'"),
        (ValueError, lambda: a.allocate("q", -2), "-2"),
        (ValueError, lambda: a.append("p", -1), "-1"),
        (KeyError, lambda: a.append("zz"), "'zz'"),
        (KeyError, lambda: a.free("zz"), "'zz'"),
        (KeyError, lambda: a.fork("zz", "y"), "'zz'"),
        (ValueError, lambda: a.fork("p", "c"), "'c'"),
        (ValueError, lambda: a.ref_count(3), "3"),
    ]
    for exc, call, text in cases:
        with pytest.raises(exc, match=text):
            call()
        assert snapshot(a) == before
    assert issubclass(paged.OutOfBlocks, paged.AllocationError)


class PagedMachine(RuleBasedStateMachine):
    """Random allocate/append/fork/free against a plain-Python model of what must hold."""

    def __init__(self):
        super().__init__()
        self.a = paged.PagedAllocator(num_blocks=12, block_size=3)
        self.tokens: dict[int, list[int]] = {}  # seq -> the token values it holds
        self.next_id = 0
        self.contents: dict[int, list] = {}  # physical block -> slot values (to check CoW)

    def _write(self, seq, start, values):
        table = self.a.block_table(seq)
        for offset, v in enumerate(values):
            p = start + offset
            block = self.contents.setdefault(table[p // 3], [None] * 3)
            block[p % 3] = v

    def _read(self, seq):
        table = self.a.block_table(seq)
        return [self.contents[table[p // 3]][p % 3] for p in range(self.a.num_tokens(seq))]

    @rule(n=st.integers(0, 10))
    def allocate(self, n):
        seq, before = self.next_id, snapshot(self.a)
        if self.a.can_allocate(n):
            self.a.allocate(seq, n)
            values = [(seq, i) for i in range(n)]
            self._write(seq, 0, values)
            self.tokens[seq] = values
            self.next_id += 1
        else:
            with pytest.raises(paged.OutOfBlocks):
                self.a.allocate(seq, n)
            assert snapshot(self.a) == before

    @precondition(lambda self: self.tokens)
    @rule(data=st.data(), k=st.integers(0, 7))
    def append(self, data, k):
        seq = data.draw(st.sampled_from(sorted(self.tokens)))
        before = snapshot(self.a)
        if self.a.can_append(seq, k):
            n = self.a.num_tokens(seq)
            for src, dst in self.a.append(seq, k):
                assert self.a.ref_count(src) >= 1 and self.a.ref_count(dst) == 1
                self.contents[dst] = list(self.contents[src])  # the caller's copy
            values = [(seq, "a", n + i) for i in range(k)]
            self._write(seq, n, values)
            self.tokens[seq] += values
        else:
            with pytest.raises(paged.OutOfBlocks):
                self.a.append(seq, k)
            assert snapshot(self.a) == before

    @precondition(lambda self: self.tokens)
    @rule(data=st.data())
    def fork(self, data):
        parent = data.draw(st.sampled_from(sorted(self.tokens)))
        self.a.fork(parent, self.next_id)
        self.tokens[self.next_id] = list(self.tokens[parent])
        self.next_id += 1

    @precondition(lambda self: self.tokens)
    @rule(data=st.data())
    def free(self, data):
        seq = data.draw(st.sampled_from(sorted(self.tokens)))
        self.a.free(seq)
        del self.tokens[seq]

    @invariant()
    def every_sequence_reads_back_its_own_tokens(self):
        for seq, values in self.tokens.items():
            assert self._read(seq) == values  # copy-on-write never leaks a write to a sharer

    @invariant()
    def conservation_and_ref_counts(self):
        held = {}
        for seq in self.tokens:
            table = self.a.block_table(seq)
            assert len(table) == paged.num_blocks_for(self.a.num_tokens(seq), 3)
            for b in table:
                held[b] = held.get(b, 0) + 1
        for b in range(self.a.num_blocks):
            assert self.a.ref_count(b) == held.get(b, 0)
        free = list(self.a.free_block_ids)
        assert len(free) == len(set(free)) and not set(free) & set(held)
        assert len(free) + len(held) == self.a.num_blocks

    def teardown(self):
        for seq in list(self.tokens):
            self.a.free(seq)
        assert self.a.num_free_blocks == self.a.num_blocks  # no leak


TestPagedMachine = PagedMachine.TestCase
TestPagedMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)


@given(st.integers(1, 64), st.integers(0, 200))
def test_blocks_needed_is_ceil(block_size, n):
    a = paged.PagedAllocator(num_blocks=1000, block_size=block_size)
    assert len(a.allocate("s", n)) == -(-n // block_size)


def test_block_table_is_a_copy():
    a = paged.PagedAllocator(num_blocks=4, block_size=2)
    a.allocate("s", 2)
    t = a.block_table("s")
    t.append(99)
    assert a.block_table("s") == [0]


def test_require_int_is_the_one_argument_check():
    assert require_int("n", np.int64(3), at_least=1) == 3
    assert type(require_int("n", np.int64(3), at_least=1)) is int
    for bad in (True, 2.0, "3", 0):
        with pytest.raises(ValueError, match=rf"n must be an int >= 1, got {bad!r}"):
            require_int("n", bad, at_least=1)

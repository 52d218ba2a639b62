"""Chapter 12's exercises (`free_blocks`, `take_blocks`, `computed_blocks`): what the spec-wide
test cannot show.

test_exercise_specs.py runs every spec (model answer, stub, each named slip with its hint, seeds).
Here: right answers written another valid way pass on many seeds (a deque, a dict walk, tuples
back, a ValueError of a subclass); wrong answers no slip names fail with a symptom; the last-token
cap applied only when every hash hits fails on a teaching case, whatever the seed; a changed
argument and a library call are named; the truth is the allocator's own behaviour, hand-checked
on the teaching cases; the verdicts speak Korean in the Korean edition.
"""

from __future__ import annotations

import itertools
from collections import deque

import pytest

from paged import exercises as ex
from paged.block_pool import CachingAllocator, FreeBlockQueue
from paged.exercises import cache_hits, free_queue
from paged.exercises.slips import SLIPS

pytestmark = pytest.mark.usefixtures("english")  # conftest.py


# ---- right answers, written other ways ---------------------------------------------------------
def free_with_deque(free_queue, block_table, ref_counts, hashed):
    """A deque, blocks put at either end one at a time (the front ones in table order, so that
    the last one put there is the table's last block); the deque itself comes back."""
    q = deque(free_queue)
    letting_go = [b for b in block_table if ref_counts[b] - 1 == 0]
    for b in letting_go:
        if b not in hashed:
            q.appendleft(b)
    for b in reversed(letting_go):
        if b in hashed:
            q.append(b)
    return q


def take_with_islice(free_queue, n, block_hash):
    """A tuple of tuples back, and a ValueError of a subclass."""

    class NotEnoughBlocks(ValueError):
        pass

    if n > len(free_queue):
        raise NotEnoughBlocks(n)
    taken = tuple(itertools.islice(free_queue, n))
    return taken, tuple(block_hash[b] for b in taken if b in block_hash)


def computed_by_dict_walk(hashes, num_tokens, block_size, cached):
    """A while loop over positions, `get` with a sentinel (block 0 is a block), a tuple back."""
    limit, i, out = min(len(hashes), (num_tokens - 1) // block_size), 0, []
    while i < limit and cached.get(hashes[i], -1) != -1:
        out.append(cached[hashes[i]])
        i += 1
    return tuple(out)


def computed_by_takewhile(hashes, num_tokens, block_size, cached):
    full_before_last = hashes[: max(0, num_tokens - 1) // block_size]
    return [cached[h] for h in itertools.takewhile(cached.__contains__, full_before_last)]


@pytest.mark.parametrize(
    ("check", "fn"),
    [
        (ex.check_free_blocks, free_with_deque),
        (ex.check_take_blocks, take_with_islice),
        (ex.check_computed_blocks, computed_by_dict_walk),
        (ex.check_computed_blocks, computed_by_takewhile),
    ],
    ids=["free-deque", "take-islice", "lookup-dict-walk", "lookup-takewhile"],
)
def test_right_answers_written_another_way_pass_on_every_seed(verdict, check, fn):
    for seed in range(1, 9):
        ok, out = verdict(check, fn, seed=seed)
        assert ok is True, out


# ---- wrong answers that no slip names ----------------------------------------------------------
def free_sorted(free_queue, block_table, ref_counts, hashed):
    return sorted(free_queue + [b for b in block_table if ref_counts[b] == 1])


def free_drops_the_queue(free_queue, block_table, ref_counts, hashed):
    return [b for b in reversed(block_table) if ref_counts[b] == 1]


def free_decrements(free_queue, block_table, ref_counts, hashed):
    front, tail = [], []
    for b in reversed(block_table):
        ref_counts[b] -= 1  # the caller's counts
        if ref_counts[b] == 0:
            (tail if b in hashed else front).append(b)
    return front + free_queue + tail


def take_sorted_evictions(free_queue, n, block_hash):
    if n > len(free_queue):
        raise ValueError(n)
    return free_queue[:n], sorted(block_hash[b] for b in free_queue[:n] if b in block_hash)


def take_a_set(free_queue, n, block_hash):
    if n > len(free_queue):
        raise ValueError(n)
    return set(free_queue[:n]), [block_hash[b] for b in free_queue[:n] if b in block_hash]


def take_pops(free_queue, n, block_hash):
    if n > len(free_queue):
        raise ValueError(n)
    taken = [free_queue.pop(0) for _ in range(n)]  # out of the caller's queue
    return taken, [block_hash[b] for b in taken if b in block_hash]


def lookup_truthy(hashes, num_tokens, block_size, cached):
    hits = []
    for h in hashes[: (num_tokens - 1) // block_size]:
        if not cached.get(h):  # block 0 reads as a miss
            break
        hits.append(cached[h])
    return hits


def lookup_at_least_one(hashes, num_tokens, block_size, cached):
    """The cap never below one block: a one-block prompt takes its only block."""
    hits = []
    for h in hashes[: max(1, (num_tokens - 1) // block_size)]:
        if h not in cached:
            break
        hits.append(cached[h])
    return hits


def lookup_library(hashes, num_tokens, block_size, cached):
    a = CachingAllocator(1, block_size)
    a.cached_blocks = {h: {b: None} for h, b in cached.items()}
    return a.find_cached(hashes, num_tokens)


def free_library(free_queue, block_table, ref_counts, hashed):
    a = CachingAllocator(max([*free_queue, *block_table, 0]) + 1, 1)
    return a.free(block_table)


SYMPTOMS = [
    (ex.check_free_blocks, free_sorted, "the right items, in another order"),
    (ex.check_free_blocks, free_drops_the_queue, "missing: [2, 3, 4, 5]; not expected: []."),
    (
        ex.check_take_blocks,
        take_sorted_evictions,
        "the blocks taken; in the evicted hashes, the right items, in another order",
    ),
    (
        ex.check_take_blocks,
        take_a_set,
        "the evicted hashes; in the blocks taken, your answers have another type",
    ),
    (ex.check_computed_blocks, lookup_truthy, "the start of the expected one, and stops too early"),
    (
        ex.check_computed_blocks,
        lookup_at_least_one,
        "the request takes no cached block (the expected answer is []), and your function returned",
    ),
]


@pytest.mark.parametrize(
    ("check", "fn", "words"), SYMPTOMS, ids=lambda x: getattr(x, "__name__", "")
)
def test_a_wrong_answer_no_slip_names_gets_a_symptom(verdict, check, fn, words):
    ok, out = verdict(check, fn, seed=1)
    assert ok is False
    assert out.count("hint:") == 1 and words in out, out


def test_block_zero_is_a_block_like_any_other(verdict):
    """A lookup that reads block 0 as a miss fails on a teaching case, not by luck of a draw."""
    ok, out = verdict(ex.check_computed_blocks, lookup_truthy, seed=1)
    assert ok is False and "seed=" not in out
    assert (
        "block_size=1, cached={101: 7, 102: 2, 103: 5, 104: 0, 105: 3} you returned [7, 2, 5], "
        "expected [7, 2, 5, 0]." in out
    )


def capped_when_all_hit(hashes, num_tokens, block_size, cached):
    """The last-token cap only when every hash hits, over the prompt's full blocks."""
    hits = []
    for h in hashes[: num_tokens // block_size]:
        if h not in cached:
            break
        hits.append(cached[h])
    if all(h in cached for h in hashes):
        hits = hits[: (num_tokens - 1) // block_size]
    return hits


def capped_when_all_hit_else_uncut(hashes, num_tokens, block_size, cached):
    """The same, but the run of hits is cut nowhere unless every hash hits."""
    hits = []
    for h in hashes:
        if h not in cached:
            break
        hits.append(cached[h])
    return hits[: (num_tokens - 1) // block_size] if len(hits) == len(hashes) else hits


@pytest.mark.parametrize(
    ("fn", "slip"),
    [
        (capped_when_all_hit, "cache_hit.cap_floor"),
        (capped_when_all_hit_else_uncut, "cache_hit.no_cap"),
    ],
    ids=["over-full-blocks", "uncut"],
)
def test_the_cap_applied_only_when_every_hash_hits_fails_on_a_teaching_case(verdict, fn, slip):
    """Accepted on 57 and 42 seeds of 100 before the teaching cases held a partial hit that
    reaches the last token's block."""
    for seed in range(1, 6):
        ok, out = verdict(ex.check_computed_blocks, fn, seed=seed)
        assert ok is False and "seed=" not in out, out
        assert f"hint: {SLIPS[slip][1]}" in out, out


WRONG = [  # the engine's classes of wrong answer, seen from these exercises
    (ex.check_free_blocks, free_decrements, "changed its argument `ref_counts`"),
    (ex.check_take_blocks, take_pops, "changed its argument `free_queue`"),
    (ex.check_computed_blocks, lookup_library, "calls paged.block_pool.CachingAllocator"),
    (ex.check_free_blocks, free_library, "calls paged.block_pool.CachingAllocator"),
]


@pytest.mark.parametrize(("check", "fn", "words"), WRONG, ids=lambda x: getattr(x, "__name__", ""))
def test_a_changed_argument_and_a_library_call_are_named(verdict, check, fn, words):
    ok, out = verdict(check, fn, seed=1)
    assert ok is False and words in out, out


# ---- the truth is the allocator ----------------------------------------------------------------
def test_the_teaching_cases_follow_vllms_free_queue():
    """Hand-checked against vLLM V1's rules (`BlockPool.free_blocks`, `get_new_blocks`)."""
    frees = free_queue.FREE_BLOCKS.cases()
    # cached blocks 0, 1, then uncached 2, 3, 4 (decode blocks whose hashes are not known yet)
    assert frees[3] == (
        ([5, 6, 7, 8, 9], [0, 1, 2, 3, 4], {b: 1 for b in range(5)}, {0, 1}),
        [4, 3, 2, 5, 6, 7, 8, 9, 1, 0],  # uncached to the front, cached to the tail, each reversed
    )
    assert frees[4] == (
        ([5, 6, 7, 8, 9], [0, 1, 2, 4], {0: 2, 1: 2, 2: 2, 3: 1, 4: 1}, {0, 1, 2}),
        [4, 5, 6, 7, 8, 9],  # the shared blocks stay with the other request
    )
    # the chapter's example: uncached blocks go to the front together, the last block first
    a = CachingAllocator(10, 1)
    a.free_block_ids = FreeBlockQueue([2, 3, 4, 9])
    assert a.allocate("A", 3) == [2, 3, 4]
    a.free("A")
    assert list(a.free_block_ids) == [4, 3, 2, 9]
    takes = free_queue.TAKE_BLOCKS.cases()
    queue = [3, 4, 5, 6, 7, 2, 1, 0]
    assert takes[2] == ((queue, 6, {0: 101, 1: 102, 2: 103}), (queue[:6], [103]))
    assert str(takes[4][1]) == "ValueError: n=9 > len(free_queue)=8"


def test_the_lookup_stops_at_a_miss_and_before_the_last_token():
    find = cache_hits.COMPUTED_BLOCKS.answer
    cached = {101: 7, 102: 2, 103: 5}
    assert find([101, 102, 103], 13, 4, cached) == [7, 2, 5]
    assert find([101, 102, 103], 12, 4, cached) == [7, 2]  # the last token's block is computed
    assert find([101, 109, 103], 13, 4, cached) == [7]  # a hit after a miss does not count
    assert find([101], 1, 1, cached) == []


def test_the_verdict_and_the_hint_speak_korean(verdict, monkeypatch):
    monkeypatch.setenv("PAGED_LANG", "ko")
    ok, out = verdict(ex.check_computed_blocks, lookup_truthy, seed=1)
    assert ok is False
    assert out.startswith("computed_blocks: 아직 아닙니다.") and "힌트: " in out, out

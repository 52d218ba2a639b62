"""Checker for chapter 2: first-fit placement in a contiguous arena.

The ground truth is `ContiguousAllocator` itself: each case is an arena built with its public
methods (allocate, then free) so that its holes are the case's, and the expected answer is where
the allocator, with first-fit placement, puts a request of that size.
"""

from __future__ import annotations

from ..contiguous import ContiguousAllocator
from ..errors import NoContiguousSpace
from .engine.contract import optional_integer
from .engine.core import Spec, checker, draws
from .slips import of

__all__ = ["check_first_fit"]


# (holes, size): holes are (start, length) in address order; every arena ends with 3 used slots.
_FIT_CASES = (
    ([], 4),  # a full arena
    ([(0, 16)], 16),  # an empty arena, an exact fit at address 0
    ([(2, 3), (8, 6), (20, 10)], 6),  # the first hole that fits is an exact fit
    ([(0, 4), (10, 12), (30, 6), (40, 9)], 6),  # first, best and last fit all differ
    ([(0, 2), (4, 2), (10, 9)], 9),  # only the last hole fits
    ([(3, 5), (12, 7)], 8),  # 12 slots free, no hole of 8: external fragmentation
    ([(0, 3), (6, 3)], 2),
)


def _first_fit_truth(holes, size):
    """Build an arena whose holes are `holes` and place a request of `size` slots in it."""
    end = holes[-1][0] + holes[-1][1] if holes else 5
    capacity = end + 3
    arena = ContiguousAllocator(capacity, "oracle", "first_fit", max_seq_len=max(capacity, size))
    cursor = 0
    for start, length in [*holes, (capacity, 0)]:
        for key, lo, hi in (("used", cursor, start), ("hole", start, start + length)):
            if hi > lo:  # oracle reserves prompt + output exactly: one extent per piece
                arena.allocate((key, lo), prompt_len=1, output_len=hi - lo - 1)
        cursor = start + length
    for start, _ in holes:
        arena.free(("hole", start))
    assert arena.holes() == list(holes), (arena.holes(), holes)
    try:
        return arena.allocate("new", prompt_len=1, output_len=size - 1).start
    except NoContiguousSpace:
        return None


def _random_holes(rng):
    """Holes in address order: none, one, many; sizes equal to a hole, above all, the least.

    Every piece of the arena (hole or used) holds at least 2 slots: the allocator builds it
    from requests of a 1-token prompt and at least 1 output token.
    """
    holes, cursor = [], rng.choice((0, 0, 2, 3))
    for _ in range(rng.choice((0, 1, 2, 3, 5, 8))):
        length = rng.choice((2, 3, rng.randint(2, 12), rng.randint(2, 40)))
        holes.append((cursor, length))
        cursor += length + rng.randint(2, 6)
    lengths = [n for _, n in holes] or [2]
    size = rng.choice(
        (2, rng.choice(lengths), max(lengths), max(lengths) + 1, rng.randint(2, max(lengths) + 2))
    )
    return holes, size


FIRST_FIT = Spec(
    "first_fit",
    params=("holes", "size"),
    cases=_FIT_CASES,
    answer=_first_fit_truth,
    draw=draws(_random_holes, _first_fit_truth),
    slips=of("first_fit"),
    none_ok=True,  # no hole fits: None, which == tells from every address, 0 included
    forbid=["paged.contiguous", "paged.pool"],
    contract=lambda got, args: optional_integer(got),
    doc="""fn(holes, size) -> start of the first hole with length >= size, or None (chapter 2).

    `holes` lists the free ranges as (start, length), sorted by start. The truth: a
    `ContiguousAllocator` (first-fit placement) whose holes are those, asked to place `size`.
    """,
)
check_first_fit = checker(FIRST_FIT)

"""Checker for chapter 2: first-fit placement in a contiguous arena.

The ground truth is `ContiguousAllocator` itself: each case is an arena built with its public
methods (allocate, then free) so that its holes are the case's, and the expected answer is where
the allocator, with first-fit placement, puts a request of that size.
"""

from __future__ import annotations

from ..contiguous import ContiguousAllocator
from ..errors import NoContiguousSpace
from ..text import msg
from .contract import optional_integer
from .core import Spec, checker, draws

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


def _best_fit(holes, size):
    fits = [(length, start) for start, length in holes if length >= size]
    return min(fits)[1] if fits else None


def _last_fit(holes, size):
    fits = [start for start, length in holes if length >= size]
    return fits[-1] if fits else None


def _strictly_larger(holes, size):
    return next((start for start, length in holes if length > size), None)


def _index(holes, size):
    return next((i for i, (_, length) in enumerate(holes) if length >= size), None)


def _pair(holes, size):
    return next(((s, n) for s, n in holes if n >= size), None)


def _stops_early(holes, size):
    for start, length in holes:
        return start if length >= size else None
    return None


def _length_as_end(holes, size):
    return next((start for start, end in holes if end - start >= size), None)


def _zero_for_none(holes, size):
    return next((start for start, length in holes if length >= size), 0)


_FIT_MISTAKES = (
    (
        _best_fit,
        msg(
            "you picked the smallest hole that is large enough (best fit); first fit takes the "
            "first one in address order.",
            "충분히 큰 구멍 중 가장 작은 것을 골랐습니다(best fit). 최초 적합(first fit)은 주소 순서로 처음 "
            "나오는 구멍을 씁니다.",
        ),
    ),
    (
        _last_fit,
        msg(
            "you returned the last hole that is large enough; first fit stops at the first one.",
            "충분히 큰 구멍 중 마지막 것을 반환했습니다. 최초 적합은 처음 맞는 구멍에서 멈춥니다.",
        ),
    ),
    (
        _strictly_larger,
        msg(
            "you skipped a hole exactly as long as the request: an exact fit fits too.",
            "요청과 길이가 똑같은 구멍을 건너뛰었습니다. 딱 맞는 구멍도 들어갈 수 있는 구멍입니다.",
        ),
    ),
    (
        _index,
        msg(
            "you returned the hole's position in the list; return the address where it starts.",
            "구멍의 리스트 안 위치(인덱스)를 반환했습니다. 구멍이 시작하는 주소를 반환하세요.",
        ),
    ),
    (
        _pair,
        msg(
            "you returned the whole (start, length) pair; return only its start.",
            "(시작, 길이) 쌍 전체를 반환했습니다. 시작 주소만 반환하세요.",
        ),
    ),
    (
        _stops_early,
        msg(
            "you gave up at the first hole that was too small; a later hole may still fit.",
            "처음 만난 구멍이 작다고 거기서 멈췄습니다. 뒤에 있는 구멍이 맞을 수도 있습니다.",
        ),
    ),
    (
        _zero_for_none,
        msg(
            "when no hole fits, return None: 0 is a real address (the start of the arena).",
            "맞는 구멍이 없으면 None을 반환하세요. 0은 실제 주소(영역의 시작)입니다.",
        ),
    ),
    (
        _length_as_end,
        msg(
            "holes that start far from address 0 were passed over although they are long enough: "
            "your test reads a hole's second number as the address where it ends, and it is the "
            "hole's length.",
            "주소 0에서 멀리 떨어져 시작하는 구멍을, 길이가 충분한데도 지나쳤습니다. 구멍의 두 번째 "
            "수를 끝나는 주소로 읽었는데, 그 수는 구멍의 길이입니다.",
        ),
    ),
    (
        lambda holes, size: None,
        msg(
            "you returned None although a hole fits: did you forget to `return` its start?",
            "맞는 구멍이 있는데 None을 반환했습니다. 시작 주소를 `return`하는 것을 잊지 않았나요?",
        ),
    ),
)


def _same_answer(got, want) -> bool:
    """Equal, where None (no hole fits) differs from every address, 0 included."""
    return (got is None) == (want is None) and (got is None or got == want)


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
    slips=_FIT_MISTAKES,
    same=_same_answer,
    none_ok=True,
    forbid=["paged.contiguous", "paged.pool"],
    contract=lambda got, args: optional_integer(got),
    doc="""fn(holes, size) -> start of the first hole with length >= size, or None (chapter 2).

    `holes` lists the free ranges as (start, length), sorted by start. The truth: a
    `ContiguousAllocator` (first-fit placement) whose holes are those, asked to place `size`.
    """,
)
check_first_fit = checker(FIRST_FIT)

"""Checkers for chapter 3: the slot mapping, wasted slots, and appending one token.

The ground truth is `PagedAllocator` itself: each case is a pool built with its public methods
(allocate, fork, append, free), and the expected answer is what the allocator does next. The
teaching cases hold block sizes that are not powers of two (3, 5, 6) at block boundaries, so an
answer by shifts and masks, right only for powers of two, fails on every call, and the symptom
`only_other_sizes` says what its wrong cases share.
"""

from __future__ import annotations

from ..paging import PagedAllocator, num_blocks_for
from ..text import msg
from .engine.contract import integer
from .engine.core import NUM_RANDOM, Spec, checker, draws
from .slips import of

# While the learner's function runs, the allocator's own answers raise (guard.forbidden).
FORBID = ["paged.paging", "paged.pool", "paged.model.cache"]  # slots, blocks, appends


def block_size_for(rng) -> int:
    """Block sizes biased to the edges: 1, small, a power of two, large."""
    return rng.choice((1, 1, 2, 3, 4, 16, 32, 256))


def random_state(rng):
    """(num_blocks, block_size, seed, ops): the sequence "s" and a few others, some freed.

    Biased to block boundaries (a length on, just below and above a multiple of the block
    size, 0 tokens) and to the last free block (a pool with exactly one left, or none).
    """
    bs = block_size_for(rng)
    k = rng.randint(0, 4)
    n = max(0, k * bs + rng.choice((-1, 0, 0, 1, rng.randint(0, bs))))
    ops, held = [], num_blocks_for(n, bs)
    for i in range(rng.randint(0, 3)):
        m = rng.randint(0, 3 * bs)
        ops.append(("allocate", f"x{i}", m))
        held += num_blocks_for(m, bs)
    ops.insert(rng.randint(0, len(ops)), ("allocate", "s", n))
    frees = [op[1] for op in ops if op[1] != "s" and rng.random() < 0.5]
    ops += [("free", x) for x in frees]
    num_blocks = held + rng.choice((0, 1, 1, 2, 5))  # the last free block, or none
    return max(1, num_blocks), bs, rng.randint(0, 10**6), ops


__all__ = ["check_append_slot", "check_slot", "check_wasted_slots"]

POWER_OF_TWO_RIGHT = msg(
    "every case you got wrong has a block size that is not a power of two (3, 5, 6 ...); with "
    "block sizes 1, 2, 4, 16 ... your answers are right.",
    "틀린 사례는 모두 블록 크기가 2의 거듭제곱이 아닙니다(3, 5, 6 …). 블록 크기가 1, 2, 4, 16 … "
    "일 때는 답이 맞습니다.",
)


def only_other_sizes(i: int) -> tuple:
    """A `Spec.symptoms` entry: every wrong case's block size (argument i) is not a power of two."""

    def holds(triples) -> bool:
        return all(args[i] & (args[i] - 1) for _, _, args in triples)

    return ((holds, POWER_OF_TWO_RIGHT),)


def replay(num_blocks: int, block_size: int, seed: int, ops) -> PagedAllocator:
    """A PagedAllocator after `ops`, each (method, *args): ("allocate", "s", 5), ("free", "s")."""
    a = PagedAllocator(num_blocks, block_size, seed=seed)
    for op, *args in ops:
        getattr(a, op)(*args)
    return a


def free_list(a: PagedAllocator) -> list[int]:
    """The learner's view of the free list: `free.pop()` takes the block the allocator takes."""
    return list(reversed(a.free_block_ids))


def _slot_pairs(rng):
    pairs = []
    for _ in range(NUM_RANDOM // 4):
        a = replay(*random_state(rng))
        n, bs = a.num_tokens("s"), a.block_size
        for p in {0, n - 1, rng.randint(0, max(0, n - 1)), min(bs, n - 1)} if n else ():
            pairs.append(((a.block_table("s"), bs, p), a.slot("s", p)))
    return pairs


def _slot_cases():
    pairs = []
    for num_blocks, block_size, seed, num_tokens, positions in (
        (40, 4, 7, 37, (0, 3, 4, 17, 36)),
        (12, 1, 3, 2, (1,)),
        (6, 16, 5, 16, (15,)),
        (10, 3, 2, 14, (2, 3, 5, 13)),  # block sizes that are not powers of two, at boundaries
        (8, 5, 4, 21, (4, 5, 20)),
        (6, 6, 1, 13, (5, 6, 12)),
    ):
        a = replay(num_blocks, block_size, seed, [("allocate", "s", num_tokens)])
        pairs += [((a.block_table("s"), block_size, p), a.slot("s", p)) for p in positions]
    return pairs


SLOT = Spec(
    "slot",
    params=("block_table", "block_size", "position"),
    cases=_slot_cases,
    draw=_slot_pairs,
    slips=of("address"),
    symptoms=only_other_sizes(1),
    forbid=FORBID,
    contract=lambda got, args: integer(got),
    doc="""fn(block_table, block_size, position) -> flat slot index of that token (chapter 3).""",
)
check_slot = checker(SLOT)


def _wasted(num_tokens, block_size):  # the allocator's blocks for that many tokens
    a = PagedAllocator(num_blocks=num_tokens // block_size + 1, block_size=block_size)
    a.allocate("s", num_tokens)
    return a.num_used_blocks * block_size - num_tokens


def _wasted_case(rng):
    bs = block_size_for(rng)
    return max(0, rng.randint(0, 5) * bs + rng.choice((-1, 0, 1, rng.randint(0, bs)))), bs


WASTED_SLOTS = Spec(
    "wasted_slots",
    params=("num_tokens", "block_size"),
    cases=[
        *((0, 16), (1, 16), (15, 16), (16, 16), (17, 16), (100, 1), (33, 32)),
        *((3, 3), (4, 3), (5, 3), (10, 5), (11, 5), (14, 5), (6, 6), (7, 6), (11, 6)),
    ],
    answer=_wasted,
    draw=draws(_wasted_case, _wasted),
    slips=of("wasted"),
    symptoms=only_other_sizes(1),
    forbid=FORBID,
    contract=lambda got, args: integer(got),
    doc="""fn(num_tokens, block_size) -> empty slots in the sequence's last block (chapter 3).""",
)
check_wasted_slots = checker(WASTED_SLOTS)


# (num_blocks, block_size, seed, ops): the sequence "s" gets one more token.
_APPEND_STATES = (
    (6, 4, 2, [("allocate", "s", 0)]),  # an empty table
    (8, 4, 1, [("allocate", "s", 8)]),  # the last block is exactly full
    (8, 4, 4, [("allocate", "s", 9)]),  # room in the last block
    (5, 1, 6, [("allocate", "s", 3)]),  # block size 1: every token takes a block
    (3, 4, 0, [("allocate", "s", 8)]),  # the last free block
    (2, 4, 0, [("allocate", "s", 7)]),  # no free block, none needed
    (12, 4, 3, [("allocate", "x", 5), ("allocate", "s", 12), ("free", "x")]),  # scattered ids
    (4, 16, 8, [("allocate", "s", 31)]),  # the token fills the last slot of its block
    # block sizes that are not powers of two: full, one slot left, room, full again
    (6, 3, 2, [("allocate", "s", 6)]),
    (6, 3, 5, [("allocate", "s", 5)]),
    (5, 5, 1, [("allocate", "s", 7)]),
    (4, 6, 3, [("allocate", "s", 12)]),
)


def _append_pair(num_blocks, block_size, seed, ops):
    """(case, answer): the answer is what PagedAllocator.append does to the state."""
    a = replay(num_blocks, block_size, seed, ops)
    n = a.num_tokens("s")
    case = (a.block_table("s"), n, block_size, free_list(a))
    a.append("s", 1)
    return case, (a.slot("s", n), a.block_table("s"), free_list(a))


def _random_appends(rng):
    pairs = []
    for _ in range(NUM_RANDOM):
        state = random_state(rng)
        a = replay(*state)
        if a.blocks_needed_to_append("s") <= a.num_free_blocks:
            pairs.append(_append_pair(*state))
    return pairs


# what an append leaves behind, named once (write_slot's parts too)
TABLE_AND_FREE = (msg("the table", "테이블"), msg("the free list", "빈 블록 큐"))


def observe_append(fn, args):
    """Call fn(table, num_tokens, block_size, free); compare (returned, table, free) afterwards."""
    table, _, _, free = args
    raw = fn(*args)
    return raw, (raw, list(table), list(free))


def show_append(value) -> str:
    if not (isinstance(value, tuple) and len(value) == 3):
        return repr(value)
    slot, table, free = value
    return f"{slot!r} (table {table}, free {free})"


APPEND_SLOT = Spec(
    "append_slot",
    params=("table", "num_tokens", "block_size", "free"),
    cases=lambda: [_append_pair(*state) for state in _APPEND_STATES],
    draw=_random_appends,
    slips=of("append"),
    symptoms=only_other_sizes(2),
    observe=observe_append,
    show=show_append,
    parts=(msg("the slot", "슬롯"), *TABLE_AND_FREE),
    mutable=("table", "free"),
    forbid=FORBID,
    contract=lambda got, args: integer(got),
    doc="""fn(table, num_tokens, block_size, free) -> slot of one more token (chapter 3).

    Checks the returned slot and what fn did to `table` and `free`: a block is taken with
    `free.pop()` and appended to `table` only when the last block is full or there is none.
    The truth: `PagedAllocator.append` on the same state.
    """,
)
check_append_slot = checker(APPEND_SLOT)

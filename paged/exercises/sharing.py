"""Checkers for chapter 8: blocks shared by forked sequences, and copy-on-write.

The ground truth is `PagedAllocator` itself: each case is a pool built by allocating, forking,
appending and freeing, and the answer is what `append` (with its copy-on-write) does next.
"""

from __future__ import annotations

from ..experiments import blocks_held_by_samples
from ..paging import PagedAllocator
from ..text import msg
from ..workloads import Request
from .blocks import FORBID, TABLE_AND_FREE, block_size_for, free_list, replay
from .engine.contract import each, integer, optional_integer
from .engine.core import NUM_RANDOM, Spec, checker, draws
from .slips import of

__all__ = ["check_blocks_after_fork", "check_write_slot"]


def _blocks_after_fork(prompt_len, num_samples, block_size):  # the allocator, one token each
    request = Request(0, prompt_len=prompt_len, output_len=1)
    return blocks_held_by_samples([request], num_samples, block_size=block_size)


def _fork_case(rng):
    bs = block_size_for(rng)
    p = max(1, rng.randint(0, 4) * bs + rng.choice((-1, 0, 1, rng.randint(0, bs))))
    return p, rng.choice((1, 2, 3, rng.randint(1, 9))), bs


BLOCKS_AFTER_FORK = Spec(
    "blocks_after_fork",
    params=("prompt_len", "num_samples", "block_size"),
    cases=[(10, 3, 4), (8, 3, 4), (1, 4, 16), (33, 2, 16), (32, 5, 16), (7, 1, 8), (5, 3, 1)],
    answer=_blocks_after_fork,
    draw=draws(_fork_case, _blocks_after_fork),
    slips=of("fork"),
    forbid=(
        *FORBID,
        ("paged.experiments.blocks_held_by_samples", blocks_held_by_samples),
        ("PagedAllocator.fork", PagedAllocator.fork),
        "paged.experiments.sharing",
        "paged.model.shared_prompt",
    ),
    contract=lambda got, args: integer(got),
    doc="""fn(prompt_len, num_samples, block_size) -> blocks in use once every sample wrote 1 token.

    The prompt is prefilled, forked into num_samples samples and dropped; then each sample
    writes its first token (copy-on-write where it shares a partly filled block).
    """,
)
check_blocks_after_fork = checker(BLOCKS_AFTER_FORK)


# (num_blocks, block_size, seed, ops, seq): `seq` writes one more token.
_WRITE_STATES = (
    (8, 4, 1, [("allocate", "A", 6), ("fork", "A", "B")], "B"),  # shared, partly filled: copy
    (8, 4, 2, [("allocate", "A", 8), ("fork", "A", "B")], "B"),  # shared but full: new block
    (8, 4, 3, [("allocate", "A", 5)], "A"),  # private, room left: write in place
    (8, 4, 4, [("allocate", "A", 4), ("allocate", "C", 3)], "A"),  # private and full
    (8, 4, 5, [("allocate", "A", 6), ("fork", "A", "B"), ("append", "B", 1)], "A"),  # B copied
    (9, 4, 6, [("allocate", "A", 3), ("fork", "A", "B"), ("fork", "A", "C")], "C"),  # 3 holders
    (4, 4, 7, [("allocate", "A", 0)], "A"),  # an empty table
    (8, 1, 8, [("allocate", "A", 3), ("fork", "A", "B")], "B"),  # block size 1: never a copy
    (3, 4, 9, [("allocate", "A", 6), ("fork", "A", "B")], "B"),  # the copy takes the last block
    (2, 4, 10, [("allocate", "A", 5)], "A"),  # no free block, none needed
    (3, 2, 11, [("allocate", "A", 3), ("allocate", "B", 2)], "A"),  # the same, another holder
)


def _refs(a) -> dict[int, int]:
    return {b: a.ref_count(b) for b in range(a.num_blocks) if a.ref_count(b)}


def _write_pair(num_blocks, block_size, seed, ops, seq):
    """(case, answer): the answer is what PagedAllocator.append does to the state."""
    a = replay(num_blocks, block_size, seed, ops)
    n = a.num_tokens(seq)
    case = (a.block_table(seq), n, block_size, free_list(a), _refs(a))
    copies = a.append(seq, 1)
    ret = (a.slot(seq, n), copies[0] if copies else None)
    return case, (ret, a.block_table(seq), free_list(a), _refs(a))


def _random_writes(rng):
    """States with forks (two or three holders of a block), frees, appends after a fork."""
    pairs = []
    for _ in range(NUM_RANDOM):
        bs = block_size_for(rng)
        n = max(0, rng.randint(0, 3) * bs + rng.choice((-1, 0, 1, rng.randint(0, bs))))
        holders = ["A", *("B", "C")[: rng.randint(0, 2)]]
        ops = [("allocate", "A", n), *(("fork", "A", child) for child in holders[1:])]
        if len(holders) > 1 and rng.random() < 0.3:
            ops.append(("append", rng.choice(holders[1:]), 1))
        seq = rng.choice(holders)
        num_blocks = len(holders) * (n // bs + 3) + rng.choice((0, 1, 2))
        try:
            a = replay(num_blocks, bs, 0, ops)
        except Exception:  # not enough blocks for this draw: draw again later
            continue
        if a.blocks_needed_to_append(seq) > a.num_free_blocks:
            continue
        pairs.append(_write_pair(num_blocks, bs, rng.randint(0, 10**6), ops, seq))
    return pairs


def observe_write(fn, args):
    """Call fn(table, num_tokens, block_size, free, refs); compare all four afterwards."""
    table, _, _, free, refs = args
    raw = fn(*args)
    ret = raw
    if isinstance(raw, tuple | list) and len(raw) == 2:  # a list [slot, [old, new]] will do
        ret = (raw[0], tuple(raw[1]) if isinstance(raw[1], tuple | list) else raw[1])
    counts = {b: c for b, c in refs.items() if c} if isinstance(refs, dict) else refs
    return raw, (ret, list(table), list(free), counts)


def show_write(value) -> str:
    if not (isinstance(value, tuple) and len(value) == 4):
        return repr(value)
    ret, table, free, refs = value
    refs = dict(sorted(refs.items())) if isinstance(refs, dict) else refs
    return f"{ret!r} (table {table}, free {free}, refs {refs})"


def _write_types(raw, args):
    slot, copied = raw
    return integer(slot) or (None if copied is None else each(optional_integer)(copied))


WRITE_SLOT = Spec(
    "write_slot",
    params=("table", "num_tokens", "block_size", "free", "refs"),
    cases=lambda: [_write_pair(*state) for state in _WRITE_STATES],
    draw=_random_writes,
    slips=of("cow"),
    observe=observe_write,
    show=show_write,
    parts=(
        msg("what you returned", "반환값"),
        *TABLE_AND_FREE,
        msg("the ref counts", "참조 카운트"),
    ),
    mutable=("table", "free", "refs"),
    contract=_write_types,
    forbid=(*FORBID, ("PagedAllocator.fork", PagedAllocator.fork)),
    doc="""fn(table, num_tokens, block_size, free, refs) -> (slot, None) or (slot, (old, new)).

    Chapter 8's append with copy-on-write: checks the returned pair and what fn did to `table`,
    `free` and `refs`. The truth: `PagedAllocator.append` after allocate/fork/append/free.
    """,
)
check_write_slot = checker(WRITE_SLOT)

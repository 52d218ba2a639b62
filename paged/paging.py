"""Paged KV allocation: fixed-size physical blocks, per-sequence block tables, ref counts.

The bookkeeping half of PagedAttention (Kwon et al., SOSP 2023, §4.1-4.4). A sequence sees its
tokens as consecutive *logical* blocks; its `block_table` maps logical block i to a *physical*
block anywhere in the pool. Blocks are handed out one at a time, only when the last one is full,
so at most `block_size - 1` slots per sequence are wasted. Blocks carry a `ref_count` so that
forked sequences (parallel sampling, beam search) share them, copying on write.

Every public method checks first and acts second: after an exception nothing has changed.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .errors import OutOfBlocks, UnknownSequence, require_int

BLOCK_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # the sizes the course sweeps: Fig. 19's (§7.3)


def num_blocks_for(num_tokens: int, block_size: int) -> int:
    """ceil(num_tokens / block_size): blocks needed to hold `num_tokens` tokens."""
    num_tokens = require_int("num_tokens", num_tokens, at_least=0)
    return -(-num_tokens // require_int("block_size", block_size, at_least=1))


class PagedAllocator:
    """A pool of `num_blocks` physical blocks of `block_size` token slots each."""

    def __init__(
        self,
        num_blocks: int,
        block_size: int,
        *,
        seed: int | None = None,
        free_to_front: bool = False,
    ):
        """`seed` shuffles the free list; `free_to_front` puts freed blocks at its front, the
        sequence's last block first, as vLLM V1's free queue does (`BlockPool.free_blocks`)."""
        self.free_to_front = free_to_front
        self.num_blocks = require_int("num_blocks", num_blocks, at_least=1)
        self.block_size = require_int("block_size", block_size, at_least=1)
        ids = list(range(self.num_blocks))
        if seed is not None:  # scatter the free list so block tables look like real ones
            ids = [int(i) for i in np.random.default_rng(seed).permutation(self.num_blocks)]
        self.free_block_ids: deque[int] = deque(ids)
        self._ref_counts = [0] * self.num_blocks
        self._tables: dict[object, list[int]] = {}
        self._num_tokens: dict[object, int] = {}

    # ---- queries -------------------------------------------------------------------------
    @property
    def num_free_blocks(self) -> int:
        return len(self.free_block_ids)

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - len(self.free_block_ids)

    @property
    def seq_ids(self) -> list:
        """Sequences held, in the order they were created."""
        return list(self._tables)

    def __contains__(self, seq_id) -> bool:
        return seq_id in self._tables

    def block_table(self, seq_id) -> list[int]:
        """Physical block ids of `seq_id`, in logical order (a copy)."""
        return list(self._table(seq_id))

    def num_tokens(self, seq_id) -> int:
        self._table(seq_id)
        return self._num_tokens[seq_id]

    def ref_count(self, block_id: int) -> int:
        if not isinstance(block_id, (int, np.integer)) or not 0 <= block_id < self.num_blocks:
            raise ValueError(f"block_id must be in [0, {self.num_blocks}), got {block_id!r}")
        return self._ref_counts[block_id]

    def slot(self, seq_id, position: int) -> int:
        """Flat slot index of token `position`: the paper's slot mapping."""
        table, n = self._table(seq_id), self._num_tokens[seq_id]
        if isinstance(position, bool) or not isinstance(position, (int, np.integer)):
            raise ValueError(f"position must be an int, got {position!r}")
        if not 0 <= position < n:
            raise ValueError(f"position {position!r} out of range for {seq_id!r} with {n} tokens")
        return table[position // self.block_size] * self.block_size + position % self.block_size

    def slot_mapping(self, seq_id) -> list[int]:
        """`slot(seq_id, p)` for every position p of the sequence."""
        return [self.slot(seq_id, p) for p in range(self.num_tokens(seq_id))]

    # ---- check-then-act pairs ------------------------------------------------------------
    def can_allocate(self, num_tokens: int) -> bool:
        n = require_int("num_tokens", num_tokens, at_least=0)
        return num_blocks_for(n, self.block_size) <= self.num_free_blocks

    def allocate(self, seq_id, num_tokens: int) -> list[int]:
        """Create `seq_id` holding `num_tokens` tokens; return its block table."""
        n = require_int("num_tokens", num_tokens, at_least=0)
        if seq_id in self._tables:
            raise ValueError(f"seq_id {seq_id!r} already allocated")
        needed = num_blocks_for(n, self.block_size)
        self._ensure_free(needed, f"allocate {n} tokens for {seq_id!r}")
        self._tables[seq_id], self._num_tokens[seq_id] = [], 0
        self._extend(seq_id, n)
        return list(self._tables[seq_id])

    def blocks_needed_to_append(self, seq_id, num_tokens: int = 1) -> int:
        """New physical blocks `append(seq_id, num_tokens)` would take (copy-on-write included)."""
        k = require_int("num_tokens", num_tokens, at_least=0)
        table, n = self._table(seq_id), self._num_tokens[seq_id]
        if k == 0:
            return 0
        room = -n % self.block_size  # empty slots in the last block
        if k <= room and self._ref_counts[table[-1]] == 1:  # the common decode step
            return 0
        cow = n % self.block_size != 0 and self._ref_counts[table[-1]] > 1
        return num_blocks_for(n + k, self.block_size) - len(table) + cow

    def can_append(self, seq_id, num_tokens: int = 1) -> bool:
        return self.blocks_needed_to_append(seq_id, num_tokens) <= self.num_free_blocks

    def append(self, seq_id, num_tokens: int = 1) -> list[tuple[int, int]]:
        """Grow `seq_id` by `num_tokens`; return `(src_block, dst_block)` copies to perform.

        A new block is taken only when the last one is full. If the last block is partly filled
        and shared (ref count > 1), this sequence gets a private copy first (copy-on-write);
        full shared blocks are never written again, so they stay shared.
        """
        needed = self.blocks_needed_to_append(seq_id, num_tokens)
        self._ensure_free(needed, f"append {num_tokens} tokens to {seq_id!r}")
        return self._extend(seq_id, num_tokens)

    def _extend(self, seq_id, num_tokens: int) -> list[tuple[int, int]]:
        """Give `seq_id` `num_tokens` more slots, the free blocks counted already; the blocks to
        copy (a learner's engine does it one token at a time: `paged.learner`)."""
        table, n = self._tables[seq_id], self._num_tokens[seq_id]
        if num_tokens == 0 or (
            num_tokens <= -n % self.block_size and self._ref_counts[table[-1]] == 1
        ):
            self._num_tokens[seq_id] = n + num_tokens  # fits the private last block
            return []
        copies = []
        if num_tokens and n % self.block_size and self._ref_counts[table[-1]] > 1:
            src, dst = table[-1], self._take()
            self._ref_counts[src] -= 1
            table[-1] = dst
            copies.append((src, dst))
        while len(table) < num_blocks_for(n + num_tokens, self.block_size):
            table.append(self._take())
        self._num_tokens[seq_id] = n + num_tokens
        return copies

    def fork(self, parent_id, child_id) -> None:
        """Make `child_id` a sequence sharing every block of `parent_id`."""
        parent = self._table(parent_id)
        if child_id in self._tables:
            raise ValueError(f"child_id {child_id!r} already allocated")
        for block_id in parent:
            self._ref_counts[block_id] += 1
        self._tables[child_id] = list(parent)
        self._num_tokens[child_id] = self._num_tokens[parent_id]

    def reserve(self, block_id: int) -> None:
        """Take a free block out of circulation for good (vLLM's null block, block 0)."""
        if self.ref_count(block_id) or block_id not in self.free_block_ids:
            raise ValueError(f"block {block_id!r} is not free: it cannot be reserved")
        self.free_block_ids.remove(block_id)
        self._ref_counts[block_id] = 1

    def free(self, seq_id) -> None:
        """Drop `seq_id`; blocks no other sequence holds go back to the free list."""
        table = self._table(seq_id)
        for block_id in table if self.free_to_front else reversed(table):
            self._ref_counts[block_id] -= 1
            if self._ref_counts[block_id] == 0:
                if self.free_to_front:
                    self.free_block_ids.appendleft(block_id)
                else:
                    self.free_block_ids.append(block_id)
        del self._tables[seq_id], self._num_tokens[seq_id]

    # ---- internals -----------------------------------------------------------------------
    def _table(self, seq_id) -> list[int]:
        try:
            return self._tables[seq_id]
        except KeyError:
            raise UnknownSequence(f"unknown seq_id {seq_id!r}") from None

    def _ensure_free(self, needed: int, what: str) -> None:
        if needed > self.num_free_blocks:
            raise OutOfBlocks(
                f"cannot {what}: needs {needed} free blocks, {self.num_free_blocks} free"
            )

    def _take(self) -> int:
        block_id = self.free_block_ids.popleft()
        self._ref_counts[block_id] = 1
        return block_id

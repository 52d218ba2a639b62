"""Model answers for the prefix-caching exercises (chapter 12), one function per exercise.

Each uses only its arguments and builtins, so its source runs as typed into the chapter.
"""

from __future__ import annotations

__all__ = ["computed_blocks", "free_blocks", "take_blocks"]


def free_blocks(free_queue, block_table, ref_counts, hashed):
    """Last block first; blocks nobody else holds: uncached to the front, cached to the tail."""
    front, tail = [], []
    for block in reversed(block_table):  # the first block, the most shared prefix, goes last
        if ref_counts[block] == 1:  # this request was its only holder
            (tail if block in hashed else front).append(block)
    return front + list(free_queue) + tail


def take_blocks(free_queue, n, block_hash):
    """The first n blocks of the queue; each cached one gives up its hash."""
    if n > len(free_queue):
        raise ValueError(f"cannot take {n} blocks: {len(free_queue)} free")
    taken = free_queue[:n]
    evicted = [block_hash[block] for block in taken if block in block_hash]
    return taken, evicted


def computed_blocks(hashes, num_tokens, block_size, cached):
    """Walk the chain until the first miss, over the full blocks before the last token."""
    hits = []
    for h in hashes[: (num_tokens - 1) // block_size]:  # the last token is always computed
        if h not in cached:
            break  # after a miss the request computes the rest anyway
        hits.append(cached[h])
    return hits

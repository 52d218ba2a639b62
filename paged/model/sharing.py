"""A shared system prompt held once: prefix sharing with reference counts and copy-on-write (§4.4).

Chat requests that use the same system prompt start with the same tokens, so their K and V for
those tokens are the same too. `generate_shared` prefills that common prefix once, then forks it
into every request (`PagedAllocator.fork`: each full block of the prefix gains a reference, none
is copied). When a request appends its own tokens, the prefix's partly filled last block is
copied on write (`PagedAllocator.append` returns the copy, `KVPool.copy_blocks` performs it);
full blocks are never written again, so they stay shared until every holder is gone.

It answers one question with real tokens: how many blocks does sharing save on these prompts,
and are the answers the same? The paper's metric (§6.3) is "the number of blocks we saved by
sharing divided by the number of total blocks without sharing", here summed over the prefill
and every decode step (MEASURED on the real prompts; the block counts do not depend on the
machine). All requests run together in a pool large enough for them, so there is no admission
or preemption here: those are `generate`'s, through `paged.scheduler`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import require_int
from ..paging import PagedAllocator, num_blocks_for
from .attention import select_attention
from .backend import is_done
from .cache import Chunk, KVPool, run_chunks
from .generate import checked_prompt_ids
from .llama import Llama

PREFIX = "prefix"  # the allocator's name for the shared prompt's own sequence


@dataclass(frozen=True)
class SharingResult:
    """The answers, and the blocks they held with and without sharing the common prefix."""

    tokens: list[list[int]]
    texts: list[str]
    prefix_len: int  # tokens all prompts start with (capped so each keeps one of its own)
    shared_full_blocks: int  # full blocks of the prefix, held once by every request
    copies: int  # copy-on-write block copies (the prefix's partly filled last block)
    blocks_after_prefill: tuple[int, int]  # (with sharing, without)
    peak_blocks: tuple[int, int]  # (with sharing, without): most blocks held at once
    block_steps: tuple[int, int]  # (with sharing, without): blocks held, summed over steps

    @property
    def saved(self) -> float:
        """§6.3's metric: blocks saved by sharing / blocks without sharing (over all steps)."""
        shared, private = self.block_steps
        return 1 - shared / private


def common_prefix_len(ids: list[list[int]]) -> int:
    """Tokens every list starts with, keeping at least one token of each list its own."""
    n = min(len(p) for p in ids) - 1
    for i in range(n):
        if any(p[i] != ids[0][i] for p in ids):
            return i
    return n


def generate_shared(
    model: Llama,
    prompts: list[str],
    max_new_tokens: int,
    *,
    system: str | None = None,
    block_size: int = 16,
) -> SharingResult:
    """Greedy answers to `prompts`, the common prefix (system prompt) prefilled once and shared."""
    ids = checked_prompt_ids(model, prompts, max_new_tokens, system)
    block_size = require_int("block_size", block_size, at_least=1)
    attention = select_attention(model.device)
    prefix = common_prefix_len(ids)
    eos = model.config.eos_token_id
    # Room for every request at full length without sharing, plus the prefix's own blocks.
    num_blocks = sum(num_blocks_for(len(p) + max_new_tokens, block_size) for p in ids)
    num_blocks += num_blocks_for(prefix, block_size)
    alloc = PagedAllocator(num_blocks, block_size, seed=0)
    pool = KVPool(model, num_blocks * block_size, block_size)

    alloc.allocate(PREFIX, prefix)
    if prefix:
        run_chunks(model, pool, attention, [Chunk(ids[0][:prefix], 0, alloc.block_table(PREFIX))])
    copies = 0
    for i, p in enumerate(ids):
        alloc.fork(PREFIX, i)  # every prefix block gains a reference; nothing is copied
        cow = alloc.append(i, len(p) - prefix)  # the partly filled last block: copied on write
        pool.copy_blocks(cow)
        copies += len(cow)
    alloc.free(PREFIX)  # its blocks stay held by the requests that share them
    chunks = [Chunk(p[prefix:], prefix, alloc.block_table(i)) for i, p in enumerate(ids)]
    sampled = [[t] for t in run_chunks(model, pool, attention, chunks).argmax(-1).tolist()]

    def without_sharing(live) -> int:  # every request holding its own copy of everything
        return sum(num_blocks_for(alloc.num_tokens(i), block_size) for i in live)

    live = [i for i in range(len(ids)) if not is_done(sampled[i], max_new_tokens, eos)]
    after_prefill = (alloc.num_used_blocks, without_sharing(range(len(ids))))
    steps = [after_prefill]
    for i in set(range(len(ids))) - set(live):
        alloc.free(i)
    while live:  # decode: every live request writes its last token and samples the next
        for i in live:
            pool.copy_blocks(alloc.append(i, 1))
        chunks = [Chunk([sampled[i][-1]], alloc.num_tokens(i) - 1, alloc.block_table(i))
                  for i in live]  # fmt: skip
        steps.append((alloc.num_used_blocks, without_sharing(live)))
        next_ids = run_chunks(model, pool, attention, chunks).argmax(-1).tolist()
        for i, t in zip(live, next_ids, strict=True):
            sampled[i].append(t)
        for i in [i for i in live if is_done(sampled[i], max_new_tokens, eos)]:
            alloc.free(i)
            live.remove(i)
    if alloc.num_used_blocks:  # pragma: no cover - a bookkeeping bug, not a user error
        raise AssertionError(f"{alloc.num_used_blocks} blocks leaked")
    return SharingResult(
        tokens=sampled,
        texts=[model.tokenizer.decode(t, skip_special_tokens=True) for t in sampled],
        prefix_len=prefix,
        shared_full_blocks=prefix // block_size,
        copies=copies,
        blocks_after_prefill=after_prefill,
        peak_blocks=(max(s for s, _ in steps), max(p for _, p in steps)),
        block_steps=(sum(s for s, _ in steps), sum(p for _, p in steps)),
    )

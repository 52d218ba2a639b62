"""Chapter 12's experiment: what prefix caching saves on requests that share system prompts.

A loop over `simulate` with and without prefix caching on the same requests. SIMULATED.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import require_int
from ..simulator import simulate
from ..text import msg
from ..workloads import sharegpt_like, with_prompt_ids

# ---- prefix caching: what it saves ----------------------------------------------------------
CACHING_ASSUMPTIONS = msg(
    "{n} ShareGPT-like requests (seed {seed}, {rate} per step), each opening with one of "
    "{systems} system prompts of {system_len} tokens; paged, {kv_slots} KV slots in blocks of "
    "{block_size}, recomputation, the course's rules",
    "ShareGPT 비슷한 요청 {n}개 (시드 {seed}, 단계당 {rate}개), 각각 시스템 프롬프트 {systems}개 "
    "중 하나({system_len} 토큰)로 시작; 페이징, KV 슬롯 {kv_slots}개, 블록 크기 {block_size}, "
    "재계산, 코스의 규칙",
)


@dataclass(frozen=True)
class CachingRun:
    """One side of `caching_savings`: the same workload served with or without prefix caching
    (SIMULATED)."""

    prefix_caching: bool
    prompt_tokens: int  # every request's prompt, once
    cached_prompt_tokens: int  # found in the cache at each request's first admission
    computed_prompt_tokens: int  # prefill work: first prefills and recomputations after preemption
    computed_tokens: int  # every token whose K and V were computed, decodes included
    max_batch_size: int
    num_steps: int
    num_preemptions: int
    recached_tokens: int  # found in the cache again by requests resumed after a preemption

    @property
    def first_prefill_tokens(self) -> int:
        """Prompt tokens computed at first admission: the prompt less what the cache held."""
        return self.prompt_tokens - self.cached_prompt_tokens


@dataclass(frozen=True)
class CachingSavings:
    """Prefix caching off and on, same requests, same pool (SIMULATED; `assumptions` says how)."""

    without: CachingRun
    cached: CachingRun
    assumptions: str

    @property
    def runs(self) -> tuple[CachingRun, CachingRun]:
        return (self.without, self.cached)


def caching_savings(
    num_requests: int = 150,
    *,
    num_system_prompts: int = 4,
    system_len: int = 128,
    kv_slots: int = 6144,
    block_size: int = 16,
    rate: float = 2.0,
    seed: int = 0,
) -> CachingSavings:
    """Serve one ShareGPT-like workload twice under the same paged pool, without and with
    automatic prefix caching (`prefix_caching=True`, `paged.block_pool`): prompt tokens computed
    and cached, peak running batch, steps and preemptions of each. Request i opens with system
    prompt i % `num_system_prompts` (its first `system_len` tokens; `with_prompt_ids`), then
    tokens of its own that no other request shares. SIMULATED: lengths drawn, nothing run; the
    course's rules (decodes sample, so a request decodes `output_len` tokens)."""
    num_requests = require_int("num_requests", num_requests, at_least=1)
    num_system_prompts = require_int("num_system_prompts", num_system_prompts, at_least=1)
    system_len = require_int("system_len", system_len, at_least=0)
    requests = with_prompt_ids(
        sharegpt_like(num_requests, seed=seed, rate=rate),
        num_system_prompts=num_system_prompts,
        system_len=system_len,
        seed=seed,
    )
    prompt = sum(r.prompt_len for r in requests)
    decoded = sum(r.output_len for r in requests)  # one token per decode step, course's rules
    runs = []
    for caching in (False, True):
        r = simulate(
            requests, "paged", kv_slots=kv_slots, block_size=block_size, prefix_caching=caching
        )
        runs.append(
            CachingRun(
                caching,
                prompt,
                r.cached_prompt_tokens,
                r.computed_tokens - decoded,
                r.computed_tokens,
                r.max_batch_size,
                r.num_steps,
                r.num_preemptions,
                r.recached_tokens,
            )
        )
    assumptions = CACHING_ASSUMPTIONS.format(
        n=num_requests,
        seed=seed,
        rate=rate,
        systems=num_system_prompts,
        system_len=system_len,
        kv_slots=kv_slots,
        block_size=block_size,
    )
    return CachingSavings(*runs, assumptions)
